"""A nested stack's update, suspend and resume on real ``stoker worker`` processes are traversals of
their own, which the owner resource polls: waiting inside a nested stack never holds a worker slot."""

from __future__ import annotations

import pytest
from deadlines import deadline_passed, edit_resources, pause_over

from .test_cancel import events_of, nested_update_template, nested_values, rows, states, wait_for

#: more than enough for the other stack's create; the update is not waited for to its end
UPDATE_WAIT = 30


def event_ids(cluster, stack_id: str, status: str) -> list:
    """Ids of the stack's own events (its state changes) with ``status`` (e.g. CREATE_COMPLETE)."""
    action, state = status.split("_", 1)
    return [row[0] for row in rows(cluster, "SELECT id FROM event WHERE stack_id = :id AND resource_name = "
                                            "(SELECT name FROM stack WHERE id = :id) AND action = :action "
                                            "AND status = :status ORDER BY id", id=stack_id, action=action,
                                   status=state)]


def resource_event_ids(cluster, name: str, action: str, status: str) -> list:
    return [row[0] for row in rows(cluster, "SELECT id FROM event WHERE resource_name = :name AND action = :action "
                                            "AND status = :status ORDER BY id", name=name, action=action,
                                   status=status)]


def test_a_waiting_nested_update_leaves_the_only_worker_slot_to_another_stack(cluster):
    cluster.start_worker(concurrency=1)
    started = cluster.engine.create_stack("outer", nested_update_template("one", 0))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("outer", nested_update_template("two", UPDATE_WAIT))
    wait_for(lambda: states(cluster)["slow"] == ("UPDATE", "IN_PROGRESS"), "the nested update start")

    other = cluster.engine.create_stack("other", {"heat_template_version": "2018-08-31", "resources": {
        "first": {"type": "OS::Heat::TestResource"},
        "second": {"type": "OS::Heat::TestResource", "depends_on": "first"}}})
    assert cluster.settle(other["id"])["stack_status"] == "CREATE_COMPLETE"
    edit_resources(cluster.engine.store.engine, deadline_passed, "slow")  # the rest of the wait proves nothing
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    # the other stack was created while the nested update waited, on the one slot there is
    other_done, = event_ids(cluster, other["id"], "CREATE_COMPLETE")
    slow_updated, = resource_event_ids(cluster, "slow", "UPDATE", "COMPLETE")
    assert other_done < slow_updated
    assert [action_status[:2] for action_status in events_of(cluster, "inner")][-2:] == [
        ("UPDATE", "IN_PROGRESS"), ("UPDATE", "COMPLETE")]
    assert nested_values(cluster, started["id"]) == ["two"]


def test_a_nested_stack_is_suspended_and_resumed_by_the_workers(cluster):
    cluster.start_worker(), cluster.start_worker()
    started = cluster.engine.create_stack("outer", nested_update_template("one", 0))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    nested, = cluster.engine.store.children(started["id"])

    cluster.engine.suspend_stack("outer")
    assert cluster.settle(started["id"])["stack_status"] == "SUSPEND_COMPLETE"
    record = cluster.engine.store.get_stack(nested.id, nested.project_id)
    assert (record.action, record.status) == ("SUSPEND", "COMPLETE")
    assert states(cluster) == {"inner": ("SUSPEND", "COMPLETE"), "slow": ("SUSPEND", "COMPLETE")}

    cluster.engine.resume_stack("outer")
    assert cluster.settle(started["id"])["stack_status"] == "RESUME_COMPLETE"
    record = cluster.engine.store.get_stack(nested.id, nested.project_id)
    assert (record.action, record.status) == ("RESUME", "COMPLETE")
    assert states(cluster) == {"inner": ("RESUME", "COMPLETE"), "slow": ("RESUME", "COMPLETE")}


def rolling_group(value: str, pause: float) -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 2, "resource_def": {"type": "OS::Heat::TestResource",
                                                     "properties": {"value": f"{value}-%index%"}}},
        "update_policy": {"rolling_update": {"max_batch_size": 1, "pause_time": pause}}}},
        "outputs": {"values": {"value": {"get_attr": ["group", "output"]}}}}


@pytest.mark.slow  # waits out a rolling update's pauses
def test_a_rolling_update_pause_leaves_the_only_worker_slot_to_another_stack(cluster):
    cluster.start_worker(concurrency=1)
    started = cluster.engine.create_stack("rolling", rolling_group("a", UPDATE_WAIT))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("rolling", rolling_group("b", UPDATE_WAIT))
    wait_for(lambda: resource_event_ids(cluster, "0", "UPDATE", "COMPLETE"), "the first batch's end")

    other = cluster.engine.create_stack("other", {"heat_template_version": "2018-08-31", "resources": {
        "first": {"type": "OS::Heat::TestResource"}}})
    assert cluster.settle(other["id"])["stack_status"] == "CREATE_COMPLETE"
    edit_resources(cluster.engine.store.engine, pause_over, "group")  # the rest of the pause proves nothing
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    # the other stack was created in the pause between the two batches, on the one slot there is
    other_done, = event_ids(cluster, other["id"], "CREATE_COMPLETE")
    first, = resource_event_ids(cluster, "0", "UPDATE", "COMPLETE")
    second_start, = resource_event_ids(cluster, "1", "UPDATE", "IN_PROGRESS")
    assert first < other_done < second_start
    assert {o["output_key"]: o["output_value"] for o in cluster.engine.outputs("rolling")} == {"values": ["b-0", "b-1"]}
