"""Events: order, filtering, paging, bulk."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from stoker.errors import NotFound


def record(store, stack, *names):
    return [
        store.add_event(
            stack.id,
            resource_name=name,
            physical_resource_id=f"p-{name}",
            resource_type="OS::Heat::None",
            action="CREATE",
            status=status,
            reason="state changed",
            properties={"value": name} if status == "IN_PROGRESS" else None,
        )
        for name in names
        for status in ("IN_PROGRESS", "COMPLETE")
    ]


def test_event_fields(store, stack):
    uuid = store.add_event(stack.id, resource_name="mystack", action="CREATE", status="IN_PROGRESS")
    (event,) = store.list_events(stack.id)
    assert event.uuid == uuid
    assert (event.resource_name, event.action, event.status, event.reason, event.properties) == (
        "mystack", "CREATE", "IN_PROGRESS", "", None
    )
    assert event.created_at.tzinfo is timezone.utc


def test_created_at_keeps_microseconds(store, stack):
    moment = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
    store.add_event(stack.id, action="CREATE", status="COMPLETE", created_at=moment)
    assert store.list_events(stack.id)[0].created_at == moment


def test_order_and_filter(store, stack):
    uuids = record(store, stack, "a", "b", "c")
    events = store.list_events(stack.id)
    assert [e.uuid for e in events] == uuids
    assert [e.properties for e in events[:2]] == [{"value": "a"}, None]
    assert [e.uuid for e in store.list_events(stack.id, sort_dir="desc")] == uuids[::-1]
    assert [(e.resource_name, e.status) for e in store.list_events(stack.id, resource_name="b")] == [
        ("b", "IN_PROGRESS"), ("b", "COMPLETE")
    ]
    assert store.list_events("other-stack") == []


@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_paging(store, stack, direction):
    uuids = record(store, stack, "a", "b", "c", "d")
    expected = uuids if direction == "asc" else uuids[::-1]
    pages, marker = [], None
    while page := store.list_events(stack.id, sort_dir=direction, limit=3, marker=marker):
        pages.append([e.uuid for e in page])
        marker = page[-1].uuid
    assert [len(p) for p in pages] == [3, 3, 2]
    assert [u for p in pages for u in p] == expected
    with pytest.raises(NotFound):
        store.list_events(stack.id, marker="missing")


def test_bulk_events(store, stack):
    rows = [
        {"stack_id": stack.id, "resource_name": f"r{i}", "action": "CREATE", "status": "COMPLETE", "reason": "ok"}
        for i in range(10_000)
    ]
    store.add_events_bulk(rows)  # how fast: bench/scale.py (no clock in tests)
    events = store.list_events(stack.id)
    assert [e.resource_name for e in events[:3]] == ["r0", "r1", "r2"]
    assert len({e.uuid for e in events}) == 10_000
