"""Instance health through the real ``cfy`` against ``stoker api``: check_status and check_drift results in
each node instance's ``system_properties`` with ``is_status_check_ok`` / ``has_configuration_drift``, the
nodes' and deployment's ``unavailable_instances`` / ``drifted_instances``; heal as Cloudify 7 heals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

BLUEPRINT = Path(__file__).resolve().parents[2] / "templates" / "blueprints" / "health" / "blueprint.yaml"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "health")


def _installed(server, tmp_path: Path, name: str, *marks: str):
    """(cfy, the REST client, the folder of marks): deployment ``name`` installed, then the ``marks`` files
    (``app-down``...) made and the trace emptied."""
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    folder = tmp_path / "marks"
    folder.mkdir()
    cfy("blueprints", "upload", str(BLUEPRINT), "-b", name)
    cfy("deployments", "create", name, "-b", name, "-i", json.dumps({"folder": str(folder)}))
    cfy("executions", "start", "install", "-d", name)
    for mark in marks:
        (folder / mark).write_text("port 81" if mark.endswith("drift") else "")
    (folder / "trace").write_text("")
    return cfy, client, folder


def test_cfy_shows_each_instance_s_checks_and_the_counts(server, tmp_path):
    cfy, client, _folder = _installed(server, tmp_path, "checked", "app-down", "web-drift")
    cfy("executions", "start", "check_status", "-d", "checked", ok=False)
    cfy("executions", "start", "check_drift", "-d", "checked")
    [app] = client.node_instances.list(deployment_id="checked", node_id="app")
    shown = json.loads(cfy("node-instances", "get", app.id, "--json"))
    status = shown["system_properties"]["status"]
    assert (status["ok"], status["task"]) == (False, "script_runner.tasks.run")
    assert shown["system_properties"]["previous_status"]["ok"] is True
    [web] = client.node_instances.list(deployment_id="checked", node_id="web")
    assert web.system_properties["configuration_drift"]["result"] == "port 81"
    assert (web["has_configuration_drift"], web["is_status_check_ok"]) == (True, True)
    assert (client.node_instances.get(app.id)["is_status_check_ok"], app["has_configuration_drift"]) == (False, False)

    nodes = json.loads(cfy("nodes", "list", "-d", "checked", "--json"))
    assert {n["id"]: (n["unavailable_instances"], n["drifted_instances"]) for n in nodes} == {
        "host": (0, 0), "web": (0, 1), "app": (1, 0)}
    deployment = client.deployments.get("checked")
    assert (deployment["unavailable_instances"], deployment["drifted_instances"]) == (1, 1)
    [listed] = client.deployments.list(id="checked", _include=["id", "unavailable_instances", "drifted_instances"])
    assert (listed["unavailable_instances"], listed["drifted_instances"]) == (1, 1)

    # a plugin or script may write them, as on Cloudify: the flags and counts follow
    passed = {**app.system_properties, "status": {**status, "ok": True}}
    written = client.node_instances.update(app.id, system_properties=passed, version=app.version)
    assert written["is_status_check_ok"] is True and client.deployments.get("checked")["unavailable_instances"] == 0


def test_cfy_heal_heals_what_can_and_reinstalls_what_cannot(server, tmp_path):
    cfy, client, folder = _installed(server, tmp_path, "healed", "web-down", "app-down")
    [app] = client.node_instances.list(deployment_id="healed", node_id="app")
    refused = cfy("executions", "start", "heal", "-d", "healed", "-p", "allow_reinstall=false", ok=False)
    assert f"allow_reinstall is false, but would need to reinstall instances: {app.id}" in refused

    cfy("executions", "start", "heal", "-d", "healed", "-p", "diagnose_value=two down")
    lines = (folder / "trace").read_text().split("\n")
    assert {"web preheal", "web heal", "app delete", "app create"} <= set(lines)
    assert not {"web delete", "host delete"} & set(lines)
    [web] = client.node_instances.list(deployment_id="healed", node_id="web")
    assert web.system_properties["status"]["healed"] is True and "stoker_plan" not in web.system_properties
    assert client.deployments.get("healed")["unavailable_instances"] == 0


def test_cfy_deployments_update_updates_what_drifted_and_reinstalls_what_cannot_update(server, tmp_path):
    cfy, client, folder = _installed(server, tmp_path, "updated", "web-drift", "app-drift")
    cfy("deployments", "update", "updated", "-i", json.dumps({"port": 81}))
    lines = set((folder / "trace").read_text().split("\n"))
    assert {"web check_drift", "web check_status", "web update", "web postupdate", "app delete", "app create"} <= lines
    assert not {"web delete", "host delete"} & lines
    [web] = client.node_instances.list(deployment_id="updated", node_id="web")
    assert web.system_properties["configuration_drift"] is None and not web["has_configuration_drift"]
    assert client.deployments.get("updated")["drifted_instances"] == 0

    (folder / "web-drift").write_text("port 82")
    (folder / "trace").write_text("")
    cfy("deployments", "update", "updated", "-i", json.dumps({"port": 82}), "--skip-drift-check", "--force-reinstall")
    lines = set((folder / "trace").read_text().split("\n"))
    assert {"web delete", "web create", "app delete", "app create"} <= lines and "web update" not in lines

    (folder / "web-drift").write_text("port 83")  # nothing changed in the plan: only what drifted is updated
    (folder / "trace").write_text("")
    cfy("deployments", "update", "updated", "--drift-only")
    lines = set((folder / "trace").read_text().split("\n"))
    assert {"web update", "web postupdate"} <= lines and not {"web delete", "app delete", "app update"} & lines
