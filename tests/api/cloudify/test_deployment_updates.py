"""``cfy deployments update`` (with ``history`` and ``get-update``) and cloudify-rest-client's deployment
updates against ``stoker api``: nodes added and removed, an input changed, a preview, a refusal while the
deployment runs an execution; the scripts record what ran, so each test sees nothing else run."""

from __future__ import annotations

import json
import time

import pytest
from update_blueprints import NEW, OLD, folder, ran

from .conftest import cfy_on, cloudify_server
from .test_plugin_tenants import _client

pytest.importorskip("cloudify_rest_client")
pytestmark = pytest.mark.slow  # a server, `cfy` processes


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deployment-updates")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("vic", "default_tenant", "viewer")],
                              extra=("--allow-local-resources",))
    yield started
    started.stop()


def _ended(client, execution_id: str) -> dict:
    deadline = time.monotonic() + 120
    while (found := client.executions.get(execution_id)).status not in ("terminated", "failed", "cancelled"):
        assert time.monotonic() < deadline, found
        time.sleep(0.1)
    return found


@pytest.fixture
def installed(server, tmp_path, request):
    """Deployment ``d-<test>`` of blueprint ``old-<test>`` installed, ``new-<test>`` uploaded: (client, ids, trace)."""
    client = _client(server, "admin", "default_tenant")
    name = request.node.name.split("_", 1)[1][:20].replace("_", "-")
    trace = tmp_path / "trace.txt"
    client.blueprints.upload(folder(tmp_path, "old", OLD), f"old-{name}")
    client.blueprints.upload(folder(tmp_path, "new", NEW), f"new-{name}")
    client.deployments.create(f"old-{name}", f"d-{name}", inputs={"trace": str(trace)})
    assert _ended(client, client.executions.start(f"d-{name}", "install").id).status == "terminated"
    ran(trace)
    return client, name, trace


def test_cfy_moves_a_deployment_onto_a_blueprint_with_a_node_added_and_one_removed(server, tmp_path, installed):
    client, name, trace = installed
    cfy = cfy_on(server, tmp_path)
    preview = cfy("deployments", "update", f"d-{name}", "-b", f"new-{name}", "--preview")
    assert "nodes: fresh" in preview and "Installed nodes:" in preview and "Uninstalled nodes:" in preview
    assert ran(trace) == []
    out = cfy("deployments", "update", f"d-{name}", "-b", f"new-{name}")
    assert f"Successfully updated deployment d-{name}" in out
    assert ran(trace) == ["fresh create", "old delete"]  # nothing else ran again
    outputs = json.loads(cfy("deployments", "outputs", f"d-{name}", "--json"))
    assert (outputs["port"]["value"], outputs["fresh"]["value"]) == (80, "yes")
    assert json.loads(cfy("deployments", "capabilities", f"d-{name}", "--json"))["where"]["value"] == "127.0.0.1"
    assert client.deployments.get(f"d-{name}").blueprint_id == f"new-{name}"
    instances = client.node_instances.list(deployment_id=f"d-{name}")
    assert sorted((i.node_id, i.state) for i in instances) == [("fresh", "started"), ("host", "started"),
                                                                ("web", "started")]
    [update] = json.loads(cfy("deployments", "history", "-d", f"d-{name}", "--json"))
    assert (update["state"], update["old_blueprint_id"], update["new_blueprint_id"]) == (
        "successful", f"old-{name}", f"new-{name}")
    shown = json.loads(cfy("deployments", "get-update", update["id"], "--json"))
    assert shown["installed_nodes"] == ["fresh"] and shown["uninstalled_nodes"] == ["old"]
    assert client.executions.get(update["execution_id"]).workflow_id == "update"


def test_a_changed_input_reinstalls_the_node_reading_it_and_skip_reinstall_does_not(installed):
    client, name, trace = installed
    update = client.deployment_updates.update_with_existing_blueprint(f"d-{name}", inputs={"port": 8080})
    assert _ended(client, update.execution_id).status == "terminated"
    assert ran(trace) == ["web create", "web delete"]
    got = client.deployment_updates.get(update.id)
    assert got.state == "successful" and got.new_inputs["port"] == 8080 and got.old_inputs["port"] == 80
    assert {"action": "modify", "entity_type": "property", "entity_id": ["nodes", "web", "properties", "port"],
            "topology_order": 0} in got.steps
    assert client.deployments.outputs.get(f"d-{name}").outputs == {"port": 8080}
    skipped = client.deployment_updates.update_with_existing_blueprint(f"d-{name}", inputs={"port": 9090},
                                                                       skip_reinstall=True)
    assert _ended(client, skipped.execution_id).status == "terminated"
    assert ran(trace) == []
    assert client.deployments.outputs.get(f"d-{name}").outputs == {"port": 9090}


def test_a_preview_shows_the_steps_and_changes_nothing(server, installed):
    client, name, trace = installed
    preview = client.deployment_updates.update_with_existing_blueprint(f"d-{name}", f"new-{name}", preview=True)
    nodes = {(s["action"], s["entity_id"][1]) for s in preview.steps if s["entity_type"] == "node"}
    assert nodes == {("add", "fresh"), ("remove", "old")}
    assert ("add", ["outputs", "fresh"]) in [(s["action"], s["entity_id"]) for s in preview.steps]
    older = client.deployment_updates.api.put(f"/deployment-updates/d-{name}/update/initiate",
                                              data={"blueprint_id": f"new-{name}", "preview": True})
    assert older["steps"] == preview.steps  # older clients initiate with PUT
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as viewer:
        _client(server, "vic", "default_tenant").deployment_updates.update_with_existing_blueprint(
            f"d-{name}", f"new-{name}", preview=True)
    assert viewer.value.status_code == 403
    assert client.deployments.get(f"d-{name}").blueprint_id == f"old-{name}"
    assert list(client.deployment_updates.list(deployment_id=f"d-{name}")) == []
    assert ran(trace) == []


def test_an_update_is_refused_while_the_deployment_runs_an_execution(installed, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    client, name, trace = installed
    gate = tmp_path / "gate"
    client.blueprints.upload(folder(tmp_path, "held", OLD), f"held-{name}")
    client.deployments.create(f"held-{name}", f"h-{name}", inputs={"trace": str(trace), "gate": str(gate)})
    held = client.executions.start(f"h-{name}", "install")
    try:
        with pytest.raises(CloudifyClientError) as refused:
            client.deployment_updates.update_with_existing_blueprint(f"h-{name}", f"new-{name}")
        assert (refused.value.status_code, refused.value.error_code) == (400, "existing_running_execution_error")
        assert f"currently running for this deployment: [{held.id} (install, started)]" in str(refused.value)
    finally:
        gate.write_text("")
    assert _ended(client, held.id).status == "terminated"
    assert list(client.deployment_updates.list(deployment_id=f"h-{name}")) == []


def test_an_update_bringing_scripts_is_forbidden_where_the_project_may_not_run_them(tmp_path, monkeypatch):
    """In process, scripts off (the default): a deployment without scripts may not update onto a blueprint
    with some, as it may not start a workflow running them."""
    from fastapi.testclient import TestClient

    from stoker.api.app import create_app

    from .test_isolation_and_hostile import _archive

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    plain = "\n".join(line for line in OLD.splitlines() if "*op" not in line and "interfaces:" not in line
                      and "cloudify.interfaces.lifecycle:" not in line)
    with TestClient(create_app(f"sqlite:///{tmp_path / 'stoker.db'}")) as client:
        for name, text in (("plain", plain), ("scripted", NEW)):
            files = {"blueprint.yaml": text.encode(), "scripts/op.sh": b"true\n"}
            stored = client.put(f"/api/v3.1/blueprints/{name}", params={"application_file_name": "blueprint.yaml"},
                                content=_archive(files))
            assert stored.status_code == 201, stored.text
        made = client.put("/api/v3.1/deployments/dep", json={"blueprint_id": "plain", "inputs": {"trace": "t"}})
        assert made.status_code == 201, made.text
        refused = client.post("/api/v3.1/deployment-updates/dep/update/initiate", json={"blueprint_id": "scripted"})
        assert refused.status_code == 403 and "script operations" in refused.json()["message"]
        assert client.get("/api/v3.1/deployment-updates").json()["items"] == []
