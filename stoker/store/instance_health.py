"""The two flags Cloudify 7 keeps beside a node instance's ``system_properties``, read from them whenever
they are written (as its ``NodeInstance.update_status_check`` / ``update_configuration_drift``), so the
deployments' and nodes' ``unavailable_instances`` / ``drifted_instances`` are counts of rows."""

from __future__ import annotations

from itertools import chain

#: where check_drift results are kept: the instance's own, and per relationship, either side's
DRIFTS = ("configuration_drift", "source_relationships_configuration_drift",
          "target_relationships_configuration_drift")


def flags(system_properties: dict | None) -> dict:
    """``is_status_check_ok``: the last status check passed (none yet: not ok); ``has_configuration_drift``:
    a drift check of the instance or of one of its relationships failed or found something (any result
    but None)."""
    props = system_properties or {}
    drifts = chain([props.get(DRIFTS[0]) or {}], (props.get(DRIFTS[1]) or {}).values(),
                   (props.get(DRIFTS[2]) or {}).values())
    drifted = any(not (d or {}).get("ok", True) or (d or {}).get("result") is not None for d in drifts)
    return {"is_status_check_ok": bool((props.get("status") or {}).get("ok", False)),
            "has_configuration_drift": drifted}
