"""Group updates and batched creates on real ``stoker worker`` processes: each batch a nested action
the group polls, the pause between two batches parked, so a one-slot worker serves another stack
meanwhile; every member made or replaced exactly once, even when a worker is lost mid-update."""

from __future__ import annotations

from collections import Counter

from deadlines import edit_resources, pause_over

from .test_cancel import rows, wait_for
from .test_nested_park import event_ids
from .test_workers import creates, log_lines

#: seconds between two batches: more than enough for the other stack's create, on a loaded machine
PAUSE = 15
OTHER = {"heat_template_version": "2018-08-31", "resources": {"first": {"type": "OS::Heat::TestResource"}}}


def member_events(cluster, stack_id: str, action: str, status: str) -> list:
    """(event id, member name) of the group's members (the resources of the stack's nested stack)."""
    return rows(cluster, "SELECT e.id, e.resource_name FROM event AS e JOIN stack AS s ON e.stack_id = s.id "
                         "WHERE s.parent_id = :top AND e.action = :action AND e.status = :status "
                         "AND e.resource_name != s.name ORDER BY e.id", top=stack_id, action=action, status=status)


def scaling_group(log, value: str, pause: float, size: int = 2, hold: float = 0) -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::AutoScalingGroup",
        "properties": {"min_size": size, "max_size": size,
                       "resource": {"type": "Test::Recorded",
                                    "properties": {"log": str(log), "value": value, "hold": hold}},
                       "rolling_updates": {"max_batch_size": 1, "pause_time": pause}}}},
        "outputs": {"values": {"value": {"get_attr": ["group", "outputs_list", "value"]}}}}


def outputs(cluster, name: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in cluster.engine.outputs(name)}


def test_a_scaling_group_rolling_pause_leaves_the_only_worker_slot_to_another_stack(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("scaled", scaling_group(log, "a", PAUSE))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    members = set(creates(log))
    nested, = cluster.engine.store.children(started["id"])
    cluster.engine.update_stack("scaled", scaling_group(log, "b", PAUSE))
    wait_for(lambda: event_ids(cluster, nested.id, "UPDATE_COMPLETE"), "the first batch's end")

    other = cluster.engine.create_stack("other", OTHER)
    assert cluster.settle(other["id"])["stack_status"] == "CREATE_COMPLETE"
    edit_resources(cluster.engine.store.engine, pause_over, "group")  # the rest of the pause proves nothing
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    # the other stack was created in the pause between the two batches, on the one slot there is
    other_done, = event_ids(cluster, other["id"], "CREATE_COMPLETE")
    first_end = event_ids(cluster, nested.id, "UPDATE_COMPLETE")[0]
    second_start = event_ids(cluster, nested.id, "UPDATE_IN_PROGRESS")[1]
    assert first_end < other_done < second_start
    # each member replaced once (a new one made under its name, the old one deleted), none added
    assert creates(log) == {name: 2 for name in members}
    assert Counter(f[1] for f in log_lines(log) if f[0] == "delete") == {name: 1 for name in members}
    assert outputs(cluster, "scaled") == {"values": ["b", "b"]}
    metadata = rows(cluster, "SELECT rsrc_metadata FROM resource WHERE name = 'group'")[0][0]
    assert "ExactCapacity : 2" in str(metadata)


def batched_group(log, pause: float) -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 2, "resource_def": {"type": "Test::Recorded",
                                                     "properties": {"log": str(log), "value": "v-%index%"}}},
        "update_policy": {"batch_create": {"max_batch_size": 1, "pause_time": pause}}}},
        "outputs": {"values": {"value": {"get_attr": ["group", "value"]}}}}


def test_a_batch_create_pause_leaves_the_only_worker_slot_to_another_stack(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("batched", batched_group(log, PAUSE))
    wait_for(lambda: member_events(cluster, started["id"], "CREATE", "COMPLETE"), "the first batch's end")

    other = cluster.engine.create_stack("other", OTHER)
    assert cluster.settle(other["id"])["stack_status"] == "CREATE_COMPLETE"
    edit_resources(cluster.engine.store.engine, pause_over, "group")  # the rest of the pause proves nothing
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    other_done, = event_ids(cluster, other["id"], "CREATE_COMPLETE")
    (first, first_name), (second, second_name) = member_events(cluster, started["id"], "CREATE", "COMPLETE")
    assert (first_name, second_name) == ("0", "1")
    assert first < other_done < second
    assert creates(log) == {"0": 1, "1": 1}
    assert outputs(cluster, "batched") == {"values": ["v-0", "v-1"]}


def test_a_worker_lost_mid_rolling_update_leaves_it_to_go_on_and_replaces_each_member_once(cluster, tmp_path):
    workers = {worker.pid: worker for worker in (cluster.start_worker(), cluster.start_worker())}
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("scaled", scaling_group(log, "a", 1, size=3))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    members = set(creates(log))
    made = len(log_lines(log))
    cluster.engine.update_stack("scaled", scaling_group(log, "b", 1, size=3, hold=1.5))
    wait_for(lambda: len(log_lines(log)) > made, "the first replacement's create")
    doomed = workers.pop(int(log_lines(log)[made][3]))
    cluster.kill(doomed)  # inside the replacement's create: its id stored, the hold not over

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
    assert creates(log) == {name: 2 for name in members}
    assert Counter(f[1] for f in log_lines(log) if f[0] == "delete") == {name: 1 for name in members}
    assert outputs(cluster, "scaled") == {"values": ["b", "b", "b"]}
    survivor, = workers.values()
    assert survivor.poll() is None
