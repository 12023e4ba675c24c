"""Blueprint executions run by real ``stoker worker`` processes (RabbitMQ, PostgreSQL), one task per
operation step, scripts with ``ctx`` on the worker that runs them."""

from __future__ import annotations

import textwrap
import time
from collections import Counter

import pytest

from .conftest import SETTLE_LIMIT

HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
#: every run of an operation: a "start" line before it acts and an "end" line after its last ctx call
OPERATION = """\
set -e
op=$(ctx operation name | sed 's/.*\\.//')
me=$(ctx instance id 2>/dev/null || ctx source instance id)
echo "start $op $me $(awk '{print $5}' /proc/$PPID/stat)" >> "$runs"
if [ "$op" = configure ] && [ -e "$runs.broken" ]; then echo "configure is broken" >&2; exit 4; fi
sleep "$hold"
ctx instance runtime-properties "$op" done 2>/dev/null || ctx source instance runtime-properties "$op" done
echo "end $op $me" >> "$runs"
"""
LIFECYCLE = ("create", "configure", "start", "stop", "delete")


def blueprint(runs, hold):
    ops = "\n".join(f"        {op}: {{implementation: scripts/op.sh, inputs: {{runs: '{runs}', hold: {hold}}}}}"
                    for op in LIFECYCLE)
    return HEADER + textwrap.dedent("""\
        node_templates:
          db:
            type: cloudify.nodes.Root
            interfaces:
              cloudify.interfaces.lifecycle:
        {ops}
          app:
            type: cloudify.nodes.Root
            capabilities: {{scalable: {{properties: {{default_instances: 3}}}}}}
            interfaces:
              cloudify.interfaces.lifecycle:
        {ops}
            relationships:
              - type: cloudify.relationships.connected_to
                target: db
                source_interfaces:
                  cloudify.interfaces.relationship_lifecycle:
                    preconfigure: {{implementation: scripts/op.sh, inputs: {{runs: '{runs}', hold: 0}}}}
        """).format(ops=textwrap.indent(ops, "        "), runs=runs)


def deploy(cluster, tmp_path, hold=0.0, operation=OPERATION):
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "op.sh").write_text(operation)
    runs = tmp_path / "runs.log"
    (folder / "blueprint.yaml").write_text(blueprint(runs, hold))
    cluster.engine.blueprints.upload(folder / "blueprint.yaml", "bp")
    cluster.engine.blueprints.deployments.create("dep", "bp", {})
    return runs


def finish(cluster, execution):
    limit = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < limit:
        found = cluster.engine.executions.get(execution["id"])
        if found["status"] not in ("pending", "started", "cancelling", "force_cancelling"):
            return found
        time.sleep(0.2)
    raise AssertionError(f"execution {execution['id']} still running after {SETTLE_LIMIT}s")


def install_until_an_operation_runs(cluster, runs):
    started = cluster.engine.executions.start("install", "dep")
    limit = time.monotonic() + 120
    while not (runs.exists() and runs.read_text().startswith("start")):
        assert time.monotonic() < limit, "no operation started"
        time.sleep(0.05)
    return started


def runs_of(runs, kind):
    return Counter((f[1], f[2]) for f in (line.split() for line in runs.read_text().splitlines()) if f[0] == kind)


def instances(cluster):
    return {i["id"]: i for i in cluster.engine.blueprints.deployments.node_instances("dep")}


def expected(cluster, operations, relationship=()):
    return Counter({(op, i["id"]): 1 for i in instances(cluster).values() for op in operations}
                   | {(op, i["id"]): 1 for i in instances(cluster).values() if i["node_id"] == "app"
                      for op in relationship})


def test_install_and_uninstall_run_each_operation_once_on_the_workers(cluster, tmp_path):
    first, second = cluster.start_worker(), cluster.start_worker()
    cluster.listening(2)
    runs = deploy(cluster, tmp_path, hold=0.2)
    started = cluster.engine.executions.start("install", "dep")
    assert started["status"] == "started"  # the asking side only hands it over

    done = finish(cluster, started)
    assert done["status"] == "terminated", done["error"]
    installed = expected(cluster, ("create", "configure", "start"), ("preconfigure",))
    assert runs_of(runs, "end") == runs_of(runs, "start") == installed
    assert {int(line.split()[3]) for line in runs.read_text().splitlines() if line.startswith("start")} == {
        first.pid, second.pid}  # both workers ran scripts
    assert {i["state"] for i in instances(cluster).values()} == {"started"}
    assert all(i["runtime_properties"] == {"create": "done", "configure": "done", "start": "done"}
               for i in instances(cluster).values() if i["node_id"] == "db")
    lines = runs.read_text().splitlines()
    db_started = lines.index(next(line for line in lines if line.startswith("end start db")))
    assert all(lines.index(line) > db_started for line in lines if line.startswith("start preconfigure"))
    events = cluster.engine.executions.events(started["id"])
    assert events[0]["event_type"] == "workflow_started" and events[-1]["event_type"] == "workflow_succeeded"
    assert sum(e["event_type"] == "task_succeeded" for e in events) == sum(installed.values())

    runs.unlink()
    removed = finish(cluster, cluster.engine.executions.start("uninstall", "dep"))
    assert removed["status"] == "terminated", removed["error"]
    assert runs_of(runs, "end") == runs_of(runs, "start") == expected(cluster, ("stop", "delete"))
    assert {i["state"] for i in instances(cluster).values()} == {"deleted"}


def test_a_dry_run_on_the_workers_runs_no_operation_and_changes_no_state(cluster, tmp_path):
    cluster.start_worker()
    cluster.listening(1)
    runs = deploy(cluster, tmp_path)
    done = finish(cluster, cluster.engine.executions.start("install", "dep", dry_run=True))
    assert (done["status"], done["is_dry_run"]) == ("terminated", True), done["error"]
    assert not runs.exists()  # no script ran
    assert {i["state"] for i in instances(cluster).values()} == {"uninitialized"}
    events = cluster.engine.executions.events(done["id"])
    assert events[0]["message"] == "Starting 'install' workflow execution (dry run)"
    assert events[-1]["message"] == "'install' workflow execution succeeded (dry run)"
    reported = Counter((e["operation"].rsplit(".", 1)[1], e["node_instance_id"]) for e in events
                       if e["event_type"] == "task_succeeded" and e["message"].endswith("' (dry run)"))
    assert reported == expected(cluster, ("create", "configure", "start"), ("preconfigure",))
    assert {e["event_type"] for e in events} == {"workflow_started", "task_succeeded", "workflow_succeeded"}


def test_a_failed_operation_fails_the_execution_with_its_reason(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    deploy(cluster, tmp_path, operation='echo "db is down" >&2\nexit 3\n')  # uploaded with the blueprint
    done = finish(cluster, cluster.engine.executions.start("install", "dep"))
    assert done["status"] == "failed"
    assert "create on db" in done["error"] and "db is down" in done["error"]
    assert cluster.engine.executions.events(done["id"])[-1]["event_type"] == "workflow_failed"
    assert {i["state"] for i in instances(cluster).values() if i["node_id"] == "app"} == {"uninitialized"}


@pytest.mark.slow  # a worker killed mid-install, the other finishing it
def test_sigkill_of_a_worker_mid_install_completes_every_operation_exactly_once(cluster, tmp_path):
    """The guarantee: every operation ends (its last ctx call and after) exactly once; an operation
    whose worker died under it runs again from its start on another worker, and only such ones."""
    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path, hold=1.0)
    started = cluster.engine.executions.start("install", "dep")
    limit = time.monotonic() + 120
    while not any(line.startswith("start") and int(line.split()[3]) == doomed.pid
                  for line in (runs.read_text().splitlines() if runs.exists() else [])):
        assert time.monotonic() < limit, "the doomed worker never started an operation"
        time.sleep(0.05)
    cluster.kill(doomed)  # in the middle of its operation's hold
    killed = {(f[1], f[2]) for f in (line.split() for line in runs.read_text().splitlines())
              if f[0] == "start" and int(f[3]) == doomed.pid} - set(runs_of(runs, "end"))
    assert killed

    done = finish(cluster, started)
    assert done["status"] == "terminated", done["error"]
    installed = expected(cluster, ("create", "configure", "start"), ("preconfigure",))
    assert runs_of(runs, "end") == installed  # each completed exactly once
    again = {key for key, count in runs_of(runs, "start").items() if count > 1}
    assert again <= killed and all(runs_of(runs, "start")[key] == 2 for key in again)
    assert {i["state"] for i in instances(cluster).values()} == {"started"}


@pytest.mark.slow  # the CLI as a process, following the workers
def test_the_cli_hands_install_to_the_workers_and_follows_it_to_its_end(cluster, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path)
    stoker = Path(sys.executable).parent / "stoker"
    env = {**cluster.env, "STOKER_QUEUE": cluster.queue, "STOKER_DB_URL": cluster.db_url}
    shown = subprocess.run([str(stoker), "--broker", cluster.broker, "install", "dep", "--wait"], env=env,
                           capture_output=True, text=True, timeout=SETTLE_LIMIT)
    assert shown.returncode == 0, shown.stderr
    assert "workflow_succeeded" in shown.stderr  # the workers' events, followed to the end
    assert "terminated" in shown.stdout
    assert sum(runs_of(runs, "end").values()) == 3 * 4 + 3  # every operation ran, on the workers
    assert {i["state"] for i in instances(cluster).values()} == {"started"}


def test_a_cancel_reaches_the_workers_and_running_operations_finish(cluster, tmp_path):
    cluster.start_worker()
    runs = deploy(cluster, tmp_path, hold=1.0)
    started = install_until_an_operation_runs(cluster, runs)
    assert cluster.engine.executions.cancel(started["id"])["status"] == "cancelling"
    done = finish(cluster, started)
    assert done["status"] == "cancelled", done["error"]
    assert cluster.engine.executions.events(done["id"])[-1]["event_type"] == "workflow_cancelled"
    assert runs_of(runs, "end") == runs_of(runs, "start")  # what ran was let finish
    assert 0 < sum(runs_of(runs, "end").values()) < 3 * 4 + 3  # and nothing started after the cancel


def test_scale_out_and_in_and_heal_run_on_the_workers(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path)
    assert finish(cluster, cluster.engine.executions.start("install", "dep"))["status"] == "terminated"
    before = set(instances(cluster))

    out = finish(cluster, cluster.engine.executions.start("scale", "dep", {"scalable_entity_name": "app", "delta": 2}))
    assert out["status"] == "terminated", out["error"]
    added = set(instances(cluster)) - before
    assert len(added) == 2 and all(instances(cluster)[i]["state"] == "started" for i in added)
    assert {key for key in runs_of(runs, "end") if key[1] in added} == {
        (op, i) for i in added for op in ("create", "configure", "start", "preconfigure")}

    healed = sorted(added)[0]
    runs.unlink()
    again = finish(cluster, cluster.engine.executions.start("heal", "dep", {"node_instance_id": healed,
                                                                          "force_reinstall": True}))
    assert again["status"] == "terminated", again["error"]
    assert runs_of(runs, "end") == Counter({(op, healed): 1 for op in (
        "stop", "delete", "create", "configure", "start", "preconfigure")})

    back = finish(cluster, cluster.engine.executions.start("scale", "dep", {"scalable_entity_name": "app", "delta": -2}))
    assert back["status"] == "terminated", back["error"]
    assert set(instances(cluster)) == before  # the removed instances went once their uninstall ran


def test_a_failed_scale_out_on_the_workers_takes_back_what_it_added_and_rolls_back(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path)
    assert finish(cluster, cluster.engine.executions.start("install", "dep"))["status"] == "terminated"
    before = set(instances(cluster))
    (tmp_path / "runs.log.broken").touch()
    runs.unlink()
    failed = finish(cluster, cluster.engine.executions.start("scale", "dep", {"scalable_entity_name": "app"}))
    assert failed["status"] == "failed" and "configure is broken" in failed["error"]
    [modification] = cluster.engine.executions.modifications.list("dep")
    [added] = [i["id"] for i in modification["node_instances"]["added_and_related"] if i.get("modification") == "added"]
    assert modification["status"] == "rolledback" and set(instances(cluster)) == before
    # cut short while configuring: deleted, not stopped (cloudify-common's rollback_node_instances)
    assert {op for op, i in runs_of(runs, "end") if i == added} == {"create", "preconfigure", "delete"}
    assert cluster.engine.executions.events(failed["id"])[-1]["event_type"] == "workflow_failed"


def test_a_failed_execution_resumed_on_the_workers_runs_only_what_did_not_succeed(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path)
    broken = tmp_path / "runs.log.broken"
    broken.touch()
    failed = finish(cluster, cluster.engine.executions.start("install", "dep"))
    assert failed["status"] == "failed" and "configure is broken" in failed["error"]
    broken.unlink()
    resumed = finish(cluster, cluster.engine.executions.resume(failed["id"]))
    assert resumed["status"] == "terminated", resumed["error"]
    installed = expected(cluster, ("create", "configure", "start"), ("preconfigure",))
    assert runs_of(runs, "end") == installed  # what succeeded before the failure did not run again
    assert {i["state"] for i in instances(cluster).values()} == {"started"}


def test_a_forced_cancel_kills_the_scripts_the_workers_run(cluster, tmp_path):
    cluster.start_worker(), cluster.start_worker()
    runs = deploy(cluster, tmp_path, hold=600)
    started = install_until_an_operation_runs(cluster, runs)
    cluster.engine.executions.cancel(started["id"], force=True)
    done = finish(cluster, started)  # long before the scripts' 600 s hold
    assert done["status"] == "cancelled", done["error"]
    assert runs_of(runs, "end") == Counter()
    assert cluster.engine.executions.events(done["id"])[-1]["event_type"] == "workflow_cancelled"


def test_operations_waiting_for_their_retry_hold_no_worker(cluster, tmp_path):
    cluster.start_worker(concurrency=1)
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "create.sh").write_text(textwrap.dedent("""\
        if [ "$(ctx operation retry-number)" -lt 1 ]; then ctx operation retry "not yet" @1.5; exit 0; fi
        ctx instance runtime-properties made yes
        """))
    (folder / "blueprint.yaml").write_text(HEADER + textwrap.dedent("""\
        node_templates:
          app:
            type: cloudify.nodes.Root
            capabilities: {scalable: {properties: {default_instances: 3}}}
            interfaces:
              cloudify.interfaces.lifecycle:
                create: {implementation: scripts/create.sh, max_retries: 2}
        """))
    cluster.engine.blueprints.upload(folder / "blueprint.yaml", "bp")
    cluster.engine.blueprints.deployments.create("dep", "bp", {})

    done = finish(cluster, cluster.engine.executions.start("install", "dep"))
    assert done["status"] == "terminated", done["error"]
    assert all(i["runtime_properties"] == {"made": "yes"} for i in instances(cluster).values())
    creates = [e for e in cluster.engine.executions.events(done["id"]) if (e.get("operation") or "").endswith("create")]
    kinds = [e["event_type"] for e in creates]
    assert kinds.count("task_rescheduled") == kinds.count("task_succeeded") == 3
    # one process with one slot: the three waited for their retry at once, none after another
    assert max(i for i, kind in enumerate(kinds) if kind == "task_rescheduled") < kinds.index("task_succeeded")
