"""``stack update --converge`` (Heat's ``converge`` flag): before the update, each resource's plug-in
says what its resource really is now (``get_live_state``); where that differs from what the stack
applied, the stored properties become the live ones, so the update that follows finds the drift and
puts it right (in place, or by a replacement when the property cannot change in place) even when
the template and parameters are unchanged.  Heat does the same (``observe_on_update``): it merges
the live state into the properties it compares.  Resources not ``COMPLETE`` need nothing here: a
failed one is replaced, one never created is created, as on every update."""

from __future__ import annotations

import logging
from typing import Any

from stoker.errors import StokerError

LOG = logging.getLogger(__name__)


def observe(store: Any, resources: dict[str, Any]) -> list[str]:
    """Store the live state of every ``COMPLETE`` resource that drifted; returns their names."""
    drifted = []
    for name, resource in sorted(resources.items()):
        if resource.status != "COMPLETE" or resource.action in ("INIT", "DELETE"):
            continue
        applied = dict(resource.properties_data or {})
        try:
            live = resource.get_live_state(dict(applied))
        except StokerError as exc:  # as Heat: an observation that fails leaves the resource as stored
            LOG.warning("could not observe the live state of %s: %s", name, exc)
            continue
        if not isinstance(live, dict):
            continue
        observed = {**applied, **{key: value for key, value in live.items() if key in applied}}
        if observed != applied:
            resource.properties_data = observed
            store.update_resource(resource.id, properties_data=observed)
            drifted.append(name)
    return drifted
