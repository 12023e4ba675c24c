"""``stoker execution start WORKFLOW -d DEP --dry-run``, as Cloudify's: the graph is walked and each operation reported
as succeeded "(dry run)", none runs (script, plugin task), no instance state changes, the execution ends
``terminated`` with ``is_dry_run``; a real install after it runs the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker.blueprint.plugin_catalog import PluginCatalog
from stoker.cli import main
from stoker.errors import Conflict

from .conftest import deploy
from .test_plugin_operations import _install, _source

#: every operation's script writes the marker file: only a real run leaves it
BLUEPRINT = Path(__file__).resolve().parents[1] / "templates" / "blueprints" / "dry_run" / "blueprint.yaml"
#: the events of a dry-run install of ``BLUEPRINT``, as Cloudify's dry run reports them
DRY_INSTALL_EVENTS = [
    ("workflow_started", "Starting 'install' workflow execution (dry run)"),
    ("task_succeeded", "Task succeeded 'cloudify.interfaces.lifecycle.create' (dry run)"),
    ("task_succeeded", "Task succeeded 'cloudify.interfaces.lifecycle.configure' (dry run)"),
    ("task_succeeded", "Task succeeded 'cloudify.interfaces.relationship_lifecycle.establish' (dry run)"),
    ("workflow_succeeded", "'install' workflow execution succeeded (dry run)")]


def _stoker(env, *args):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_stoker_dry_run_install_runs_no_script_then_the_real_install_does(tmp_path):
    env = {"STOKER_HOME": str(tmp_path / "home"), "STOKER_DB_URL": f"sqlite:///{tmp_path / 's.db'}"}
    marker = tmp_path / "marker"
    assert _stoker(env, "blueprint", "upload", str(BLUEPRINT), "-b", "bp").exit_code == 0
    assert _stoker(env, "deployment", "create", "dep", "-b", "bp", "-i", f"marker={marker}").exit_code == 0

    refused = _stoker(env, "execution", "start", "install", "-d", "dep", "--dry-run", "--queue")
    assert refused.exit_code == 2 and "--queue is mutually exclusive with --dry-run" in refused.output
    done = _stoker(env, "execution", "start", "install", "-d", "dep", "--dry-run", "--wait", "-f", "json")
    assert done.exit_code == 0, done.output
    execution = json.loads(done.stdout)
    assert (execution["status"], execution["is_dry_run"]) == ("terminated", True)
    assert not marker.exists()
    assert "Task succeeded 'cloudify.interfaces.lifecycle.create' (dry run)" in done.stderr
    events = json.loads(_stoker(env, "event", "list", execution["id"], "--include-logs", "-f", "json").stdout)
    assert [(e["event_type"], e["message"]) for e in events] == DRY_INSTALL_EVENTS
    instances = json.loads(_stoker(env, "node-instance", "list", "-d", "dep", "-f", "json").stdout)
    assert {i["state"] for i in instances} == {"uninitialized"}
    shown = json.loads(_stoker(env, "execution", "get", execution["id"], "-f", "json").stdout)
    assert shown["is_dry_run"] is True

    installed = _stoker(env, "execution", "start", "install", "-d", "dep", "-f", "json")
    assert installed.exit_code == 0, installed.output
    assert json.loads(installed.stdout)["is_dry_run"] is False and marker.exists()
    instances = json.loads(_stoker(env, "node-instance", "list", "-d", "dep", "-f", "json").stdout)
    assert {i["state"] for i in instances} == {"started"}


def test_a_dry_run_runs_no_plugin_task_nor_makes_its_virtualenv(engine, tmp_path):
    PluginCatalog(tmp_path / "home" / "plugins").upload(_source(tmp_path), [])
    execution = _install(engine, tmp_path, dry_run=True)
    assert (execution["status"], execution["is_dry_run"]) == ("terminated", True)
    assert not (tmp_path / "home" / "plugin-envs").exists()  # nothing to run its tasks in was made
    assert {(i["node_id"], i["state"], json.dumps(i["runtime_properties"]))
            for i in engine.blueprints.deployments.node_instances("dep")} == {("thing", "uninitialized", "{}"),
                                                                             ("peer", "uninitialized", "{}")}
    reported = [e["message"] for e in engine.executions.events(execution["id"]) if e["event_type"] == "task_succeeded"]
    assert sorted(reported) == sorted(f"Task succeeded 'cloudify.interfaces.{op}' (dry run)" for op in (
        "lifecycle.create", "lifecycle.configure", "lifecycle.start", "relationship_lifecycle.preconfigure",
        "relationship_lifecycle.establish"))


def test_a_dry_run_is_an_execution_like_any_other_while_another_runs(engine, tmp_path):
    """As Cloudify's: refused while the deployment runs another execution, queued behind it with ``queue``."""
    gate = tmp_path / "go"
    deploy(engine, tmp_path / "bp", """
        node_templates:
          slow:
            type: cloudify.nodes.Root
            interfaces:
              cloudify.interfaces.lifecycle:
                create: {implementation: scripts/wait.sh, inputs: {gate: %s}}
        """ % gate, {"scripts/wait.sh": 'while [ ! -e "$gate" ]; do sleep 0.05; done\n'})
    running = engine.executions.begin("start", "install", "dep")
    try:
        with pytest.raises(Conflict, match="is running execution"):
            engine.executions.start("install", "dep", dry_run=True)
        queued = engine.executions.start("uninstall", "dep", queue=True, dry_run=True)
        assert (queued["status"], queued["is_dry_run"]) == ("queued", True)
    finally:
        gate.touch()  # the waiting script ends whatever happened above
    assert running.wait()["status"] == "terminated"
    ran = engine.executions.get(queued["id"])
    assert (ran["status"], ran["is_dry_run"]) == ("terminated", True)
    assert [i["state"] for i in engine.blueprints.deployments.node_instances("dep")] == ["started"]
    assert engine.executions.events(queued["id"])[-1]["message"] == "'uninstall' workflow execution succeeded (dry run)"
