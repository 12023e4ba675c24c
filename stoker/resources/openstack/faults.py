"""Failures a user injects into simulated resources, to test a template's rollback and timeouts.

The inventory's ``faults`` section lists them; each names a resource (``resource``: its name in
the template) or a type (``type``), the action it hits (``action``: create, update or delete;
all three when left out), and what happens: ``fail`` (the reason the action fails with) and/or
``seconds`` (how long the action takes; a failure comes at its end)::

    faults:
      - {resource: server, action: create, fail: "No valid host was found"}
      - {type: OS::Cinder::Volume, action: delete, seconds: 30}

A slow action is polled like any resource's, so it waits without holding anything up, and a
stack timeout or cancel stops it as it would stop a real one.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from stoker.resources.openstack import inventory

ACTIONS = ("create", "update", "delete")
#: the longest an injected wait may be (a day): a typo must not park a stack for a century
MAX_SECONDS = 86_400.0


class InjectedFailure(Exception):
    """The failure a fault entry asked for."""


def matching(resource: Any, action: str) -> dict | None:
    """The first fault entry of the inventory that hits ``resource``'s ``action``."""
    found = inventory.current()
    if found is None:
        return None
    for index, fault in enumerate(found.faults):
        if not isinstance(fault, Mapping):
            raise inventory.InventoryError(f"inventory {found.where}: faults[{index}] must be a map")
        actions = fault.get("action", ACTIONS)
        actions = [actions] if isinstance(actions, str) else actions
        if action not in actions:
            continue
        if fault.get("resource") not in (None, resource.name) or fault.get("type") not in (None, resource.heat_type):
            continue
        if fault.get("resource") is None and fault.get("type") is None:
            continue  # an entry naming nothing hits nothing
        return dict(fault, where=f"inventory {found.where}: faults[{index}]")
    return None


def begin(resource: Any, action: str) -> dict | None:
    """Start ``action``: fail now, or return the token of a wait (None: nothing injected)."""
    fault = matching(resource, action)
    if fault is None:
        return None
    seconds = _seconds(fault)
    if not seconds:
        _fail_if_asked(fault)
        return None
    return {"until": time.time() + seconds, "fail": fault.get("fail"), "where": fault["where"]}


def done(token: Any) -> bool:
    """Has the injected wait of ``token`` passed?  At its end, fail if the fault asks to."""
    if not token:
        return True
    if time.time() < float(token["until"]):
        return False
    _fail_if_asked(token)
    return True


def remaining(token: Any) -> float | None:
    """Seconds until the injected wait ends (the poll's next moment)."""
    if not token:
        return None
    return max(0.0, float(token["until"]) - time.time())


def _seconds(fault: Mapping) -> float:
    value = fault.get("seconds", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        raise inventory.InventoryError(f"{fault['where']}: seconds must be a number from 0 to {MAX_SECONDS:g}")
    return float(value)


def _fail_if_asked(fault: Mapping) -> None:
    reason = fault.get("fail")
    if reason is not None and reason is not False:
        raise InjectedFailure(str(reason) if reason is not True else "injected failure")
