"""Deployment updates run here: a deployment moved onto a new blueprint or new inputs by an ``update``
execution that uninstalls what went, installs what came and reinstalls what changed, nothing else."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from update_blueprints import NEW, OLD, folder, ran

from stoker import secretbox
from stoker.blueprint.secrets import MASK
from stoker.cli import main
from stoker.errors import Conflict, StokerError

from .conftest import states


@pytest.fixture
def trace(tmp_path):
    return tmp_path / "trace.txt"


@pytest.fixture
def installed(engine, tmp_path, trace):
    engine.blueprints.upload(folder(tmp_path, "v1", OLD), "dep-bp")
    engine.blueprints.upload(folder(tmp_path, "v2", NEW), "v2")
    engine.blueprints.deployments.create("dep", "dep-bp", {"trace": str(trace)})
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    ran(trace)
    return engine


def test_a_new_blueprint_adds_and_removes_nodes_and_nothing_else_runs(installed, trace):
    updates = installed.executions.updates
    done = updates.update("dep", "v2")
    assert done["state"] == "successful" and done["old_blueprint_id"] == "dep-bp" and done["new_blueprint_id"] == "v2"
    assert ran(trace) == ["fresh create", "old delete"]
    assert states(installed, "dep") == {"host": "started", "web": "started", "fresh": "started"}
    deployments = installed.blueprints.deployments
    assert deployments.get("dep")["blueprint_id"] == "v2"
    assert deployments.outputs("dep") == {"port": 80, "fresh": "yes"}
    assert deployments.capabilities("dep") == {"where": "127.0.0.1"}
    assert {n["id"] for n in deployments.nodes("dep")} == {"host", "web", "fresh"}
    assert [(s["action"], s["entity_id"]) for s in done["steps"] if s["entity_type"] == "node"] == [
        ("remove", ["nodes", "old"]), ("add", ["nodes", "fresh"])]
    assert installed.executions.get(done["execution_id"])["workflow_id"] == "update"
    assert [u["id"] for u in updates.list("dep")] == [done["id"]]


def test_a_changed_input_reinstalls_the_node_reading_it_unless_told_not_to(installed, trace):
    updates = installed.executions.updates
    done = updates.update("dep", inputs={"port": 8080})
    assert done["state"] == "successful" and done["new_inputs"]["port"] == 8080
    assert ("modify", ["nodes", "web", "properties", "port"]) in [(s["action"], s["entity_id"]) for s in done["steps"]]
    assert ran(trace) == ["web create", "web delete"]
    assert installed.blueprints.deployments.outputs("dep") == {"port": 8080}
    updates.update("dep", inputs={"port": 9090}, skip_reinstall=True)
    assert ran(trace) == []
    assert installed.blueprints.deployments.outputs("dep") == {"port": 9090}


def test_a_preview_changes_nothing(installed, trace):
    preview = installed.executions.updates.update("dep", "v2", preview=True)
    assert preview["state"] == "preview" and preview["execution_id"] is None
    assert {"fresh", "old"} <= {s["entity_id"][1] for s in preview["steps"] if s["entity_type"] == "node"}
    assert ran(trace) == []
    assert installed.blueprints.deployments.get("dep")["blueprint_id"] == "dep-bp"
    assert installed.executions.updates.list("dep") == []


def test_an_update_is_refused_while_the_deployment_runs_an_execution(installed, trace):
    executions = installed.executions
    row = executions.records.start_execution(executions.project_id, executions._deployment("dep")["pk"],
                                             "install", {}, executions.owner, lambda _row: False)
    with pytest.raises(Conflict, match=f"running execution {row['id']}"):
        executions.updates.update("dep", "v2")
    assert executions.updates.list("dep") == []


def test_stoker_deployment_update_previews_runs_and_lists(installed, trace, tmp_path):
    env = {"STOKER_HOME": os.environ["STOKER_HOME"], "STOKER_DB_URL": f"sqlite:///{tmp_path / 'stoker.db'}"}

    def stoker(*args: str):
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    preview = stoker("deployment", "update", "dep", "-b", "v2", "--preview", "-f", "json")
    assert preview.exit_code == 0, preview.output
    assert json.loads(preview.stdout)["state"] == "preview" and ran(trace) == []
    done = stoker("deployments", "update", "dep", "-b", "v2", "-i", "port=81", "-f", "json")
    assert done.exit_code == 0, done.output
    update = json.loads(done.stdout)
    assert (update["state"], update["new_inputs"]["port"]) == ("successful", 81)
    assert "'update' workflow execution succeeded" in done.stderr
    assert ran(trace) == ["fresh create", "old delete", "web create", "web delete"]
    listed = json.loads(stoker("deployment", "history", "-d", "dep", "-f", "json").stdout)
    assert [u["id"] for u in listed] == [update["id"]]
    assert json.loads(stoker("deployment", "get-update", update["id"], "-f", "json").stdout)["steps"] == update["steps"]
    refused = stoker("deployment", "update", "dep")
    assert refused.exit_code == 1 and "give a blueprint (-b) or new inputs (-i)" in refused.output


def _linked(target: str) -> str:
    """A blueprint whose node ``client`` depends on node ``target``, recording its establish and unlink."""
    return f"""
tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
dsl_definitions:
  op: &op {{implementation: scripts/op.sh, inputs: {{TRACE: {{get_input: trace}}}}}}
  link: &link {{implementation: scripts/link.sh, inputs: {{TRACE: {{get_input: trace}}}}}}
inputs:
  trace: {{type: string}}
  secret: {{type: string, hidden: true, default: hush}}
node_templates:
  {target}:
    type: cloudify.nodes.Root
    interfaces: {{cloudify.interfaces.lifecycle: {{create: *op, delete: *op}}}}
  client:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.depends_on
        target: {target}
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle: {{establish: *link, unlink: *link}}
"""


def _order(trace) -> list[str]:
    lines = [line.strip() for line in trace.read_text().splitlines()]
    trace.write_text("")
    return lines


@pytest.mark.parametrize("install_first", [False, True])
def test_a_kept_node_unlinks_from_the_removed_target_and_establishes_with_the_added_one(engine, tmp_path,
                                                                                      install_first):
    trace = tmp_path / "trace.txt"
    for version, target in (("v1", "old"), ("v2", "fresh")):
        path = Path(folder(tmp_path, version, _linked(target)))
        (path.parent / "scripts" / "link.sh").write_text(
            'echo "$(ctx source node id) $(ctx operation name | sed \'s/.*\\.//\')" >> "$TRACE"\n')
        engine.blueprints.upload(path, version)
    engine.blueprints.deployments.create("dep", "v1", {"trace": str(trace), "secret": "sesame"})
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    assert _order(trace) == ["old create", "client establish"]
    done = engine.executions.updates.update("dep", "v2", install_first=install_first)
    assert done["state"] == "successful"
    down, up = ["client unlink", "old delete"], ["fresh create", "client establish"]
    assert _order(trace) == (up + down if install_first else down + up)
    [client] = [i for i in engine.blueprints.deployments.node_instances("dep") if i["node_id"] == "client"]
    assert [r["target_name"] for r in client["relationships"]] == ["fresh"]
    assert done["old_inputs"]["secret"] == done["new_inputs"]["secret"] == MASK  # a hidden input's value
    [stored] = engine.executions.updates.rows.list([engine.project_id], id=done["id"])
    assert secretbox.MARK in stored["new_inputs"] and "sesame" not in json.dumps(stored, default=str)  # kept sealed


def test_a_changed_instance_count_adds_or_removes_instances_of_a_kept_node(engine, tmp_path):
    trace = tmp_path / "trace.txt"
    counted = OLD.replace("  old:\n    type: cloudify.nodes.Root\n", "  old:\n    type: cloudify.nodes.Root\n"
                          "    capabilities: {scalable: {properties: {default_instances: {get_input: copies}}}}\n")
    counted = counted.replace("  port: {default: 80}\n", "  port: {default: 80}\n  copies: {default: 1}\n")
    engine.blueprints.upload(folder(tmp_path, "v1", counted), "v1")
    engine.blueprints.deployments.create("dep", "v1", {"trace": str(trace)})
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    ran(trace)
    first = {i["id"] for i in engine.blueprints.deployments.node_instances("dep", "old")}
    assert engine.executions.updates.update("dep", inputs={"copies": 3})["state"] == "successful"
    assert ran(trace) == ["old create", "old create"]
    grown = {i["id"] for i in engine.blueprints.deployments.node_instances("dep", "old")}
    assert first < grown and len(grown) == 3
    assert engine.executions.updates.update("dep", inputs={"copies": 1})["state"] == "successful"
    assert ran(trace) == ["old delete", "old delete"]
    assert {i["id"] for i in engine.blueprints.deployments.node_instances("dep", "old")} == first
    [node] = [n for n in engine.blueprints.deployments.nodes("dep") if n["id"] == "old"]
    assert node["number_of_instances"] == 1


def test_a_cancelled_update_resumes_to_its_end(installed, trace, tmp_path):
    gate = tmp_path / "gate"  # every operation now waits for it
    updates = installed.executions.updates
    found, started = updates.begin("dep", "v2", {"gate": str(gate)}, skip_reinstall=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "gate.held").exists():  # an operation's script runs, waiting for the gate
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert updates.get(found["id"])["state"] == "updating"
    installed.executions.cancel(started.id, force=True)
    started.wait()
    assert updates.get(found["id"])["state"] == "failed"
    assert {n["id"] for n in installed.blueprints.deployments.nodes("dep")} == {"host", "web", "old", "fresh"}
    gate.write_text("")
    assert installed.executions.resume(started.id)["status"] == "terminated"
    assert updates.get(found["id"])["state"] == "successful"
    assert ran(trace) == ["fresh create", "old delete"]
    assert {n["id"] for n in installed.blueprints.deployments.nodes("dep")} == {"host", "web", "fresh"}
    assert installed.blueprints.deployments.outputs("dep") == {"port": 80, "fresh": "yes"}


def test_an_update_planned_on_a_deployment_changed_since_is_refused(installed):
    executions = installed.executions
    deployment = executions.records.get_deployment(installed.project_id, "dep")
    _row, decided = executions.updates.planned(
        deployment, executions.records.get_blueprint(installed.project_id, "v2"), {}, {}, "admin")
    executions.updates.update("dep", inputs={"port": 81}, skip_reinstall=True)  # the deployment changes meanwhile
    with pytest.raises(Conflict, match="changed while its update was planned"):
        executions.start("update", "dep", {}, allow_custom_parameters=True, decided={"update": decided})
    with pytest.raises(StokerError, match="runs as a deployment update"):  # not started on its own
        executions.start("update", "dep")
    assert installed.blueprints.deployments.get("dep")["blueprint_id"] == "dep-bp"
    assert {n["id"] for n in installed.blueprints.deployments.nodes("dep")} == {"host", "web", "old"}


def test_skip_install_and_skip_uninstall_change_the_rows_only(installed, trace):
    done = installed.executions.updates.update("dep", "v2", skip_install=True, skip_uninstall=True)
    assert done["state"] == "successful" and ran(trace) == []
    assert states(installed, "dep") == {"host": "started", "web": "started", "fresh": "uninitialized"}


def test_reinstall_list_reinstalls_an_instance_and_what_it_contains(installed, trace):
    [host] = installed.blueprints.deployments.node_instances("dep", "host")
    done = installed.executions.updates.update("dep", "dep-bp", reinstall_list=[host["id"]])
    assert done["state"] == "successful" and done["steps"] == []
    assert ran(trace) == ["host create", "host delete", "web create", "web delete"]
    with pytest.raises(StokerError, match="reinstall_list: node instance nope is not in deployment dep"):
        installed.executions.updates.update("dep", "dep-bp", reinstall_list=["nope"])
