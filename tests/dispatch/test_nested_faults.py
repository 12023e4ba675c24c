"""A worker lost while it starts a nested stack's action (real ``stoker worker`` processes,
RabbitMQ, PostgreSQL): the redelivered step of the owner resource polls the action its lost
predecessor started, or starts it if it never was, so the parent completes and the nested
action runs once (``tests/dispatch/plugins/lose_nested_start.py`` picks the moment)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from .test_cancel import rows, wait_for
from .test_workers import log_lines


def outer_template(log, tag: str) -> dict:
    """``inner``, a nested stack holding ``rec``: a recorded resource whose ``tag`` updates in place."""
    inner = {"heat_template_version": "2018-08-31", "parameters": {"tag": {"type": "string"}},
             "resources": {"rec": {"type": "Test::Recorded",
                                   "properties": {"log": str(log), "tag": {"get_param": "tag"}}}}}
    return {"heat_template_version": "2018-08-31", "resources": {"inner": {
        "type": "OS::Heat::Stack", "properties": {"template": json.dumps(inner), "parameters": {"tag": tag}}}}}


#: each action of the parent: what it does, what it ends as, the line its nested resource logs
ACTIONS = {
    "CREATE": (lambda engine, log: engine.create_stack("outer", outer_template(log, "a")), "CREATE_COMPLETE", "create"),
    "UPDATE": (lambda engine, log: engine.update_stack("outer", outer_template(log, "b")), "UPDATE_COMPLETE", "update"),
    "SUSPEND": (lambda engine, log: engine.suspend_stack("outer"), "SUSPEND_COMPLETE", "suspend"),
    "RESUME": (lambda engine, log: engine.resume_stack("outer"), "RESUME_COMPLETE", "resume"),
    "DELETE": (lambda engine, log: engine.delete_stack("outer"), "DELETE_COMPLETE", "delete"),
}
#: what must have happened before each action
BEFORE = {"CREATE": [], "UPDATE": ["CREATE"], "SUSPEND": ["CREATE"], "RESUME": ["CREATE", "SUSPEND"],
          "DELETE": ["CREATE"]}


def traversals(cluster, action: str) -> int:
    """How many traversals of ``action`` the nested stacks had: more than one is a second start."""
    return rows(cluster, "SELECT count(*) FROM dispatch_traversal AS t JOIN stack AS s ON s.id = t.stack_id "
                         "WHERE s.parent_id IS NOT NULL AND t.action = :action", action=action)[0][0]


def settled_after_loss(cluster, doomed, lost, variable: str, stack_id: str) -> dict:
    """The stack once it settled: the ``doomed`` worker lost itself (``lost`` made), and a fresh
    one, not armed by ``variable``, took over."""
    wait_for(lost.exists, f"the worker lost as {cluster.env[variable]} says")
    doomed.wait(timeout=60)
    del cluster.env[variable]
    cluster.start_worker()
    return cluster.settle(stack_id)


@pytest.mark.parametrize("action, moment", [
    ("CREATE", "after"), ("CREATE", "before"), ("UPDATE", "after"), ("UPDATE", "before"),
    ("SUSPEND", "after"), ("RESUME", "after"), ("DELETE", "after")])
def test_a_worker_lost_starting_a_nested_action_leaves_it_to_run_once(cluster, tmp_path, action, moment):
    log, lost = tmp_path / "made.log", tmp_path / "lost"
    cluster.env["STOKER_TEST_LOSE_NESTED_START"] = f"{action}:{moment}:{lost}"
    doomed = cluster.start_worker()
    for earlier in BEFORE[action]:
        run, ends, _verb = ACTIONS[earlier]
        started = run(cluster.engine, log)
        assert cluster.settle(cluster.engine.get_record("outer").id)["stack_status"] == ends
    stack_id = cluster.engine.get_record("outer").id if BEFORE[action] else None
    run, ends, verb = ACTIONS[action]
    started = run(cluster.engine, log)
    stack_id = stack_id or started["id"]

    done = settled_after_loss(cluster, doomed, lost, "STOKER_TEST_LOSE_NESTED_START", stack_id)

    assert done["stack_status"] == ends, done["stack_status_reason"]
    assert Counter(fields[0] for fields in log_lines(log) if fields[1] == "rec")[verb] == 1
    assert traversals(cluster, action) == 1
    if action != "DELETE":
        assert len(cluster.engine.store.children(stack_id)) == 1


def test_a_worker_lost_before_it_ends_an_empty_nested_stacks_traversal_leaves_it_ended(cluster, tmp_path):
    """A nested stack with no resources: its traversal, stored, ends at once; a worker lost in
    between leaves the owner's redelivered step to end it (else the parent waits for ever)."""
    lost = tmp_path / "lost"
    cluster.env["STOKER_TEST_LOSE_NESTED_START"] = f"CREATE:empty:{lost}"
    doomed = cluster.start_worker()
    empty = json.dumps({"heat_template_version": "2018-08-31"})
    started = cluster.engine.create_stack("outer", {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::Stack", "properties": {"template": empty}}}})

    done = settled_after_loss(cluster, doomed, lost, "STOKER_TEST_LOSE_NESTED_START", started["id"])

    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    (child,) = cluster.engine.store.children(started["id"])
    assert (child.action, child.status) == ("CREATE", "COMPLETE")
    assert traversals(cluster, "CREATE") == 1
    # the end marks its traversal ENDED last, after the stack's state: under load a look can come between
    wait_for(lambda: rows(cluster, "SELECT count(*) FROM dispatch_traversal WHERE status <> 'ENDED'")[0][0] == 0,
             "every traversal ended")
