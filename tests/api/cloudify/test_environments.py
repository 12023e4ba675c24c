"""Environments and services through ``cfy`` and cloudify-rest-client on ``stoker api``: deployments linked by
``csys-obj-parent`` labels, as Cloudify's manager links them. A parent must exist and not descend from its child;
it carries a consumer label per child; its counts and status sum up its children's, generation after generation;
it is not deleted while it has children unless forced, or deleted with them (recursive)."""

from __future__ import annotations

import pytest

from box_blueprint import write_box
from .conftest import admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # a server of its own

pytest.importorskip("cloudify_rest_client")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "environments")


def _family(client, deployment_id: str) -> tuple:
    d = client.deployments.get(deployment_id)
    return (d["sub_environments_count"], d["sub_services_count"], d["sub_environments_status"],
            d["sub_services_status"], d["deployment_status"])


def _labels(client, deployment_id: str) -> set[tuple[str, str]]:
    return {(label["key"], label["value"]) for label in client.deployments.get(deployment_id)["labels"]}


def test_parents_children_counts_and_statuses(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    script = 'case "$(ctx deployment id)" in bad*) exit 1 ;; esac\n'
    client.blueprints.upload(str(write_box(tmp_path / "box", script)), "box")
    client.deployments.create("box", "env", labels=[{"csys-obj-type": "environment"}, {"csys-env-type": "aws"}])
    cfy("deployments", "create", "svc", "-b", "box", "--labels", "csys-obj-parent:env")
    client.deployments.create("box", "leaf", labels=[{"csys-obj-parent": "svc"}])
    client.deployments.create("box", "subenv", labels=[{"csys-obj-parent": "env"},
                                                        {"csys-obj-type": "environment"}])
    assert ("csys-consumer-id", "svc") in _labels(client, "env") and ("csys-consumer-id", "leaf") in _labels(
        client, "svc")
    # nothing installed: every deployment needs attention, and so do its children's summaries
    assert _family(client, "env") == (1, 2, "requires_attention", "requires_attention", "requires_attention")
    assert _family(client, "svc") == (0, 1, None, "requires_attention", "requires_attention")
    assert _family(client, "leaf") == (0, 0, None, None, "requires_attention")
    listed = {d["id"]: d for d in client.deployments.list(_include=["id", "sub_services_count"])}
    assert listed["env"]["sub_services_count"] == 2 and listed["leaf"]["sub_services_count"] == 0
    env = client.deployments.get("env")
    assert (env["environment_type"], env["has_sub_deployments"]) == ("aws", True)
    assert client.deployments.get("leaf")["has_sub_deployments"] is False

    for deployment_id in ("leaf", "svc", "subenv", "env"):
        cfy("executions", "start", "install", "-d", deployment_id)
    assert _family(client, "env") == (1, 2, "good", "good", "good")
    assert client.deployments.get("env")["latest_execution_workflow_id"] == "install"
    client.deployments.create("box", "bad1", labels=[{"csys-obj-parent": "leaf"}])
    cfy("executions", "start", "install", "-d", "bad1", ok=False)
    assert client.deployments.get("bad1")["latest_execution_status"] == "failed"
    # a failed great-grandchild: every ancestor needs attention, through the services' summaries
    assert _family(client, "env") == (1, 3, "good", "requires_attention", "requires_attention")
    assert _family(client, "subenv")[-1] == "good"

    with pytest.raises(CloudifyClientError) as missing:
        client.deployments.create("box", "orphan", labels=[{"csys-obj-parent": "ghost"}])
    assert missing.value.status_code == 404 and "not found: ghost" in str(missing.value)
    assert "orphan" not in [d["id"] for d in client.deployments.list()]  # nothing half-stored
    out = cfy("deployments", "labels", "add", "csys-obj-parent:leaf", "env", ok=False)
    assert "cyclic dependencies: env" in out
    assert ("csys-obj-parent", "leaf") not in _labels(client, "env")

    with pytest.raises(CloudifyClientError) as parent:
        client.deployments.delete("svc")
    assert parent.value.status_code == 400 and "Deployment `svc` is the parent of deployment leaf" in str(
        parent.value)
    cfy("deployments", "labels", "delete", "csys-obj-parent:svc", "leaf")  # leaf leaves svc
    assert ("csys-consumer-id", "leaf") not in _labels(client, "svc")
    assert _family(client, "svc") == (0, 0, None, None, "good")
    client.deployments.delete("svc")  # no child left
    assert ("csys-consumer-id", "svc") not in _labels(client, "env")  # the parent no longer counts it

    client.deployments.delete("leaf", recursive=True)  # leaf and bad1, its child
    assert sorted(d["id"] for d in client.deployments.list()) == ["env", "subenv"]
    client.deployments.delete("env", force=True)  # its child stays, without it
    assert [d["id"] for d in client.deployments.list()] == ["subenv"]
