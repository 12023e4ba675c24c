"""``cfy executions graphs list`` and ``cfy executions operations list|get`` against ``stoker api``: an execution's
graph named as Cloudify names it (``install``), each operation it ran (or did not reach) with its state, task
name, instance and the operations it waited for; another tenant sees none of them."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from ..helpers import start_server
from .conftest import cfy_on, cloudify_server, refused_status, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

BLUEPRINT = Path(__file__).resolve().parents[2] / "templates" / "blueprints" / "tasks_graphs" / "blueprint.yaml"
LIFECYCLE = "cloudify.interfaces.lifecycle"
ESTABLISH = "cloudify.interfaces.relationship_lifecycle.establish"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tasks-graphs")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("other", "other_tenant", "manager")],
                              extra=("--allow-local-resources",))
    rest_client(started).blueprints.upload(str(BLUEPRINT), "graphs")
    yield started
    started.stop()


def _installed(client, deployment: str, fail: bool = False) -> str:
    """The id of ``deployment``'s install (run to its end)."""
    client.deployments.create("graphs", deployment, inputs={"fail": fail})
    execution = client.executions.start(deployment, "install")
    _ended(client, execution.id)
    return execution.id


def _ended(client, execution_id: str) -> None:
    import time

    for _ in range(600):
        if client.executions.get(execution_id).status in ("terminated", "failed", "cancelled"):
            return
        time.sleep(0.1)
    raise AssertionError(f"execution {execution_id} did not end")


def _by_operation(operations) -> dict:
    context = lambda op: op.parameters["task_kwargs"]["kwargs"]["__cloudify_context"]  # noqa: E731
    return {(context(op)["node_name"], context(op)["operation"]["name"]): op for op in operations}


def test_cfy_lists_an_install_s_graph_and_its_operations(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    execution_id = _installed(client, "ok")

    shown = cfy("executions", "graphs", "list", execution_id)
    assert f"Tasks graphs of execution {execution_id}" in shown and "| install " in shown
    [graph] = client.tasks_graphs.list(execution_id)
    assert (graph.name, graph.execution) == ("install", execution_id)
    assert list(client.tasks_graphs.list(execution_id, name="uninstall")) == []

    shown = cfy("executions", "operations", "list", execution_id)
    assert shown.count("script_runner.tasks.run") == 4 and shown.count("succeeded") == 4

    operations = client.operations.list(execution_id=execution_id)
    found = _by_operation(operations)
    assert sorted(found) == [("db", f"{LIFECYCLE}.create"), ("web", f"{LIFECYCLE}.configure"),
                             ("web", f"{LIFECYCLE}.create"), ("web", ESTABLISH)]
    assert {(op.state, op.type, op.name, op.tasks_graph_id) for op in operations} == {
        ("succeeded", "RemoteWorkflowTask", "script_runner.tasks.run", graph.id)}
    # web waits for db (its relationship), each of web's operations for the one before it
    db_create, web_create = found[("db", f"{LIFECYCLE}.create")], found[("web", f"{LIFECYCLE}.create")]
    web_configure = found[("web", f"{LIFECYCLE}.configure")]
    assert db_create.dependencies == []
    assert web_create.dependencies == [db_create.id]
    assert web_configure.dependencies == [web_create.id]
    establish = found[("web", ESTABLISH)]
    context = establish.parameters["task_kwargs"]["kwargs"]["__cloudify_context"]
    assert context["node_id"].startswith("web_") and context["related"]["node_id"].startswith("db_")
    assert (context["workflow_id"], context["execution_id"]) == ("install", execution_id)

    assert client.operations.get(web_configure.id) == web_configure
    assert cfy("executions", "operations", "get", web_configure.id).count(web_configure.id) >= 1
    assert len(client.operations.list(graph_id=graph.id)) == 4


def test_a_failed_install_shows_its_failed_and_unreached_operations(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    execution_id = _installed(client, "failing", fail=True)
    assert client.executions.get(execution_id).status == "failed"

    found = _by_operation(client.operations.list(execution_id=execution_id))
    states = {key: op.state for key, op in found.items()}
    assert states == {("db", f"{LIFECYCLE}.create"): "succeeded", ("web", f"{LIFECYCLE}.create"): "succeeded",
                      ("web", f"{LIFECYCLE}.configure"): "failed",
                      ("web", ESTABLISH): "pending"}
    assert "exited with code 1" in found[("web", f"{LIFECYCLE}.configure")].parameters["error"]
    [failed] = client.operations.list(execution_id=execution_id, state="failed")
    assert failed.id == found[("web", f"{LIFECYCLE}.configure")].id
    shown = cfy("executions", "operations", "list", execution_id, "--state", "pending")
    assert shown.count("script_runner.tasks.run") == 1


def test_another_tenant_sees_no_graph_nor_operation(server, tmp_path):
    client = rest_client(server)
    execution_id = _installed(client, "mine")
    [graph] = client.tasks_graphs.list(execution_id)
    [operation, *_] = client.operations.list(execution_id=execution_id)

    other = rest_client(server, "other", "other_tenant")
    assert refused_status(lambda: other.tasks_graphs.list(execution_id)) == 404
    assert refused_status(lambda: other.operations.list(execution_id=execution_id)) == 404
    assert refused_status(lambda: other.operations.list(graph_id=graph.id)) == 404
    assert refused_status(lambda: other.operations.get(operation.id)) == 404


def test_operations_are_asked_of_a_graph_or_an_execution(server):
    client = rest_client(server)
    assert refused_status(lambda: client.operations.list()) == 400
    assert refused_status(lambda: client.operations.list(graph_id="nothing:install")) == 404


def test_an_install_run_by_the_local_cli_is_listed_by_the_api(tmp_path, monkeypatch):
    """The install ran in the ``stoker`` command's process; a server on the same database lists its operations."""
    from stoker.cli import main

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    db_url = f"sqlite:///{tmp_path / 'stoker.db'}"

    def here(*args: str):
        return CliRunner().invoke(main, ["--db-url", db_url, *args], catch_exceptions=False)

    assert here("install", str(BLUEPRINT), "-b", "graphs", "-d", "local").exit_code == 0
    [install] = [e for e in json.loads(here("execution", "list", "-f", "json").stdout) if e["workflow_id"] == "install"]
    server = start_server(tmp_path, db_url)
    try:
        listed = httpx.get(f"{server.url}/api/v3.1/operations", params={"execution_id": install["id"]}).json()
    finally:
        server.stop()
    assert [op["state"] for op in listed["items"]] == ["succeeded"] * 4
    assert listed["metadata"]["pagination"]["total"] == 4
