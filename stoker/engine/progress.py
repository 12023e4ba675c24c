"""Events handed to whoever watches an action in this process, as they are committed.

A display that follows an action run by its own process needs no polling:
the writer publishes each committed batch of events here, in order.  A
listener that raises is dropped (a broken display must not stop an action).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

#: ``listener(root_stack_id, events)``: events in the shape ``Engine.events()`` lists them
Listener = Callable[[str, list], None]


class Progress:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    @contextmanager
    def subscribe(self, listener: Listener) -> Iterator[None]:
        self._listeners.append(listener)
        try:
            yield
        finally:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def publish(self, root_stack_id: str, events: list[dict]) -> None:
        """Hand committed events (as the writer stores them) to every listener."""
        if not self._listeners or not events:
            return
        rows = [_row(event) for event in events]
        for listener in list(self._listeners):
            try:
                listener(root_stack_id, rows)
            except Exception:  # noqa: BLE001 - the display failed; the action goes on
                self._listeners.remove(listener)


def _row(event: dict) -> dict:
    created = event.get("created_at")
    return {
        "id": event["uuid"],
        "stack_id": event["stack_id"],
        "resource_name": event["resource_name"],
        "resource_type": event["resource_type"],
        "physical_resource_id": event.get("physical_resource_id") or "",
        "resource_status": f"{event['action']}_{event['status']}",
        "resource_status_reason": event.get("reason") or "",
        "event_time": created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else None,
    }
