"""A worker lost while it ends a traversal (real ``stoker worker`` processes, RabbitMQ,
PostgreSQL): the traversal is left ENDING, and the redelivered task runs its end again, from
wherever the lost worker stopped, so the stack settles, what follows starts once and no end is
recorded twice (``tests/dispatch/plugins/lose_ending.py`` picks the moment)."""

from __future__ import annotations

from collections import Counter

import pytest

from .test_cancel import rows, wait_for
from .test_executions import deploy, expected, finish, runs_of
from .test_nested_faults import settled_after_loss
from .test_workers import log_lines

pytestmark = pytest.mark.slow  # workers killed and started again


def template(log, value: str, fail: bool = False) -> dict:
    """``rec``, a recorded resource: another ``value`` replaces it."""
    return {"heat_template_version": "2018-08-31", "resources": {"rec": {
        "type": "Test::Recorded", "properties": {"log": str(log), "value": value, "fail": fail}}}}


#: each case: what runs before the action whose end the worker is lost in, that action, what the
#: stack ends as
CASES = {
    "create": ([], lambda engine, log: engine.create_stack("s", template(log, "a")), "CREATE_COMPLETE"),
    "update": ([lambda engine, log: engine.create_stack("s", template(log, "a"))],
               lambda engine, log: engine.update_stack("s", template(log, "b")), "UPDATE_COMPLETE"),
    "rollback": ([], lambda engine, log: engine.create_stack("s", template(log, "a", fail=True),
                                                             disable_rollback=False), "ROLLBACK_COMPLETE"),
}


def all_ended(cluster) -> bool:
    return {status for (status,) in rows(cluster, "SELECT status FROM dispatch_traversal")} == {"ENDED"}


def traversal_count(cluster, action: str) -> int:
    """How many traversals of ``action`` ran: more than one is what follows started twice."""
    return rows(cluster, "SELECT count(*) FROM dispatch_traversal WHERE action = :action", action=action)[0][0]


def stack_events(cluster, stack_id: str, state: str) -> int:
    """How many events of the stack itself say ``state`` (ACTION_STATUS)."""
    action, status = state.rsplit("_", 1)
    return rows(cluster, "SELECT count(*) FROM event WHERE stack_id = :stack AND resource_name = 's' "
                         "AND action = :action AND status = :status", stack=stack_id, action=action, status=status)[0][0]


@pytest.mark.parametrize("case, moment, action", [
    ("create", "end", "CREATE"), ("update", "before", "UPDATE_CLEANUP"), ("update", "after", "UPDATE_CLEANUP"),
    ("rollback", "failed", "CREATE"), ("rollback", "before", "ROLLBACK")])
def test_a_worker_lost_ending_a_traversal_leaves_the_end_to_another(cluster, tmp_path, case, moment, action):
    log, lost = tmp_path / "made.log", tmp_path / "lost"
    before, run, ends = CASES[case]
    cluster.env["STOKER_TEST_LOSE_ENDING"] = f"{moment}:{action}:{lost}"
    doomed = cluster.start_worker()
    for earlier in before:
        assert cluster.settle(earlier(cluster.engine, log)["id"])["stack_status"] == "CREATE_COMPLETE"
    stack_id = cluster.engine.get_record("s").id if before else None
    started = run(cluster.engine, log)
    stack_id = stack_id or started["id"]

    done = settled_after_loss(cluster, doomed, lost, "STOKER_TEST_LOSE_ENDING", stack_id)

    assert done["stack_status"] == ends, done["stack_status_reason"]
    assert stack_events(cluster, stack_id, ends) == 1
    wait_for(lambda: all_ended(cluster), "every traversal marked ended (the end's last step)")
    assert cluster.engine.get_record(stack_id, show_deleted=True).lock_owner is None
    made = Counter(fields[0] for fields in log_lines(log))
    if case == "update":  # the replaced resource goes once, in the one cleanup
        assert made == {"create": 2, "delete": 1}
        assert traversal_count(cluster, "UPDATE_CLEANUP") == 1
    if case == "rollback":  # the create's failure is an event once, the rollback ran once
        assert stack_events(cluster, stack_id, "CREATE_FAILED") == 1
        assert traversal_count(cluster, "ROLLBACK") == 1


@pytest.mark.parametrize("moment", ["end", "ended"])
def test_a_worker_lost_ending_an_execution_leaves_the_end_to_another(cluster, tmp_path, moment):
    """Lost as the install's end is about to be recorded, or just after its ended event: another
    worker records the end, the ended event once, and no operation runs again."""
    lost = tmp_path / "lost"
    cluster.env["STOKER_TEST_LOSE_ENDING"] = f"{moment}:EXECUTION:{lost}"
    doomed = cluster.start_worker()
    runs = deploy(cluster, tmp_path)
    started = cluster.engine.executions.start("install", "dep")
    wait_for(lost.exists, "the worker lost ending the install")
    doomed.wait(timeout=60)
    del cluster.env["STOKER_TEST_LOSE_ENDING"]
    cluster.start_worker()

    done = finish(cluster, started)
    assert done["status"] == "terminated", done["error"]
    events = cluster.engine.executions.events(started["id"])
    assert sum(e["event_type"] == "workflow_succeeded" for e in events) == 1
    assert events[-1]["event_type"] == "workflow_succeeded"
    assert runs_of(runs, "end") == runs_of(runs, "start") == expected(cluster, ("create", "configure", "start"),
                                                                        ("preconfigure",))
    wait_for(lambda: all_ended(cluster), "every traversal marked ended (the end's last step)")
