"""Instance health as Cloudify 7 keeps it: check_status and check_drift keep each instance's result in its
``system_properties`` (``status`` with ``previous_status``, ``configuration_drift`` and its relationships'),
with ``is_status_check_ok`` / ``has_configuration_drift`` read from them and the deployment's and nodes'
``unavailable_instances`` / ``drifted_instances`` counting them; shown by ``stoker node-instance`` and
``stoker deployment``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from stoker.cli import main

from .conftest import deploy
from health_blueprint import BLUEPRINT, installed, instance


def test_check_status_keeps_each_result_and_the_counts_follow(engine, tmp_path):
    deployments = engine.blueprints.deployments
    marks = installed(engine, tmp_path / "marks")
    started = instance(engine, "dep", "app")["system_properties"]["status"]
    assert (started["ok"], started["task"], started["result"]) == (True, None, None)  # reaching started, as Cloudify

    marks.set("app", "down")
    failed = engine.executions.start("check_status", "dep")
    assert failed["status"] == "failed" and "app" in failed["error"]
    assert sorted(marks.trace()) == ["app check_status", "host check_status", "web check_status"]
    app = instance(engine, "dep", "app")
    status = app["system_properties"]["status"]
    assert (status["ok"], status["task"], "exited with code 1" in status["result"]) == (
        False, "script_runner.tasks.run", True)
    assert app["system_properties"]["previous_status"] == started
    assert (app["is_status_check_ok"], app["has_configuration_drift"]) == (False, False)
    assert instance(engine, "dep", "web")["system_properties"]["status"]["ok"] is True
    assert deployments.get("dep")["unavailable_instances"] == 1
    assert {n["id"]: n["unavailable_instances"] for n in deployments.nodes("dep")} == {"host": 0, "web": 0, "app": 1}

    (marks.folder / "app-down").unlink()
    assert engine.executions.start("check_status", "dep")["status"] == "terminated"
    app = instance(engine, "dep", "app")
    assert app["is_status_check_ok"] and app["system_properties"]["previous_status"] == status
    assert deployments.get("dep")["unavailable_instances"] == 0


def test_instances_never_started_count_as_unavailable(engine, tmp_path):
    engine.blueprints.upload(BLUEPRINT, "bp")
    engine.blueprints.deployments.create("fresh", "bp", {"folder": str(tmp_path)})
    assert engine.blueprints.deployments.get("fresh")["unavailable_instances"] == 3
    assert {i["is_status_check_ok"] for i in engine.blueprints.deployments.node_instances("fresh")} == {False}


def test_check_drift_keeps_what_each_check_returned(engine, tmp_path):
    deployments = engine.blueprints.deployments
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "drift", "port 81")
    assert engine.executions.start("check_drift", "dep")["status"] == "terminated"
    web, app = instance(engine, "dep", "web"), instance(engine, "dep", "app")
    drift = web["system_properties"]["configuration_drift"]
    assert (drift["ok"], drift["task"], drift["result"]) == (True, "script_runner.tasks.run", "port 81")
    assert web["has_configuration_drift"] and not app["has_configuration_drift"]
    assert app["system_properties"]["configuration_drift"]["result"] is None
    assert deployments.get("dep")["drifted_instances"] == 1
    assert {n["id"]: n["drifted_instances"] for n in deployments.nodes("dep")} == {"host": 0, "web": 1, "app": 0}


RELATED = """
node_templates:
  db:
    type: cloudify.nodes.Root
  web:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.connected_to
        target: db
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            check_drift: scripts/source.sh
        target_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            check_drift: scripts/target.py
"""
RELATED_SCRIPTS = {"scripts/source.sh": "ctx returns @'{\"url\": \"changed\"}'\n",
                   "scripts/target.py": "raise SystemExit('cannot tell')\n"}


def test_a_relationship_s_drift_checks_are_kept_on_each_side(engine, tmp_path):
    dep = deploy(engine, tmp_path / "bp", RELATED, RELATED_SCRIPTS)
    engine.executions.start("install", dep)
    failed = engine.executions.start("check_drift", dep)
    assert failed["status"] == "failed"  # the target side's check failed: kept, and the workflow fails
    web, db = instance(engine, dep, "web"), instance(engine, dep, "db")
    [source] = web["system_properties"]["source_relationships_configuration_drift"].values()
    assert list(web["system_properties"]["source_relationships_configuration_drift"]) == [db["id"]]
    assert (source["ok"], source["result"]) == (True, {"url": "changed"})
    [target] = db["system_properties"]["target_relationships_configuration_drift"].values()
    assert list(db["system_properties"]["target_relationships_configuration_drift"]) == [web["id"]]
    assert target["ok"] is False and "exited with code 1" in target["result"]
    assert web["has_configuration_drift"] and db["has_configuration_drift"]


def test_the_stoker_command_shows_health(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}

    def run(*args: str, ok: bool = True) -> str:
        done = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        assert (done.exit_code == 0) == ok, done.output
        return done.stdout

    folder = tmp_path / "marks"
    folder.mkdir()
    run("blueprint", "upload", str(BLUEPRINT), "-b", "bp")
    run("deployment", "create", "dep", "-b", "bp", "-i", f"folder={folder}")
    run("install", "dep")
    (folder / "host-down").write_text("")
    run("execution", "start", "check_status", "-d", "dep", ok=False)
    rows = json.loads(run("node-instance", "list", "-d", "dep", "-f", "json"))
    assert {r["node_id"]: r["is_status_check_ok"] for r in rows} == {"host": False, "web": True, "app": True}
    host = next(r for r in rows if r["node_id"] == "host")
    shown = json.loads(run("node-instance", "get", host["id"], "-f", "json"))
    assert shown["system_properties"]["status"]["ok"] is False and not shown["has_configuration_drift"]
    [listed] = json.loads(run("deployment", "list", "-f", "json"))
    assert (listed["unavailable_instances"], listed["drifted_instances"]) == (1, 0)
    assert json.loads(run("deployment", "get", "dep", "-f", "json"))["unavailable_instances"] == 1
    nodes = json.loads(run("node", "list", "-d", "dep", "-f", "json"))
    assert {n["id"]: n["unavailable_instances"] for n in nodes} == {"host": 1, "web": 0, "app": 0}


# -- heal, as Cloudify 7 heals ------------------------------------------------------------------------------
def _keys(engine, node: str) -> set[str]:
    return set(instance(engine, "dep", node)["system_properties"])


def test_heal_runs_a_failing_instance_s_heal_operations_and_it_passes_its_check(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "down")
    web = instance(engine, "dep", "web")["id"]
    done = engine.executions.start("heal", "dep", {"node_instance_id": web, "diagnose_value": "web is slow"})
    assert done["status"] == "terminated", done["error"]
    lines = marks.trace()
    assert sorted(lines[:3]) == ["app check_status", "host check_status", "web check_status"]
    assert lines[3:] == ["web preheal", "web heal"]  # nothing reinstalled
    status = instance(engine, "dep", "web")["system_properties"]["status"]
    assert (status["ok"], status["task"], status["healed"]) == (True, None, True)
    assert _keys(engine, "web") == {"configuration_drift", "status", "previous_status"}  # the marks are gone
    assert engine.blueprints.deployments.get("dep")["unavailable_instances"] == 0
    logs = [e["message"] for e in engine.executions.events(done["id"], include_logs=True)]
    assert f"Starting 'heal' workflow on {web}, Diagnosis: web is slow" in logs


def test_heal_reinstalls_a_failing_instance_without_heal_with_what_it_contains(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("host", "down")
    app = instance(engine, "dep", "app")["id"]  # its host's subgraph is looked at
    done = engine.executions.start("heal", "dep", {"node_instance_id": app})
    assert done["status"] == "terminated", done["error"]
    lines = marks.trace()[3:]
    assert sorted(lines[:2]) == ["app delete", "web delete"] and lines[2:4] == ["host delete", "host create"]
    assert sorted(lines[4:]) == ["app create", "web create"]
    assert {i["state"] for i in engine.blueprints.deployments.node_instances("dep")} == {"started"}
    assert instance(engine, "dep", "host")["is_status_check_ok"]


def test_a_failed_heal_is_reinstalled_unless_reinstalling_is_not_allowed(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("web", "down")
    marks.set("web", "noheal")
    web = instance(engine, "dep", "web")["id"]
    refused = engine.executions.start("heal", "dep", {"allow_reinstall": False})
    assert refused["status"] == "failed"
    assert refused["error"] == f"allow_reinstall is false, but would need to reinstall instances: {web}"
    assert marks.trace()[3:] == ["web preheal", "web heal"]

    done = engine.executions.start("heal", "dep")
    assert done["status"] == "terminated", done["error"]
    assert marks.trace()[3:] == ["web preheal", "web heal", "web delete", "web create"]
    assert _keys(engine, "web") == {"configuration_drift", "status", "previous_status"}
    ignored = [e for e in engine.executions.events(done["id"]) if e["event_type"] == "task_failed"]
    assert [(e["node_instance_id"], e["operation"]) for e in ignored] == [
        (web, "cloudify.interfaces.validation.check_status"), (web, "cloudify.interfaces.lifecycle.heal")]


def test_a_reinstall_that_is_not_allowed_is_refused_before_anything_runs(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("app", "down")
    app = instance(engine, "dep", "app")["id"]
    refused = engine.executions.start("heal", "dep", {"node_instance_id": app, "allow_reinstall": False})
    assert refused["error"] == f"allow_reinstall is false, but would need to reinstall instances: {app}"
    assert len(marks.trace()) == 3  # the checks only


def test_heal_without_check_status_trusts_each_instance_s_last_check(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("app", "down")
    app = instance(engine, "dep", "app")["id"]
    unchecked = {"node_instance_id": app, "check_status": False}
    assert engine.executions.start("heal", "dep", unchecked)["status"] == "terminated"
    assert marks.trace() == []  # it passed its check when it started

    assert engine.executions.start("check_status", "dep")["status"] == "failed"
    marks.trace()
    assert engine.executions.start("heal", "dep", unchecked)["status"] == "terminated"
    assert marks.trace() == ["app delete", "app create"]
    assert instance(engine, "dep", "app")["is_status_check_ok"]


def test_a_resumed_heal_keeps_what_it_decided(engine, tmp_path):
    marks = installed(engine, tmp_path / "marks")
    marks.set("host", "down")
    marks.set("app", "nocreate")
    failed = engine.executions.start("heal", "dep")
    assert failed["status"] == "failed" and "app" in failed["error"]
    assert "host create" in marks.trace()  # the host is back (and passes its check), app is not
    assert instance(engine, "dep", "host")["is_status_check_ok"]

    (marks.folder / "app-nocreate").unlink()
    resumed = engine.executions.resume(failed["id"])
    assert resumed["status"] == "terminated", resumed["error"]
    # the check that failed runs again (as any failed task); what was decided stands: the reinstall goes on
    assert marks.trace() == ["host check_status", "app create"]
    assert {i["state"] for i in engine.blueprints.deployments.node_instances("dep")} == {"started"}
    assert "stoker_plan" not in instance(engine, "dep", "app")["system_properties"]
