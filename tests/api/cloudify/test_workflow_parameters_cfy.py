"""``cfy executions start uninstall -p ignore_failure=true`` against ``stoker api``: app's delete fails, the
uninstall reports it and goes on to delete the host; without the parameter the uninstall fails there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

BLUEPRINT = Path(__file__).resolve().parents[2] / "templates" / "blueprints" / "ignore_failure" / "blueprint.yaml"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "ignore-failure")


def test_cfy_uninstall_with_ignore_failure_goes_on_past_a_failed_delete(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    folder = tmp_path / "marks"
    folder.mkdir()
    cfy("blueprints", "upload", str(BLUEPRINT), "-b", "failing")
    cfy("deployments", "create", "failing", "-b", "failing", "-i", json.dumps({"folder": str(folder)}))
    cfy("executions", "start", "install", "-d", "failing")

    cfy("executions", "start", "uninstall", "-d", "failing", ok=False)
    assert (folder / "app-delete").exists() and not (folder / "host-delete").exists()
    (folder / "app-delete").unlink()

    shown = cfy("executions", "start", "uninstall", "-d", "failing", "-p", "ignore_failure=true")
    assert "Ignoring task cloudify.interfaces.lifecycle.delete failure" in shown
    assert (folder / "app-delete").exists() and (folder / "host-delete").exists()
    instances = json.loads(cfy("node-instances", "list", "-d", "failing", "--json"))
    assert {i["state"] for i in instances} == {"deleted"}
    failed, done = client.executions.list(deployment_id="failing", workflow_id="uninstall", _sort="created_at")
    assert (failed.status, done.status) == ("failed", "terminated")
    events = client.events.list(execution_id=done.id)
    assert [(e["event_type"], e["node_name"]) for e in events if e["event_type"] == "task_failed"] == [
        ("task_failed", "app")]


def test_an_unknown_node_id_is_refused_with_cloudify_s_error_code(server, tmp_path):
    from cloudify_rest_client.exceptions import IllegalExecutionParametersError

    client = rest_client(server)
    client.blueprints.upload(str(BLUEPRINT), "unknown")
    client.deployments.create("unknown", "unknown", inputs={"folder": str(tmp_path)})
    with pytest.raises(IllegalExecutionParametersError) as refused:
        client.executions.start("unknown", "uninstall", parameters={"node_ids": ["nope"]})
    assert refused.value.status_code == 400
    assert str(refused.value) == "400: " + ('Parameter "node_ids" does not meet its constraints: Value \'nope\' of '
                                  "'node_ids' is not a valid value for data type 'node_id'.")
    assert client.executions.list(deployment_id="unknown", workflow_id="uninstall").items == []
