"""Service composition through Cloudify's REST API (cloudify-rest-client 7.0.5 on ``stoker api``): a
Component's child deployment made, installed and removed with its parent, its capabilities read
through the parent, and a PasswordSecret's secret hidden."""

from __future__ import annotations

import textwrap
import time

import pytest

from .conftest import PASSWORD, cloudify_server

pytest.importorskip("cloudify_rest_client")

HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
CHILD = HEADER + textwrap.dedent("""
    inputs:
      size: {type: integer}
    node_templates:
      db: {type: cloudify.nodes.Root}
    capabilities:
      endpoint: {value: {concat: ['db-', {get_input: size}]}}
    """)
PARENT = HEADER + textwrap.dedent("""
    node_templates:
      shop:
        type: cloudify.nodes.Component
        properties:
          resource_config:
            blueprint: {id: child-bp, blueprint_archive: child}
            deployment: {id: child, inputs: {size: 5}}
      password:
        type: cloudify.nodes.PasswordSecret
        properties: {length: 16, secret_name: shop-db-password}
    outputs:
      endpoint: {value: {get_attribute: [shop, capabilities, endpoint]}}
      password: {value: {get_secret: {get_attribute: [password, secret_name]}}}
    """)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cfy-compose")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager")])
    yield started
    started.stop()


def _client(server):
    from cloudify_rest_client import CloudifyClient

    return CloudifyClient(host="127.0.0.1", port=int(server.url.rsplit(":", 1)[1]), username="admin",
                          password=PASSWORD, tenant="default_tenant")


def _ended(client, execution_id: str) -> dict:
    for _ in range(600):
        execution = client.executions.get(execution_id)
        if execution["status"] in ("terminated", "failed", "cancelled"):
            return execution
        time.sleep(0.1)
    raise AssertionError(f"execution {execution_id} did not end")


def test_a_component_lives_and_dies_with_its_parent_through_the_rest_api(server, tmp_path):
    (tmp_path / "app" / "child").mkdir(parents=True)
    (tmp_path / "app" / "child" / "blueprint.yaml").write_text(CHILD)
    (tmp_path / "app" / "blueprint.yaml").write_text(PARENT)
    client = _client(server)
    client.blueprints.upload(str(tmp_path / "app" / "blueprint.yaml"), "app")
    client.deployments.create("app", "parent")
    installed = _ended(client, client.executions.start("parent", "install")["id"])
    assert installed["status"] == "terminated", installed["error"]

    child = client.deployments.get("child")
    assert child["blueprint_id"] == "child-bp"
    assert {"key": "csys-obj-parent", "value": "parent"} in child["labels"]
    assert client.deployments.capabilities.get("child")["capabilities"] == {"endpoint": "db-5"}
    outputs = client.deployments.outputs.get("parent")["outputs"]
    assert outputs == {"endpoint": "db-5", "password": "******"}
    secret = client.secrets.get("shop-db-password")
    assert secret["is_hidden_value"] is True and secret["value"] == "******"
    [db] = client.node_instances.list(deployment_id="child")
    assert db["state"] == "started"

    uninstalled = _ended(client, client.executions.start("parent", "uninstall")["id"])
    assert uninstalled["status"] == "terminated", uninstalled["error"]
    assert [d["id"] for d in client.deployments.list()] == ["parent"]
    assert "child-bp" not in [b["id"] for b in client.blueprints.list()]
    assert "shop-db-password" not in [s["key"] for s in client.secrets.list()]


def test_a_childs_scripts_are_held_to_the_tenants_policy(server, tmp_path):
    """The API refuses script operations for a tenant without local resources: a Component's child too."""
    (tmp_path / "app" / "child" / "scripts").mkdir(parents=True)
    (tmp_path / "app" / "child" / "scripts" / "run.sh").write_text("touch ran\n")
    (tmp_path / "app" / "child" / "blueprint.yaml").write_text(CHILD.replace(
        "db: {type: cloudify.nodes.Root}", "db:\n    type: cloudify.nodes.Root\n    interfaces:\n"
        "      cloudify.interfaces.lifecycle: {create: scripts/run.sh}"))
    (tmp_path / "app" / "blueprint.yaml").write_text(PARENT.replace("child-bp", "scripted-bp").replace(
        "id: child,", "id: scripted,").replace("shop-db-password", "scripted-password"))
    client = _client(server)
    client.blueprints.upload(str(tmp_path / "app" / "blueprint.yaml"), "scripted-app")
    client.deployments.create("scripted-app", "scripted-parent")
    failed = _ended(client, client.executions.start("scripted-parent", "install")["id"])
    assert failed["status"] == "failed"
    assert "cannot start install on deployment scripted: deployment scripted has script operations, which run " \
           "on the server host and are off for this tenant" in failed["error"]
    assert client.node_instances.list(deployment_id="scripted")[0]["state"] == "uninitialized"
