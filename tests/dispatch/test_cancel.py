"""Cancels, timeouts and deletes of a stack whose nested stacks real ``stoker worker`` processes are
creating: they reach the nested stacks (at any depth), as the in-process walk of a tree stops as one."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import text

WAIT = {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 600}}}


def tree_template(wait: dict = WAIT) -> dict:
    """``top`` owns ``inner`` (a waiting ``slow``, ``after`` needing it, and ``deeper``: a nested stack
    of its own with a waiting ``slow2``)."""
    deeper = {"heat_template_version": "2018-08-31", "resources": {"slow2": wait}}
    inner = {"heat_template_version": "2018-08-31", "resources": {
        "slow": wait,
        "after": {"type": "OS::Heat::TestResource", "depends_on": "slow"},
        "deeper": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(deeper)}}}}
    return {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(inner)}}}}


def rows(cluster, sql: str, **params) -> list:
    with cluster.engine.store.engine.begin() as conn:
        return [tuple(row) for row in conn.execute(text(sql), params)]


def states(cluster) -> dict:
    """Resource name -> (action, status) over every stack, nested ones included."""
    return {name: (action, status) for name, action, status in rows(
        cluster, "SELECT name, action, status FROM resource ORDER BY id")}


def nested_stacks(cluster, top_id: str) -> list:
    """(name, action, status, deleted) of every stack under ``top_id``."""
    return rows(cluster, """WITH RECURSIVE tree(id) AS (SELECT id FROM stack WHERE parent_id = :top
                            UNION SELECT s.id FROM stack AS s JOIN tree ON s.parent_id = tree.id)
                            SELECT name, action, status, deleted_at IS NOT NULL FROM stack
                            WHERE id IN (SELECT id FROM tree) ORDER BY created_at""", top=top_id)


def events_of(cluster, name: str) -> list:
    return [(action, status, reason) for action, status, reason in rows(
        cluster, "SELECT action, status, reason FROM event WHERE resource_name = :name ORDER BY id", name=name)]


def wait_for(predicate, what: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.1)


def start_tree(cluster, name: str, wait: dict = WAIT, **options) -> dict:
    """Two workers; the tree's create started and both waiting resources being created."""
    cluster.start_worker(), cluster.start_worker()
    started = cluster.engine.create_stack(name, tree_template(wait), **options)
    wait_for(lambda: states(cluster).get("slow") == states(cluster).get("slow2") == ("CREATE", "IN_PROGRESS"),
             "both nested waits start")
    return started


def test_a_cancel_of_the_top_stack_stops_its_nested_stacks_and_rolls_the_tree_back(cluster):
    started = start_tree(cluster, "top", disable_rollback=False)

    cluster.engine.cancel_stack("top")  # Heat's default: roll back
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]
    assert ("CREATE", "FAILED", "Stack CREATE cancelled") in events_of(cluster, "top")
    for waiting in ("slow", "slow2"):  # stopped, not waited for (600 s)
        assert [e for e in events_of(cluster, waiting) if e[1] == "FAILED"] == [
            ("CREATE", "FAILED", "Stack CREATE cancelled")]
    assert events_of(cluster, "after") == []  # nothing started after the cancel
    assert [(action, status, deleted) for _name, action, status, deleted in nested_stacks(cluster, started["id"])] == [
        ("DELETE", "COMPLETE", True), ("DELETE", "COMPLETE", True)]  # the rollback deleted the tree
    assert cluster.engine.get_record("top").lock_owner is None


def test_a_cancel_without_rollback_fails_at_once_and_lets_the_running_nested_resources_finish(cluster):
    short = {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 4}}}
    started = start_tree(cluster, "calm", wait=short, disable_rollback=False)

    cluster.engine.cancel_stack("calm", rollback=False)
    wait_for(lambda: cluster.engine.get_record("calm").status == "FAILED", "the stack fail at once", limit=30)
    assert states(cluster)["slow"] == ("CREATE", "IN_PROGRESS")  # still running, not stopped
    wait_for(lambda: cluster.engine.get_record("calm").lock_owner is None, "the running resources end")

    record = cluster.engine.get_record("calm")
    assert (record.action, record.status) == ("CREATE", "FAILED")
    # as in-process: the nested stack that did not end as asked is the failure that ends it
    assert record.status_reason.startswith("Resource CREATE failed: resources.inner: "), record.status_reason
    assert ("CREATE", "FAILED", "Stack CREATE cancelled") in events_of(cluster, "calm")  # at once
    assert states(cluster)["slow"] == states(cluster)["slow2"] == ("CREATE", "COMPLETE")  # they finished
    assert events_of(cluster, "after") == []  # nothing new started, in the nested stack neither
    assert [(action, status) for _n, action, status, _d in nested_stacks(cluster, started["id"])] == [
        ("CREATE", "FAILED"), ("CREATE", "FAILED")]
    assert not [e for e in events_of(cluster, "calm") if e[0] == "ROLLBACK"]  # no rollback


def test_a_timeout_of_the_top_stack_stops_its_nested_stacks(cluster):
    started = start_tree(cluster, "late", timeout_mins=60)
    # the deadline passes (set back rather than waited for)
    rows(cluster, "UPDATE dispatch_traversal SET deadline = now() WHERE stack_id = :id RETURNING id", id=started["id"])

    done = cluster.settle(started["id"])

    assert (done["stack_status"], done["stack_status_reason"]) == ("CREATE_FAILED", "CREATE timed out")
    assert states(cluster)["slow"] == states(cluster)["slow2"] == ("CREATE", "FAILED")
    wait_for(lambda: all(status == "FAILED" for _n, _a, status, _d in nested_stacks(cluster, started["id"])),
             "the nested stacks end")
    assert events_of(cluster, "after") == []


def test_a_delete_during_the_create_cancels_the_tree_then_deletes_it(cluster):
    started = start_tree(cluster, "gone")

    cluster.engine.delete_stack("gone")
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "DELETE_COMPLETE", done["stack_status_reason"]
    assert all(deleted for *_rest, deleted in nested_stacks(cluster, started["id"]))
    assert rows(cluster, "SELECT name FROM resource") == []
    assert events_of(cluster, "after") == []


@pytest.mark.slow  # two API servers besides the workers
def test_a_cancel_and_a_delete_sent_to_another_api_host_reach_the_workers(cluster, tmp_path):
    """Two ``stoker api`` processes on one database and broker: the create goes to one, its cancel
    and its delete to the other, which never ran anything of it."""
    import httpx
    from api.helpers import start_server

    servers = []
    for host in ("a", "b"):
        (tmp_path / host).mkdir()
        (tmp_path / host / "stoker.conf").write_text(f"[DEFAULT]\nqueue = {cluster.queue}\n")
        servers.append(start_server(tmp_path / host, cluster.db_url, extra=("--broker", cluster.broker)))
    try:
        first, second = (httpx.Client(base_url=server.endpoint("p"), timeout=60) for server in servers)
        cluster.start_worker(), cluster.start_worker()
        answer = first.post("/stacks", json={"stack_name": "far", "template": tree_template()})
        assert answer.status_code == 201, answer.text
        stack_id = answer.json()["stack"]["id"]
        cluster.engine = cluster.engine.for_project("p")
        wait_for(lambda: states(cluster).get("slow") == states(cluster).get("slow2") == ("CREATE", "IN_PROGRESS"),
                 "both nested waits start")

        assert second.post(f"/stacks/far/{stack_id}/actions", json={"cancel_without_rollback": None}).status_code == 202
        wait_for(lambda: second.get(f"/stacks/far/{stack_id}").json()["stack"]["stack_status"] == "CREATE_FAILED",
                 "the stack fail at once", limit=30)
        assert states(cluster)["slow"] == ("CREATE", "IN_PROGRESS")  # let run, holding the stack

        assert second.delete(f"/stacks/far/{stack_id}").status_code == 204  # stops them, then deletes
        assert cluster.settle(stack_id)["stack_status"] == "DELETE_COMPLETE"
        assert all(deleted for *_rest, deleted in nested_stacks(cluster, stack_id))
        assert [e for e in events_of(cluster, "slow2") if e[1] == "FAILED"] == [
            ("CREATE", "FAILED", "Stack CREATE cancelled")]
        assert events_of(cluster, "after") == []
    finally:
        for server in servers:
            server.stop()


def nested_update_template(value: str, update_wait: float) -> dict:
    """``outer`` owns ``inner``, whose ``slow`` takes ``update_wait`` s to be updated to ``value``."""
    inner = {"heat_template_version": "2018-08-31", "resources": {"slow": {
        "type": "OS::Heat::TestResource", "properties": {"value": value, "action_wait_secs": {"update": update_wait}}}}}
    return {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(inner)}}}}


def nested_values(cluster, stack_id: str) -> list:
    """The ``value`` of each resource of the stack's one nested stack."""
    nested, = cluster.engine.store.children(stack_id)
    return [row.properties_data["value"] for row in cluster.engine.store.get_resources(nested.id)]


def test_a_cancel_of_an_update_stops_the_nested_stack_update_it_runs_and_rolls_it_back(cluster):
    cluster.start_worker(), cluster.start_worker()
    before = nested_update_template("one", 0)
    started = cluster.engine.create_stack("outer", before)
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("outer", nested_update_template("two", 600))
    wait_for(lambda: states(cluster)["slow"] == ("UPDATE", "IN_PROGRESS"), "the nested update start")

    cluster.engine.cancel_stack("outer")  # Heat's cancel_update: stops it, and rolls back
    done = cluster.settle(started["id"])

    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]
    # not waited for (as in-process); stopped with the nested update, a traversal of its own on the workers
    assert ("UPDATE", "FAILED", "Stack UPDATE cancelled") in events_of(cluster, "slow")
    assert ("UPDATE", "FAILED", "Stack UPDATE cancelled") in events_of(cluster, "inner")
    assert {status for _action, status in states(cluster).values()} == {"COMPLETE"}
    assert cluster.engine.template("outer") == before
    assert nested_values(cluster, started["id"]) == ["one"]


def test_a_timeout_stops_the_nested_stack_update_a_worker_runs(cluster):
    cluster.start_worker(), cluster.start_worker()
    started = cluster.engine.create_stack("slowly", nested_update_template("one", 0))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"
    cluster.engine.update_stack("slowly", nested_update_template("two", 600), timeout_mins=60)
    wait_for(lambda: states(cluster)["slow"] == ("UPDATE", "IN_PROGRESS"), "the nested update start")
    # the deadline passes (set back rather than waited for); the task running the update looks
    rows(cluster, "UPDATE dispatch_traversal SET deadline = now() WHERE stack_id = :id AND status = 'IN_PROGRESS' "
                  "RETURNING id", id=started["id"])

    done = cluster.settle(started["id"])

    assert (done["stack_status"], done["stack_status_reason"]) == ("UPDATE_FAILED", "UPDATE timed out")
    # not waited for (as in-process); stopped with the nested update, a traversal of its own on the workers
    assert ("UPDATE", "FAILED", "UPDATE timed out") in events_of(cluster, "slow")
    assert ("UPDATE", "FAILED", "UPDATE timed out") in events_of(cluster, "inner")
