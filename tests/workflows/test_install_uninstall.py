"""install and uninstall on a stored deployment: scripts, runtime properties, runtime functions, events."""

from __future__ import annotations

import pytest

from stoker.errors import Conflict, NotFound

from .conftest import deploy, runtime, states

BLUEPRINT = """
inputs:
  port: {type: integer, default: 8080}
node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {ip: 127.0.0.1}
  db:
    type: cloudify.nodes.DBMS
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/db_create.sh
        delete: scripts/trace.sh
  app:
    type: cloudify.nodes.WebServer
    properties:
      port: {get_input: port}
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/app_create.py
          inputs:
            greeting: hello
            db_url: {concat: ["pg://", {get_attribute: [db, address]}, "/main"]}
        configure: scripts/trace.sh
        start: scripts/trace.sh
        stop: scripts/trace.sh
        delete: scripts/trace.sh
    relationships:
      - {type: cloudify.relationships.contained_in, target: host}
      - type: cloudify.relationships.connected_to
        target: db
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            preconfigure:
              implementation: scripts/link.sh
              inputs: {peer: {get_attribute: [TARGET, address]}}
            unlink: scripts/trace.sh
outputs:
  url:
    value: {concat: ["http://", {get_attribute: [app, bound]}, ":", {get_property: [app, port]}]}
  db_address: {value: {get_attribute: [db, address]}}
capabilities:
  app_runtime: {value: {get_attributes_dict: [app, bound, db_seen]}}
"""

SCRIPTS = {
    "scripts/db_create.sh": """
        ctx instance runtime-properties address 10.0.0.7
        echo "db_create $(ctx node id)" >> "$TRACE"
    """,
    "scripts/app_create.py": """
        import os
        from stoker import ctx
        from cloudify.state import ctx_parameters as inputs
        ctx.instance.runtime_properties["bound"] = "0.0.0.0"
        ctx.instance.runtime_properties["db_url"] = inputs["db_url"]
        ctx.logger.info("%s from %s on port %s", inputs["greeting"], ctx.node.name, ctx.node.properties["port"])
        with open(os.environ["TRACE"], "a") as trace:
            trace.write("app_create\\n")
    """,
    "scripts/link.sh": """
        ctx source instance runtime-properties db_seen "$peer"
        echo "link $(ctx source node id)->$(ctx target node id)" >> "$TRACE"
    """,
    "scripts/trace.sh": """
        echo "$(ctx operation name | sed 's/.*\\.//') $(ctx node id 2>/dev/null || ctx source node id)" >> "$TRACE"
    """,
}


@pytest.fixture
def engine(any_engine):
    return any_engine


@pytest.fixture
def dep(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE", str(tmp_path / "trace.txt"))
    return deploy(engine, tmp_path / "bp", BLUEPRINT, SCRIPTS)


def _trace(tmp_path):
    return (tmp_path / "trace.txt").read_text().splitlines()


def test_install_runs_scripts_in_order_and_functions_read_runtime_properties(engine, dep, tmp_path):
    execution = engine.executions.start("install", dep)
    assert execution["status"] == "terminated", execution["error"]
    assert states(engine, dep) == {"host": "started", "db": "started", "app": "started"}
    assert _trace(tmp_path) == ["db_create db", "app_create", "link app->db", "configure app", "start app"]
    app = runtime(engine, dep, "app")
    assert app == {"bound": "0.0.0.0", "db_url": "pg://10.0.0.7/main", "db_seen": "10.0.0.7"}
    deployments = engine.blueprints.deployments
    assert deployments.outputs(dep) == {"url": "http://0.0.0.0:8080", "db_address": "10.0.0.7"}
    [app_id] = [i["id"] for i in deployments.node_instances(dep) if i["node_id"] == "app"]
    assert deployments.capabilities(dep) == {"app_runtime": {app_id: {"bound": "0.0.0.0", "db_seen": "10.0.0.7"}}}
    logs = engine.executions.events(execution["id"], include_logs=True)
    assert any(e["type"] == "cloudify_log" and e["message"] == "hello from app on port 8080" for e in logs)
    types = [e["event_type"] for e in engine.executions.events(execution["id"])]
    assert types[0] == "workflow_started" and types[-1] == "workflow_succeeded"
    assert types.count("task_succeeded") == 5
    assert all(e["type"] == "cloudify_event" for e in engine.executions.events(execution["id"]))


def test_uninstall_reverses_and_unlinks(engine, dep, tmp_path):
    engine.executions.start("install", dep)
    (tmp_path / "trace.txt").unlink()
    execution = engine.executions.start("uninstall", dep)
    assert execution["status"] == "terminated", execution["error"]
    assert _trace(tmp_path) == ["stop app", "unlink app", "delete app", "delete db"]
    assert set(states(engine, dep).values()) == {"deleted"}


def test_executions_are_listed_and_read_back(engine, dep):
    first = engine.executions.start("install", dep)
    listed = engine.executions.list(dep)
    assert [e["id"] for e in listed] == [first["id"]]
    assert listed[0]["workflow_id"] == "install" and listed[0]["deployment_id"] == dep
    assert engine.executions.get(first["id"])["status"] == "terminated"
    with pytest.raises(NotFound):
        engine.executions.get("nope")


def test_unknown_workflow_and_bad_parameters_are_refused_before_running(engine, dep):
    with pytest.raises(NotFound, match="Workflow nope not found in deployment dep"):
        engine.executions.start("nope", dep)
    with pytest.raises(Exception, match="does not have the following parameters declared: color"):
        engine.executions.start("install", dep, {"color": "red"})
    with pytest.raises(Exception, match="missing parameter"):
        engine.executions.start("execute_operation", dep, {})
    assert engine.executions.list(dep) == []


def test_deleting_the_deployment_deletes_its_executions(engine, dep):
    first = engine.executions.start("install", dep)
    engine.executions.start("uninstall", dep)
    engine.blueprints.deployments.delete(dep)
    assert engine.executions.list() == []
    with pytest.raises(NotFound):
        engine.executions.events(first["id"])
