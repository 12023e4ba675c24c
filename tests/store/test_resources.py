"""Resources: CRUD, optimistic concurrency, bulk writes."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from stoker.errors import NotFound
from stoker.store import StaleWrite

N = 10_000


def test_add_and_get(store, stack):
    resource_id = store.add_resource(stack.id, name="server", type="OS::Nova::Server", requires=["net"])
    resource = store.get_resource(resource_id)
    assert (resource.name, resource.type, resource.action, resource.status) == (
        "server", "OS::Nova::Server", "INIT", "COMPLETE"
    )
    assert (resource.requires, resource.needed_by, resource.data, resource.atomic_key) == (["net"], [], {}, 0)
    assert resource.physical_resource_id is None
    assert resource.created_at.tzinfo is not None


def test_resource_needs_a_stack(store):
    with pytest.raises(IntegrityError):
        store.add_resource("no-such-stack", name="x", type="T")


def test_update_bumps_atomic_key(store, stack):
    resource_id = store.add_resource(stack.id, name="server", type="T")
    before = store.get_resource(resource_id)
    assert store.update_resource(resource_id, action="CREATE", status="IN_PROGRESS", engine_id="e1") == 1
    key = store.update_resource(
        resource_id,
        expected_atomic_key=1,
        status="COMPLETE",
        physical_resource_id="abc",
        properties_data={"flavor": "m1.small"},
        attributes_data={"first_address": "10.0.0.1"},
        data={"password": "x"},
    )
    assert key == 2
    after = store.get_resource(resource_id)
    assert (after.action, after.status, after.physical_resource_id, after.atomic_key) == ("CREATE", "COMPLETE", "abc", 2)
    assert after.properties_data == {"flavor": "m1.small"} and after.data == {"password": "x"}
    assert after.updated_at >= before.updated_at


def test_stale_write_is_detected(store, stack):
    resource_id = store.add_resource(stack.id, name="server", type="T")
    seen = store.get_resource(resource_id).atomic_key
    store.update_resource(resource_id, expected_atomic_key=seen, status="FAILED")
    with pytest.raises(StaleWrite, match="atomic_key 1, expected 0"):
        store.update_resource(resource_id, expected_atomic_key=seen, status="COMPLETE")
    assert store.get_resource(resource_id).status == "FAILED"
    with pytest.raises(NotFound):
        store.update_resource(999999, expected_atomic_key=0, status="COMPLETE")
    with pytest.raises(NotFound):
        store.update_resource(999999, status="COMPLETE")


def test_replacement_rows_coexist(store, stack):
    old = store.add_resource(stack.id, name="server", type="T", action="CREATE", status="COMPLETE")
    new = store.add_resource(stack.id, name="server", type="T", replaces=old)
    store.update_resource(old, replaced_by=new)
    rows = store.get_resources(stack.id)
    assert [(r.id, r.replaces, r.replaced_by) for r in rows] == [(old, None, new), (new, old, None)]


def test_delete(store, stack):
    resource_id = store.add_resource(stack.id, name="server", type="T")
    store.delete_resource(resource_id)
    assert store.get_resources(stack.id) == []
    with pytest.raises(NotFound):
        store.get_resource(resource_id)
    with pytest.raises(NotFound):
        store.delete_resource(resource_id)


def test_unknown_field_is_refused(store, stack):
    with pytest.raises(TypeError, match="colour"):
        store.add_resource(stack.id, name="x", type="T", colour="blue")
    with pytest.raises(TypeError, match="colour"):
        store.write_batch([(1, {"colour": "blue"})], [])


def test_bulk_rows_of_different_shapes_keep_their_order(store, stack):
    rows = [
        {"stack_id": stack.id, "name": "a", "type": "T"},
        {"stack_id": stack.id, "name": "b", "type": "T", "status": "FAILED"},
        {"stack_id": stack.id, "name": "c", "type": "T"},
    ]
    ids = store.add_resources_bulk(rows)
    by_id = {r.id: r for r in store.get_resources(stack.id)}
    assert [by_id[i].name for i in ids] == ["a", "b", "c"]
    assert by_id[ids[1]].status == "FAILED"
    store.write_batch([(ids[0], {"status": "X"}), (ids[2], {"action": "Y"}), (ids[1], {"status": "Z"})], [])
    by_id = {r.id: r for r in store.get_resources(stack.id)}
    assert [(by_id[i].action, by_id[i].status, by_id[i].atomic_key) for i in ids] == [
        ("INIT", "X", 1), ("INIT", "Z", 1), ("Y", "COMPLETE", 1)
    ]


def test_bulk_ten_thousand_resources(store, stack, statements):
    rows = [
        {
            "stack_id": stack.id,
            "name": f"r{i}",
            "type": "OS::Heat::RandomString",
            "properties_data": {"length": 32},
            "requires": [f"r{i - 1}"] if i else [],
        }
        for i in range(N)
    ]
    with statements() as inserting:
        ids = store.add_resources_bulk(rows)
    with statements() as updating:
        for action, status in [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]:
            store.write_batch(
                [(i, {"action": action, "status": status, "physical_resource_id": f"p{i}",
                      "attributes_data": {"value": "x"}}) for i in ids], [])
    resources = store.get_resources(stack.id)

    # bulk: a few executemany round trips for ten thousand rows, not one per row
    assert 1 <= inserting.count("INSERT") <= 20, inserting
    assert 2 <= updating.count("UPDATE") <= 40, updating
    assert len(resources) == N and len(set(ids)) == N
    assert {(r.action, r.status, r.atomic_key) for r in resources} == {("CREATE", "COMPLETE", 2)}
    assert resources[17].physical_resource_id == f"p{ids[17]}" and resources[17].requires == ["r16"]


def test_empty_bulk_calls_do_nothing(store, stack):
    assert store.add_resources_bulk([]) == []
    store.write_batch([], [])
    store.add_events_bulk([])
    assert store.get_resources(stack.id) == [] and store.list_events(stack.id) == []
