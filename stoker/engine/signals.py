"""Signals to resources (``POST .../resources/NAME/signal``, ``stoker stack resource signal``).

Two kinds of ``handle_signal``:

- one that only records the signal (a wait condition handle's) works while
  another process runs the stack's action: the signal is written to the
  resource's stored data, where the waiting side polls; a write that raced
  with another writer is retried on fresh data;
- one that acts (``async``: a scaling policy resizing its group) runs under
  the stack's lock; while another action holds the lock the signal is ignored,
  as Heat ignores a signal to a group that is not COMPLETE.  The dispatch
  decides where it runs (``dispatch.signal``): here, to its end, the lock kept
  fresh meanwhile (``act``); with workers, the request is answered at once and
  a traversal of one node acts on the workers (``dispatch.step.step_signal``).

Either way a signal that did something gets Heat's ``SIGNAL`` event; one whose
handler raised ``NoActionRequired`` (a group cooling down) gets none.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from stoker.engine.sealing import stored_resource_fields
from stoker.errors import Conflict, NotFound, StaleWrite, StokerError
from stoker.resources.exceptions import NoActionRequired, NotSupported

LOG = logging.getLogger("stoker.engine")
#: how often a write that raced with another writer is tried again
ATTEMPTS = 20


def signal(engine: Any, name_or_id: str, resource_name: str, details: Any = None) -> None:
    """``Engine.signal``: send ``details`` to a resource's ``handle_signal`` (wait condition
    handles, scaling policies), or clear a hook (``{"unset_hook": ...}``)."""
    if isinstance(details, dict) and "unset_hook" in details:
        engine.clear_hook(name_or_id, resource_name, details["unset_hook"])
        return
    record = engine.get_record(name_or_id)
    stack = engine.runtime(record)
    handler = _handler(stack, resource_name)
    resource = stack.resources[resource_name]
    if resource.action in resource.NO_SIGNAL_ACTIONS:  # as Heat: refused, and said in an event
        _add_event(engine, record, resource, resource.action, f"Cannot signal resource during {resource.action}")
        raise NotSupported(feature=f"Signal resource during {resource.action}")
    if asyncio.iscoroutinefunction(handler):
        engine.dispatch.signal(engine, record, resource_name, details)
    else:
        _record(engine, record, stack, resource_name, details)


def _handler(stack: Any, resource_name: str) -> Any:
    resource = stack.resources.get(resource_name)
    if resource is None:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {stack.name}.")
    handler = getattr(resource, "handle_signal", None)
    if handler is None:
        raise Conflict(f"The resource {resource_name} ({resource.type()}) does not accept signals")
    return handler


def _record(engine: Any, record: Any, stack: Any, resource_name: str, details: Any) -> None:
    for attempt in range(ATTEMPTS):
        stack = engine.runtime(record) if attempt else stack
        resource = stack.resources[resource_name]
        seen = next(r.atomic_key for r in engine.store.get_resources(record.id) if r.id == resource.id)
        said = resource.handle_signal(details)
        fields = {"data": dict(resource._data)}
        if resource.resource_id is not None:
            fields["physical_resource_id"] = str(resource.resource_id)
        try:
            engine.store.update_resource(resource.id, expected_atomic_key=seen,
                                         **stored_resource_fields(stack, fields))
        except StaleWrite:
            continue
        except NotFound:  # the signal ended the resource's DELETE, which removed it meanwhile: it took effect
            LOG.info("signal to %s ended its delete: %s", resource_name, said)
            return
        _event(engine, record, resource, details, said)
        return
    raise Conflict(f"Resource {resource_name} kept changing while the signal was written; try again")


def act(engine: Any, record: Any, resource_name: str, details: Any) -> None:
    """An acting handler run here, to its end, under the stack's lock (ignored while another holds it)."""
    try:
        engine.store.acquire_lock(record.id, engine.engine_id, "SIGNAL")
    except Conflict as busy:
        LOG.info("signal to %s ignored: %s", resource_name, busy)
        return
    try:
        stack = engine.runtime(record)
        resource = stack.resources[resource_name]
        outcome: dict = {}
        engine.run(_acting(engine, stack, resource, details, outcome))
    finally:
        engine.store.release_lock(record.id, engine.engine_id)
    if "ignored" in outcome:
        LOG.info("signal to %s ignored: %s", resource_name, outcome["ignored"])
    else:
        _event(engine, record, resource, details, outcome.get("said"))


async def _acting(engine: Any, stack: Any, resource: Any, details: Any, outcome: dict) -> None:
    """The handler, with the watcher an action has: the lock kept fresh, a cancel heard."""
    task = asyncio.ensure_future(resource.handle_signal(details))
    watcher = asyncio.ensure_future(engine.watch(stack, task))
    try:
        outcome["said"] = await task
        refresh_metadata(stack, resource.name)
    except NoActionRequired as exc:
        outcome["ignored"] = str(exc)
    except asyncio.CancelledError:
        raise Conflict(stack.cancel_reason or "the signal was cancelled") from None
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await stack.recorder.flush()


def refresh_metadata(stack: Any, signalled: str) -> None:
    """As Heat once a signal acted: the provider-template resources resolve their template metadata
    again, as it may read what the signal changed (a scaled group's ``InstanceList``).  Here and on
    the workers (``dispatch.step.step_signal``); each changed resource is stored with the signal's end."""
    for other in stack.resources.values():
        if other.name == signalled or other.action == other.INIT or not other.t.metadata:
            continue
        if getattr(other, "template_name", None) is None:
            continue  # Heat's other types keep the metadata they were given
        try:
            other.metadata_set(other._resolve(other.t.metadata))
        except StokerError as exc:
            LOG.info("metadata of %s not refreshed after the signal: %s", other.name, exc)


def _event(engine: Any, record: Any, resource: Any, details: Any, said: Any) -> None:
    """Heat's ``SIGNAL`` event."""
    _add_event(engine, record, resource, "SIGNAL", reason(details, said))


def _add_event(engine: Any, record: Any, resource: Any, action: str, why: str) -> None:
    engine.store.add_event(record.id, resource_name=resource.name, resource_type=resource.type(),
                           physical_resource_id=None if resource.resource_id is None else str(resource.resource_id),
                           action=action, status=resource.status, reason=why)


def reason(details: Any, said: Any) -> str:
    """The ``SIGNAL`` event's reason: what the handler said, else what the signal carried."""
    return f"Signal: {said}" if isinstance(said, str) and said else describe(details)


def describe(details: Any) -> str:
    """As Heat words a signal its handler said nothing about."""
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, dict) and all(k in details for k in ("previous", "current", "reason")):
        return "alarm state changed from {previous} to {current} ({reason})".format(**details)
    return "Unknown"
