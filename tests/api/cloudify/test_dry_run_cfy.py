"""``cfy executions start WORKFLOW -d DEP --dry-run`` (and ``stoker --url ... execution start --dry-run``) against
``stoker api``: the install walks its graph and reports each operation as Cloudify's dry run does, runs no script,
changes no instance state, ends ``terminated`` with ``is_dry_run`` true; the real install after it runs the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker.cli import main

from ..helpers import create_token
from .conftest import cfy_on, cloudify_server, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

#: every operation's script writes the marker file: only a real run leaves it
BLUEPRINT = Path(__file__).resolve().parents[2] / "templates" / "blueprints" / "dry_run" / "blueprint.yaml"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dry-run")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager")], extra=("--allow-local-resources",))
    yield started
    started.stop()


def test_cfy_dry_run_install_runs_nothing_then_the_real_install_does(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    marker = tmp_path / "marker"
    cfy("blueprints", "upload", str(BLUEPRINT), "-b", "dry")
    cfy("deployments", "create", "dry", "-b", "dry", "-i", json.dumps({"marker": str(marker)}))

    shown = cfy("executions", "start", "install", "-d", "dry", "--dry-run")
    assert not marker.exists()  # the create script never ran
    assert "Starting 'install' workflow execution (dry run)" in shown
    assert "Task succeeded 'cloudify.interfaces.lifecycle.create' (dry run)" in shown
    assert "'install' workflow execution succeeded (dry run)" in shown
    assert "Task started" not in shown and "marker written" not in shown

    [execution] = json.loads(cfy("executions", "list", "-d", "dry", "--json"))
    assert (execution["is_dry_run"], execution["status"]) == (True, "completed")  # cfy shows status_display
    events = client.events.list(execution_id=execution["id"], include_logs=True)
    assert [(e["event_type"], e["message"]) for e in events] == [
        ("workflow_started", "Starting 'install' workflow execution (dry run)"),
        ("task_succeeded", "Task succeeded 'cloudify.interfaces.lifecycle.create' (dry run)"),
        ("task_succeeded", "Task succeeded 'cloudify.interfaces.lifecycle.configure' (dry run)"),
        ("task_succeeded", "Task succeeded 'cloudify.interfaces.relationship_lifecycle.establish' (dry run)"),
        ("workflow_succeeded", "'install' workflow execution succeeded (dry run)")]
    instances = json.loads(cfy("node-instances", "list", "-d", "dry", "--json"))
    assert sorted((i["node_id"], i["state"]) for i in instances) == [("box", "uninitialized"),
                                                                      ("idle", "uninitialized")]
    assert client.deployments.get("dry").installation_status == "inactive"

    cfy("executions", "start", "install", "-d", "dry")
    assert marker.exists()
    instances = json.loads(cfy("node-instances", "list", "-d", "dry", "--json"))
    assert {i["state"] for i in instances} == {"started"}
    real = json.loads(cfy("executions", "list", "-d", "dry", "--json"))[-1]
    assert real["is_dry_run"] is False
    assert client.deployments.get("dry").installation_status == "active"

    marker.unlink()
    cfy("executions", "start", "install", "-d", "dry", "--dry-run")  # nothing to create: states are kept
    assert not marker.exists()
    assert client.deployments.get("dry").installation_status == "active"


def test_a_dry_run_that_is_no_boolean_is_refused_and_stores_nothing(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = rest_client(server)
    client.blueprints.upload(str(BLUEPRINT), "refused")
    client.deployments.create("refused", "refused", inputs={"marker": str(tmp_path / "marker")})
    with pytest.raises(CloudifyClientError) as refused:
        client.executions.start("refused", "install", dry_run="maybe")
    assert refused.value.status_code == 400 and refused.value.error_code == "bad_parameters_error"
    assert "dry_run must be <true/false>, got maybe" in str(refused.value)
    assert list(client.executions.list(deployment_id="refused")) == []
    started = client.executions.start("refused", "install", dry_run=True)
    assert started.is_dry_run is True


def test_stoker_over_url_starts_a_dry_run(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    token = create_token(server.db_url, "default_tenant")
    marker = tmp_path / "marker"
    cfy("blueprints", "upload", str(BLUEPRINT), "-b", "remote")
    cfy("deployments", "create", "remote", "-b", "remote", "-i", json.dumps({"marker": str(marker)}))

    def stoker(*args: str):
        return CliRunner().invoke(main, ["--url", f"{server.url}/v1/default_tenant", "--token", token, *args],
                                  env={"STOKER_HOME": str(tmp_path / "client-home")}, catch_exceptions=False)

    done = stoker("execution", "start", "install", "-d", "remote", "--dry-run", "--wait", "-f", "json")
    assert done.exit_code == 0, done.output
    execution = json.loads(done.stdout)
    assert (execution["status"], execution["is_dry_run"]) == ("terminated", True)
    assert "Task succeeded 'cloudify.interfaces.lifecycle.create' (dry run)" in done.stderr
    assert not marker.exists()
    assert json.loads(stoker("execution", "get", execution["id"], "-f", "json").stdout)["is_dry_run"] is True
