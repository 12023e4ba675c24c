"""Stacks created and deleted by real ``stoker worker`` processes (RabbitMQ, PostgreSQL)."""

from __future__ import annotations

import json
import time
from collections import Counter
from contextlib import closing

import pytest

from stoker.dispatch import InProcess, dispatcher
from stoker.dispatch.distributed import CeleryDispatch, NeedsServerDatabase
from stoker.engine.engine import Engine

from .conftest import api_of, created_through


def recorded_template(log, count, hold=0.0, chain=False, fail=None):
    """``count`` recorded resources; with ``chain`` each needs the one before (value passed along)."""
    resources = {}
    for i in range(count):
        props = {"log": str(log), "hold": hold, "value": f"v{i}"}
        if chain and i:
            props["value"] = {"get_attr": [f"r{i - 1}", "value"]}
        if fail == i:
            props["fail"] = True
        resources[f"r{i}"] = {"type": "Test::Recorded", "properties": props}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"last": {"value": {"get_attr": [f"r{count - 1}", "value"]}}}}


def log_lines(log):
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def creates(log):
    return Counter(fields[1] for fields in log_lines(log) if fields[0] == "create")


def test_create_and_delete_spread_over_two_workers(cluster, tmp_path):
    first, second = cluster.start_worker(), cluster.start_worker()
    cluster.listening(2)
    log = tmp_path / "made.log"
    template = recorded_template(log, 12, hold=0.3)
    template["resources"]["tail"] = {"type": "Test::Recorded", "depends_on": [f"r{i}" for i in range(12)],
                                     "properties": {"log": str(log), "value": {"get_attr": ["r5", "value"]}}}
    template["outputs"]["last"] = {"value": {"get_attr": ["tail", "value"]}}
    started = cluster.engine.create_stack("spread", template)
    assert started["stack_status"] == "CREATE_IN_PROGRESS"  # the API side only starts it

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    assert creates(log) == {f"r{i}": 1 for i in range(12)} | {"tail": 1}
    assert {int(fields[3]) for fields in log_lines(log)} == {first.pid, second.pid}  # both took work
    assert cluster.engine.outputs("spread") == [
        {"output_key": "last", "description": "No description given", "output_value": "v5"}]
    order = [fields[1] for fields in log_lines(log)]
    assert order[-1] == "tail"  # its requirements first

    cluster.engine.delete_stack("spread")
    gone = cluster.settle(started["id"])
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
    deletes = [fields[1] for fields in log_lines(log) if fields[0] == "delete"]
    assert sorted(deletes) == sorted([f"r{i}" for i in range(12)] + ["tail"])
    assert deletes[0] == "tail"  # dependents first
    assert cluster.engine.store.get_resources(started["id"]) == []


def test_sigkill_of_a_worker_mid_action_loses_nothing_and_creates_nothing_twice(cluster, tmp_path):
    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("survive", recorded_template(log, 10, hold=1.5))
    limit = time.monotonic() + 120
    while not any(int(fields[3]) == doomed.pid for fields in log_lines(log)):
        assert time.monotonic() < limit, "the doomed worker never started a resource"
        time.sleep(0.05)
    cluster.kill(doomed)  # inside handle_create: the id is stored, the hold not over
    killed_in = [fields[1] for fields in log_lines(log) if int(fields[3]) == doomed.pid]

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    assert creates(log) == {f"r{i}": 1 for i in range(10)}
    rows = {row.name: row for row in cluster.engine.store.get_resources(started["id"])}
    assert {(row.action, row.status) for row in rows.values()} == {("CREATE", "COMPLETE")}
    assert rows[killed_in[0]].physical_resource_id.startswith("survive-")
    assert len(rows) == 10
    assert survivor.poll() is None


def test_waiting_resources_do_not_hold_a_worker(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    resources = {f"w{i}": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 1.5}} for i in range(6)}
    started = cluster.engine.create_stack("waits", {"heat_template_version": "2018-08-31", "resources": resources})
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    events = [e["resource_status"] for e in cluster.engine.events("waits") if e["resource_name"] != "waits"]
    # one process with one slot: all six waited at once, none after another
    assert events.index("CREATE_COMPLETE") > max(i for i, s in enumerate(events) if s == "CREATE_IN_PROGRESS")


def test_a_failed_create_rolls_back_through_the_workers(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("doomed", recorded_template(log, 5, chain=True, fail=3),
                                          disable_rollback=False)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "ROLLBACK_COMPLETE", done["stack_status_reason"]
    failed = {e["resource_name"]: e["resource_status_reason"] for e in cluster.engine.events("doomed")
              if e["resource_status"] == "CREATE_FAILED"}
    assert set(failed) == {"r3", "doomed"}
    assert "r3 was told to fail" in failed["r3"]
    assert failed["doomed"] == f"Resource CREATE failed: {failed['r3']}"  # the stack says which and why
    assert creates(log) == {"r0": 1, "r1": 1, "r2": 1}
    assert sorted(f[1] for f in log_lines(log) if f[0] == "delete") == ["r0", "r1", "r2"]
    assert "r4" not in creates(log)


def test_cancel_reaches_the_workers_and_a_delete_stops_what_it_let_run(cluster, tmp_path):
    cluster.start_worker()
    resources = {f"w{i}": {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 600}}}
                 for i in range(3)}
    started = cluster.engine.create_stack("stopped", {"heat_template_version": "2018-08-31",
                                                      "resources": resources})
    limit = time.monotonic() + 120
    while sum(r["resource_status"] == "CREATE_IN_PROGRESS" for r in cluster.engine.resources("stopped")) < 3:
        assert time.monotonic() < limit
        time.sleep(0.1)
    cluster.engine.cancel_stack("stopped", rollback=False)
    done = cluster.settle(started["id"])
    assert (done["stack_status"], done["stack_status_reason"]) == ("CREATE_FAILED", "Stack CREATE cancelled")
    # as Heat's cancel_without_rollback: what runs is not interrupted, and holds the stack
    assert {r["resource_status"] for r in cluster.engine.resources("stopped")} == {"CREATE_IN_PROGRESS"}
    assert cluster.engine.get_record("stopped").lock_owner is not None

    cluster.engine.delete_stack("stopped")  # cancels again, which stops them, then deletes
    assert cluster.settle(started["id"])["stack_status"] == "DELETE_COMPLETE"
    failed = [e["resource_status_reason"] for e in cluster.engine.events(started["id"])
              if e["resource_status"] == "CREATE_FAILED" and e["resource_name"] != "stopped"]
    assert failed == ["Stack CREATE cancelled"] * 3


def test_the_redis_broker_works_the_same(redis_cluster, tmp_path):
    redis_cluster.start_worker(), redis_cluster.start_worker()
    log = tmp_path / "made.log"
    started = redis_cluster.engine.create_stack("red", recorded_template(log, 6, chain=True))
    done = redis_cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    assert redis_cluster.engine.outputs("red")[0]["output_value"] == "v0"
    assert [f[1] for f in log_lines(log)] == [f"r{i}" for i in range(6)]
    redis_cluster.engine.delete_stack("red")
    assert redis_cluster.settle(started["id"])["stack_status"] == "DELETE_COMPLETE"
    assert [f[1] for f in log_lines(log) if f[0] == "delete"] == [f"r{i}" for i in reversed(range(6))]


def test_the_broker_comes_from_the_configuration(monkeypatch, tmp_path):
    monkeypatch.delenv("STOKER_BROKER_URL", raising=False)
    monkeypatch.setenv("STOKER_HOME", str(tmp_path))
    assert isinstance(dispatcher(), InProcess) and not isinstance(dispatcher(), CeleryDispatch)
    (tmp_path / "stoker.conf").write_text("[DEFAULT]\nbroker_url = redis://127.0.0.1:6379/3\nqueue = q1\n")
    configured = dispatcher()
    assert (configured.broker_url, configured.queue) == ("redis://127.0.0.1:6379/3", "q1")
    monkeypatch.setenv("STOKER_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
    assert dispatcher().broker_url == "amqp://guest:guest@127.0.0.1:5672//"
    assert dispatcher("amqp://elsewhere//").broker_url == "amqp://elsewhere//"


def test_workers_need_a_shared_database(tmp_path):
    engine = Engine(db_url=f"sqlite:///{tmp_path / 's.db'}", dispatch=CeleryDispatch("memory://"))
    with closing(engine), pytest.raises(NeedsServerDatabase, match="PostgreSQL"):
        engine.create_stack("local", {"heat_template_version": "2018-08-31",
                                      "resources": {"n": {"type": "OS::Heat::None"}}})


def test_the_api_enqueues_and_the_workers_run(cluster, tmp_path, monkeypatch):
    cluster.start_worker(), cluster.start_worker()
    log = tmp_path / "made.log"
    with api_of(cluster, monkeypatch) as client:
        stack_id = created_through(client, cluster, "via-api", recorded_template(log, 4, chain=True))
        assert client.delete(f"/v1/p/stacks/via-api/{stack_id}").status_code == 204
        assert cluster.settle(stack_id)["stack_status"] == "DELETE_COMPLETE"
    assert [f[0] + " " + f[1] for f in log_lines(log)] == [
        "create r0", "create r1", "create r2", "create r3", "delete r3", "delete r2", "delete r1", "delete r0"]


def test_an_unreachable_broker_fails_the_stack_with_a_clear_error(new_pg_database):
    from stoker.dispatch.stack_actions import StartFailed

    with new_pg_database("stoker_dispatch") as database:
        engine = Engine(db_url=database.url.render_as_string(hide_password=False),
                        dispatch=CeleryDispatch("amqp://guest:guest@127.0.0.1:18499//"))  # nothing listens
        with pytest.raises(StartFailed, match="could not be started on the workers"):
            engine.create_stack("unsent", {"heat_template_version": "2018-08-31",
                                           "resources": {"n": {"type": "OS::Heat::None"}}})
        record = engine.get_record("unsent")
        assert (record.status, record.lock_owner) == ("FAILED", None)  # not stuck IN_PROGRESS, not locked
        engine.close()


def test_sigterm_stops_a_worker_with_actions_waiting_and_another_finishes_them(cluster, tmp_path):
    stopping = cluster.start_worker(concurrency=2)
    resources = {f"w{i}": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 15, "value": f"v{i}"}}
                 for i in range(8)}
    started = cluster.engine.create_stack("handed", {"heat_template_version": "2018-08-31", "resources": resources})
    limit = time.monotonic() + 120
    while sum(e["resource_status"] == "CREATE_IN_PROGRESS" for e in cluster.engine.events("handed")) < 9:
        assert time.monotonic() < limit, "the worker never started every resource"
        time.sleep(0.1)
    stopping.terminate()  # SIGTERM to the worker, as a service manager stops it
    stopping.wait(30)  # a bound, not a measurement: its tasks are short, its waits parked
    cluster.start_worker()

    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    starts = Counter(e["resource_name"] for e in cluster.engine.events("handed")
                     if e["resource_status"] == "CREATE_IN_PROGRESS")
    assert starts == {"handed": 1} | {f"w{i}": 1 for i in range(8)}


def test_a_nested_stack_holds_no_worker_slot_its_own_resources_need(cluster, tmp_path):
    """One slot: the nested stack's resource waits for a file that a resource of the parent makes
    after a wait of its own; both waits must get that slot while the nested stack is being made."""
    cluster.start_worker(concurrency=1)
    flag = tmp_path / "flag"
    nested = {"heat_template_version": "2018-08-31",
              "resources": {"waiter": {"type": "Test::FileWaiter", "properties": {"path": str(flag), "limit": 60}}},
              "outputs": {"seen": {"value": {"get_attr": ["waiter", "path"]}}}}
    template = {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(nested)}},
        "gate": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 1}},
        "maker": {"type": "Test::Recorded", "depends_on": ["gate"], "properties": {"log": str(flag)}}},
        "outputs": {"seen": {"value": {"get_attr": ["inner", "outputs", "seen"]}}}}
    started = cluster.engine.create_stack("outer", template)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    assert cluster.engine.outputs("outer")[0]["output_value"] == str(flag)
    rows = cluster.engine.resources("outer", nested_depth=1)
    assert {r["resource_name"]: r["resource_status"] for r in rows} == {
        "inner": "CREATE_COMPLETE", "gate": "CREATE_COMPLETE", "maker": "CREATE_COMPLETE",
        "waiter": "CREATE_COMPLETE"}

    nested_stack, = cluster.engine.store.children(started["id"])
    cluster.engine.delete_stack("outer")
    assert cluster.settle(started["id"])["stack_status"] == "DELETE_COMPLETE"
    assert cluster.engine.store.children(started["id"]) == []  # deleted with it, on the workers
    events = [(e.resource_name, e.action, e.status) for e in cluster.engine.store.list_events(nested_stack.id)]
    assert events[-4:] == [(nested_stack.name, "DELETE", "IN_PROGRESS"), ("waiter", "DELETE", "IN_PROGRESS"),
                           ("waiter", "DELETE", "COMPLETE"), (nested_stack.name, "DELETE", "COMPLETE")]


def test_a_resource_paused_at_a_hook_holds_no_worker_slot(cluster, tmp_path):
    from stoker.template.environment import Environment

    cluster.start_worker(concurrency=1)
    log = tmp_path / "made.log"
    template = {"heat_template_version": "2018-08-31", "resources": {
        "held": {"type": "OS::Heat::None"},
        "gate": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 0.5}},
        "other": {"type": "Test::Recorded", "depends_on": ["gate"], "properties": {"log": str(log)}}}}
    environment = Environment.from_dict({"resource_registry": {"resources": {"held": {"hooks": "pre-create"}}}})
    started = cluster.engine.create_stack("hooked", template, environment=environment)
    limit = time.monotonic() + 60
    while creates(log) != {"other": 1}:  # made while "held" stays paused in the only slot's worker
        assert time.monotonic() < limit, "the paused resource held the only worker slot"
        time.sleep(0.1)
    states = {r["resource_name"]: (r["resource_status"], r["resource_status_reason"])
              for r in cluster.engine.resources("hooked")}
    assert states["held"] == ("INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared")
    assert cluster.engine.get_record(started["id"]).status == "IN_PROGRESS"

    cluster.engine.clear_hook("hooked", "held")
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    events = [e["resource_status_reason"] for e in cluster.engine.events("hooked") if e["resource_name"] == "held"]
    assert events.count("CREATE paused until Hook pre-create is cleared") == 1  # looked at again, not re-paused


def test_a_plugin_token_that_cannot_be_stored_is_polled_where_it_is(cluster, tmp_path):
    cluster.start_worker()
    template = {"heat_template_version": "2018-08-31", "resources": {
        "live": {"type": "Test::LiveToken", "properties": {"polls": 4}},
        "after": {"type": "OS::Heat::None", "depends_on": ["live"]}}}
    started = cluster.engine.create_stack("live", template)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    logs = "".join(path.read_text() for path in tmp_path.glob("worker-*.log"))
    assert "live (Test::LiveToken): its CREATE token is not JSON" in logs
