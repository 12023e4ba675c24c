"""Deployment updates run here: a deployment moved onto a new blueprint or new inputs by an ``update``
execution that uninstalls what went, installs what came and reinstalls what changed, nothing else."""

from __future__ import annotations

import pytest

from stoker.errors import Conflict

from .conftest import deploy, states, write_blueprint

OPS = """
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/op.sh
        delete: scripts/op.sh
"""

#: the nodes both blueprints have
KEPT = f"""
inputs:
  port: {{default: 80}}
node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {{ip: 127.0.0.1}}
{OPS}
  web:
    type: cloudify.nodes.WebServer
    properties: {{port: {{get_input: port}}}}
    relationships: [{{type: cloudify.relationships.contained_in, target: host}}]
{OPS}"""

OLD = KEPT + f"""
  old:
    type: cloudify.nodes.Root
{OPS}
outputs:
  port: {{value: {{get_property: [web, port]}}}}
"""

NEW = KEPT + f"""
  fresh:
    type: cloudify.nodes.Root
    relationships: [{{type: cloudify.relationships.depends_on, target: web}}]
{OPS}
outputs:
  port: {{value: {{get_property: [web, port]}}}}
  fresh: {{value: {{get_attribute: [fresh, made]}}}}
capabilities:
  where: {{value: {{get_property: [host, ip]}}}}
"""

SCRIPTS = {"scripts/op.sh": """
    echo "$(ctx node id) $(ctx operation name | sed 's/.*\\.//')" >> "$TRACE"
    ctx instance runtime-properties made yes
    """}


@pytest.fixture
def trace(tmp_path, monkeypatch):
    path = tmp_path / "trace.txt"
    monkeypatch.setenv("TRACE", str(path))
    return path


def _ran(trace) -> list[str]:
    """What ran since the last look (the trace emptied)."""
    lines = sorted(line.strip() for line in trace.read_text().splitlines())
    trace.write_text("")
    return lines


@pytest.fixture
def installed(engine, tmp_path, trace):
    deploy(engine, tmp_path / "v1", OLD, SCRIPTS)
    engine.blueprints.upload(write_blueprint(tmp_path / "v2", NEW, SCRIPTS), "v2")
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    _ran(trace)
    return engine


def test_a_new_blueprint_adds_and_removes_nodes_and_nothing_else_runs(installed, trace):
    updates = installed.executions.updates
    done = updates.update("dep", "v2")
    assert done["state"] == "successful" and done["old_blueprint_id"] == "dep-bp" and done["new_blueprint_id"] == "v2"
    assert _ran(trace) == ["fresh create", "old delete"]
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
    assert done["state"] == "successful" and done["new_inputs"] == {"port": 8080}
    assert ("modify", ["nodes", "web", "properties", "port"]) in [(s["action"], s["entity_id"]) for s in done["steps"]]
    assert _ran(trace) == ["web create", "web delete"]
    assert installed.blueprints.deployments.outputs("dep") == {"port": 8080}
    updates.update("dep", inputs={"port": 9090}, skip_reinstall=True)
    assert _ran(trace) == []
    assert installed.blueprints.deployments.outputs("dep") == {"port": 9090}


def test_a_preview_changes_nothing(installed, trace):
    preview = installed.executions.updates.update("dep", "v2", preview=True)
    assert preview["state"] == "preview" and preview["execution_id"] is None
    assert {"fresh", "old"} <= {s["entity_id"][1] for s in preview["steps"] if s["entity_type"] == "node"}
    assert _ran(trace) == []
    assert installed.blueprints.deployments.get("dep")["blueprint_id"] == "dep-bp"
    assert installed.executions.updates.list("dep") == []


def test_an_update_is_refused_while_the_deployment_runs_an_execution(installed, trace):
    executions = installed.executions
    row = executions.records.start_execution(executions.project_id, executions._deployment("dep")["pk"],
                                             "install", {}, executions.owner, lambda _row: False)
    with pytest.raises(Conflict, match=f"running execution {row['id']}"):
        executions.updates.update("dep", "v2")
    assert executions.updates.list("dep") == []
