"""Signals whose handler acts (a scaling policy resizing its group) on real ``stoker worker``
processes (RabbitMQ, PostgreSQL): the process that takes the signal answers at once, the resize
runs on the workers (its nested update polled, no worker slot held meanwhile), and its end is
Heat's ``SIGNAL`` event on the policy and the group's cooldown metadata; the stack's own state is
left alone.  A worker lost at any moment of it makes no member twice and no second event."""

from __future__ import annotations

import json
import os

import pytest

from stoker.template.template import Template

from .conftest import api_of, created_through
from .test_cancel import rows, wait_for
from .test_nested_faults import settled_after_loss, traversals
from .test_workers import creates, log_lines

ALARM = {"previous": "ok", "current": "alarm", "reason": "cpu high"}
ALARM_TEXT = "alarm state changed from ok to alarm (cpu high)"


def scaling_template(member: dict, size: int = 1, up_cooldown: int = 600) -> dict:
    """A group of ``size`` (1..3) ``member``s, a policy adding one (``up``), one removing one (``down``)."""
    def policy(adjustment: int, cooldown: int) -> dict:
        return {"type": "OS::Heat::ScalingPolicy",
                "properties": {"auto_scaling_group_id": {"get_resource": "group"}, "cooldown": cooldown,
                               "adjustment_type": "change_in_capacity", "scaling_adjustment": adjustment}}
    return {"heat_template_version": "2018-08-31", "resources": {
        "group": {"type": "OS::Heat::AutoScalingGroup",
                  "properties": {"min_size": 1, "max_size": 3, "desired_capacity": size, "resource": member}},
        "up": policy(1, up_cooldown), "down": policy(-1, 0)}}


def recorded(log, hold: float = 0) -> dict:
    return {"type": "Test::Recorded", "properties": {"log": str(log), "hold": hold}}


def created(cluster, log, size: int = 1, **options) -> str:
    """The scaling stack, created on the workers; its id."""
    started = cluster.engine.create_stack("scaled", scaling_template(recorded(log, **options), size))
    return created_and_released(cluster, started["id"])


def created_and_released(cluster, stack_id: str) -> str:
    """``stack_id`` once CREATE_COMPLETE and unlocked (the create's traversal frees the lock just
    after it writes the status): the state a signal must leave as it was."""
    assert cluster.settle(stack_id)["stack_status"] == "CREATE_COMPLETE"
    wait_for(lambda: cluster.engine.get_record(stack_id).lock_owner is None, "the create's lock released")
    return stack_id


def signal_events(cluster, policy: str = "up") -> list:
    return [reason for (reason,) in rows(cluster, "SELECT reason FROM event WHERE resource_name = :name AND "
                                                  "action = 'SIGNAL' ORDER BY id", name=policy)]


def signal_traversals(cluster) -> list:
    return [status for (status,) in rows(cluster, "SELECT status FROM dispatch_traversal WHERE action = 'SIGNAL'")]


def signals_ended(cluster, count: int) -> None:
    """Wait until ``count`` signals' traversals were marked ended (their last step)."""
    wait_for(lambda: signal_traversals(cluster) == ["ENDED"] * count, f"{count} signal traversal(s) ended")


def group_metadata(cluster) -> dict:
    return rows(cluster, "SELECT rsrc_metadata FROM resource WHERE name = 'group'")[0][0] or {}


def members(cluster, stack_id: str) -> list:
    """Names of the group's members not deleted (the resources of the stack's nested stack)."""
    return [name for (name,) in rows(cluster, "SELECT DISTINCT r.name FROM resource AS r JOIN stack AS s ON r.stack_id = s.id "
                                              "WHERE s.parent_id = :top AND r.action != 'DELETE' ORDER BY r.name",
                                     top=stack_id)]


def stack_as_it_was(cluster, stack_id: str) -> tuple:
    """The stack's own state, its lock and its own events: what a signal must leave alone."""
    record = cluster.engine.get_record(stack_id)
    own = rows(cluster, "SELECT count(*) FROM event WHERE stack_id = :id AND resource_name = 'scaled'", id=stack_id)
    return record.action, record.status, record.status_reason, record.lock_owner, own[0][0]


def test_a_scaling_signal_is_answered_at_once_and_resizes_the_group_on_the_workers(cluster, tmp_path):
    workers = {cluster.start_worker().pid, cluster.start_worker().pid}
    log = tmp_path / "made.log"
    stack_id = created(cluster, log, hold=2)
    before = stack_as_it_was(cluster, stack_id)
    first, = creates(log)

    cluster.engine.signal("scaled", "up", ALARM)
    assert signal_events(cluster) == []  # answered before the new member's create (2 s at the least) ended
    signals_ended(cluster, 1)

    assert signal_events(cluster) == [ALARM_TEXT]
    assert len(members(cluster, stack_id)) == 2
    new, = set(creates(log)) - {first}
    assert creates(log) == {first: 1, new: 1}
    maker, = {int(fields[3]) for fields in log_lines(log) if fields[:2] == ["create", new]}
    assert maker in workers and maker != os.getpgid(0)  # made by a worker, not here
    metadata = group_metadata(cluster)
    assert metadata["scaling_in_progress"] is False
    assert list(metadata["cooldown_end"].values()) == ["change_in_capacity : 1"]
    assert stack_as_it_was(cluster, stack_id) == before  # its state untouched, its lock free

    # a second signal inside the cooldown changes nothing and records nothing
    cluster.engine.signal("scaled", "up", ALARM)
    signals_ended(cluster, 2)
    assert signal_events(cluster) == [ALARM_TEXT]
    assert len(members(cluster, stack_id)) == 2 and len(creates(log)) == 2
    assert group_metadata(cluster)["cooldown_end"] == metadata["cooldown_end"]
    assert stack_as_it_was(cluster, stack_id) == before


def test_a_scale_down_signal_removes_the_oldest_member_once(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    stack_id = created(cluster, log, size=2)
    before = stack_as_it_was(cluster, stack_id)
    oldest = rows(cluster, "SELECT data FROM resource WHERE name = 'group'")[0][0]["members"][0]

    cluster.engine.signal("scaled", "down")
    signals_ended(cluster, 1)

    assert signal_events(cluster, "down") == ["No signal details provided"]
    assert len(members(cluster, stack_id)) == 1 and oldest not in members(cluster, stack_id)
    assert [fields[1] for fields in log_lines(log) if fields[0] == "delete"] == [oldest]
    assert group_metadata(cluster)["scaling_in_progress"] is False
    assert stack_as_it_was(cluster, stack_id) == before


def test_a_signal_while_another_action_holds_the_stack_is_ignored(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log, go = tmp_path / "made.log", tmp_path / "go"
    stack_id = created(cluster, log)
    template = scaling_template(recorded(log))
    template["resources"]["slow"] = {"type": "Test::FileWaiter", "properties": {"path": str(go)}}
    cluster.engine.update_stack("scaled", template)
    wait_for(lambda: rows(cluster, "SELECT count(*) FROM resource WHERE name = 'slow' AND action = 'CREATE'")[0][0],
             "the update's slow create")

    cluster.engine.signal("scaled", "up", ALARM)
    go.touch()
    assert cluster.settle(stack_id)["stack_status"] == "UPDATE_COMPLETE"

    assert signal_events(cluster) == [] and signal_traversals(cluster) == []
    assert len(members(cluster, stack_id)) == 1 and len(creates(log)) == 1
    assert "cooldown_end" not in group_metadata(cluster) or list(group_metadata(cluster)["cooldown_end"].values()) \
        == ["ExactCapacity : 1"]


def test_a_worker_lost_while_a_new_member_is_made_leaves_the_resize_to_go_on_once(cluster, tmp_path):
    workers = {worker.pid: worker for worker in (cluster.start_worker(), cluster.start_worker())}
    log = tmp_path / "made.log"
    stack_id = created(cluster, log, hold=3)
    made = len(log_lines(log))

    cluster.engine.signal("scaled", "up", ALARM)
    wait_for(lambda: len(log_lines(log)) > made, "the new member's create")
    cluster.kill(workers.pop(int(log_lines(log)[made][3])))  # inside the member's create: its hold not over
    signals_ended(cluster, 1)

    assert signal_events(cluster) == [ALARM_TEXT]
    assert len(members(cluster, stack_id)) == 2
    assert set(creates(log).values()) == {1} and len(creates(log)) == 2
    assert traversals(cluster, "UPDATE") == 1
    assert group_metadata(cluster)["scaling_in_progress"] is False
    assert cluster.engine.get_record(stack_id).lock_owner is None


@pytest.mark.parametrize("moment", ["before", "after"])
def test_a_worker_lost_as_the_signal_starts_the_resize_resizes_once(cluster, tmp_path, moment):
    """Lost with the group's scaling and the nested update's intent committed, the update started
    (``after``) or not (``before``), the signal's poll not kept: the redelivered step takes that
    scaling up (to its size, not one member more) and the nested update runs once."""
    log, lost = tmp_path / "made.log", tmp_path / "lost"
    cluster.env["STOKER_TEST_LOSE_NESTED_START"] = f"UPDATE:{moment}:{lost}"
    doomed = cluster.start_worker()
    stack_id = created(cluster, log)
    before = stack_as_it_was(cluster, stack_id)

    cluster.engine.signal("scaled", "up", ALARM)
    settled_after_loss(cluster, doomed, lost, "STOKER_TEST_LOSE_NESTED_START", stack_id)
    signals_ended(cluster, 1)

    assert signal_events(cluster) == [ALARM_TEXT]
    assert len(members(cluster, stack_id)) == 2
    assert set(creates(log).values()) == {1} and len(creates(log)) == 2
    assert traversals(cluster, "UPDATE") == 1
    metadata = group_metadata(cluster)
    assert metadata["scaling_in_progress"] is False and "stoker:scaling" not in rows(
        cluster, "SELECT data FROM resource WHERE name = 'group'")[0][0]
    assert stack_as_it_was(cluster, stack_id) == before


def waiting_in_vain(cluster, tmp_path, limit: float) -> str:
    """A scaling stack (two workers) whose members wait for a file, there at its create and gone
    since: a new member fails after ``limit`` seconds.  Its id."""
    cluster.start_worker(), cluster.start_worker()
    present = tmp_path / "present"
    present.touch()
    started = cluster.engine.create_stack("scaled", scaling_template(
        {"type": "Test::FileWaiter", "properties": {"path": str(present), "limit": limit}}))
    created_and_released(cluster, started["id"])
    present.unlink()
    return started["id"]


def test_a_resize_whose_new_member_fails_is_a_signal_event_saying_why(cluster, tmp_path):
    stack_id = waiting_in_vain(cluster, tmp_path, limit=2)
    before = stack_as_it_was(cluster, stack_id)

    cluster.engine.signal("scaled", "up", ALARM)
    signals_ended(cluster, 1)

    reason, = signal_events(cluster)
    assert "did not appear within 2" in reason, reason
    metadata = group_metadata(cluster)
    assert metadata["scaling_in_progress"] is False
    assert list(metadata["cooldown_end"].values()) == ["ExactCapacity : 1"]  # no cooldown after a failure
    assert stack_as_it_was(cluster, stack_id) == before


def test_a_delete_while_a_signal_resizes_stops_it_first(cluster, tmp_path):
    stack_id = waiting_in_vain(cluster, tmp_path, limit=120)
    cluster.engine.signal("scaled", "up", ALARM)
    wait_for(lambda: len(members(cluster, stack_id)) == 2, "the new member's create")

    cluster.engine.delete_stack("scaled")

    assert cluster.settle(stack_id)["stack_status"] == "DELETE_COMPLETE"
    signals_ended(cluster, 1)
    reason, = signal_events(cluster)
    assert "cancelled" in reason, reason
    # the resize stopped and its signal ended before the delete began
    (signalled, first_delete), = rows(
        cluster, "SELECT (SELECT id FROM event WHERE action = 'SIGNAL'), (SELECT min(id) FROM event WHERE "
                 "stack_id = :id AND resource_name = 'scaled' AND action = 'DELETE')", id=stack_id)
    assert signalled < first_delete


def test_a_signal_the_broker_cannot_take_fails_clearly_and_leaves_the_stack_as_it_was(cluster, tmp_path):
    from stoker.dispatch.distributed import CeleryDispatch
    from stoker.dispatch.stack_actions import StartFailed
    from stoker.engine.engine import Engine

    from .conftest import PLUGINS

    cluster.start_worker()
    stack_id = created(cluster, tmp_path / "made.log")
    before = stack_as_it_was(cluster, stack_id)
    unsent = Engine(db_url=cluster.db_url, plugin_dirs=[str(PLUGINS)],
                    dispatch=CeleryDispatch("amqp://guest:guest@127.0.0.1:18199//"))  # nothing listens
    try:
        with pytest.raises(StartFailed, match="Stack SIGNAL could not be started on the workers"):
            unsent.signal("scaled", "up", ALARM)
    finally:
        unsent.close()
    assert stack_as_it_was(cluster, stack_id) == before  # its state untouched, its lock free
    assert signal_events(cluster) == []


def test_the_api_answers_a_scaling_signal_and_the_workers_resize(cluster, tmp_path, monkeypatch):
    """``POST .../resources/up/signal`` on ``stoker api --broker``: 200 at once, the resize on the workers."""
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    with api_of(cluster, monkeypatch) as client:
        stack_id = created_through(client, cluster, "scaled", scaling_template(recorded(log, hold=2)))

        signalled = client.post(f"/v1/p/stacks/scaled/{stack_id}/resources/up/signal", json=ALARM)

        assert signalled.status_code == 200, signalled.text
        assert signal_events(cluster) == []  # answered before the new member (2 s at the least) was made
        signals_ended(cluster, 1)
    assert signal_events(cluster) == [ALARM_TEXT]
    assert len(members(cluster, stack_id)) == 2 and sorted(creates(log).values()) == [1, 1]


def test_a_signal_acted_on_the_workers_refreshes_the_metadata_of_provider_template_resources(cluster, tmp_path):
    """As in-process (and Heat's resource_signal): once the resize is done, a provider-template
    resource whose metadata reads the group resolves it again, and that is stored."""
    cluster.start_worker(), cluster.start_worker()
    template = scaling_template(recorded(tmp_path / "made.log"))
    template["resources"]["watcher"] = {"type": "watcher.yaml",
                                        "metadata": {"size": {"get_attr": ["group", "current_size"]}}}
    watcher = {"heat_template_version": "2018-08-31", "resources": {"n": {"type": "OS::Heat::None"}}}
    started = cluster.engine.create_stack("scaled", Template(template, {"watcher.yaml": json.dumps(watcher)}))
    created_and_released(cluster, started["id"])

    def watched() -> dict:
        return rows(cluster, "SELECT rsrc_metadata FROM resource WHERE name = 'watcher'")[0][0]

    assert watched() == {"size": 1}
    cluster.engine.signal("scaled", "up", ALARM)
    signals_ended(cluster, 1)
    assert watched() == {"size": 2}
