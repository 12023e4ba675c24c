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


def _installed(cfy, name: str, folder: Path) -> None:
    folder.mkdir()
    cfy("blueprints", "upload", str(BLUEPRINT), "-b", name)
    cfy("deployments", "create", name, "-b", name, "-i", json.dumps({"folder": str(folder)}))
    cfy("executions", "start", "install", "-d", name)


def test_cfy_shows_each_instance_s_checks_and_the_counts(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    folder = tmp_path / "marks"
    _installed(cfy, "checked", folder)
    (folder / "app-down").write_text("")
    (folder / "web-drift").write_text("port 81")
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


def test_cfy_heal_heals_what_can_and_reinstalls_what_cannot(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    folder = tmp_path / "marks"
    _installed(cfy, "healed", folder)
    (folder / "web-down").write_text("")
    (folder / "app-down").write_text("")
    (folder / "trace").write_text("")
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
