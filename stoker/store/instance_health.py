"""The two flags Cloudify 7 keeps beside a node instance's ``system_properties``, read from them whenever
they are written (as its ``NodeInstance.update_status_check`` / ``update_configuration_drift``), so the
deployments' and nodes' ``unavailable_instances`` / ``drifted_instances`` are counts of rows; and the records
an instance's state implies while it holds none.

Cloudify's manager records a passed drift check when an instance reaches ``configured`` and a passed status
check when it reaches ``started``.  Until an instance holds anything else (a check's result, a mark), Stoker
stores no record but the flag: the state says what the record would (``implied``), with no time, and an
install writes no JSON per instance.
"""

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


#: the states that follow ``configured``, and those that follow ``started``, in a lifecycle
AFTER_CONFIGURED = ("configured", "starting", "started", "stopping", "stopped", "deleting", "deleted")
AFTER_STARTED = ("started", "stopping", "stopped", "deleting", "deleted")


def _passed() -> dict:
    return {"ok": True, "timestamp": None, "task": None, "result": None}


def implied(system_properties: dict | None, state: str) -> dict:
    """What an instance in ``state`` holds: its stored ``system_properties``, or, none stored, the records
    reaching ``configured`` and ``started`` made."""
    if system_properties:
        return system_properties
    records: dict = {}
    if state in AFTER_CONFIGURED:
        records[DRIFTS[0]] = _passed()
    if state in AFTER_STARTED:
        records.update(previous_status=None, status=_passed())
    return records

