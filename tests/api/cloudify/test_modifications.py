"""Deployment modifications against ``stoker api``: ``cfy executions start scale`` makes one (finished when the
scale ends well; when it fails, rolled back after what it added is uninstalled, or left started with
``rollback_if_failed=false``), ``cfy deployments modifications list|get|rollback`` show and undo
it, and cloudify-rest-client's ``deployment_modifications`` start and finish one as a plugin's workflow does,
with Cloudify's refusals."""

from __future__ import annotations

import json

import pytest
from modification_blueprints import GROUPED, folder

from .conftest import cfy_on, cloudify_server, rest_client

pytest.importorskip("cloudify_rest_client")
pytestmark = pytest.mark.slow  # a server, `cfy` processes


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("modifications")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager")], extra=("--allow-local-resources",))
    yield started
    started.stop()


@pytest.fixture
def deployed(server, tmp_path, request):
    """Deployment ``d-<test>`` installed; (its id, the client, the file whose presence fails a host's create)."""
    client = rest_client(server)
    name = request.node.name.split("_", 1)[1][:24].replace("_", "-")
    mark = tmp_path / "fail-create"
    client.blueprints.upload(folder(tmp_path), f"bp-{name}")
    client.deployments.create(f"bp-{name}", f"d-{name}", inputs={"mark": str(mark)})
    cfy = cfy_on(server, tmp_path)
    cfy("executions", "start", "install", "-d", f"d-{name}")
    return f"d-{name}", client, mark, cfy


def _instances(client, deployment_id: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for instance in client.node_instances.list(deployment_id=deployment_id):
        found.setdefault(instance.node_id, []).append(instance.id)
    return found


def _added(modification: dict) -> list[tuple[str, str]]:
    return sorted((i["node_id"], i["id"]) for i in modification["node_instances"]["added_and_related"]
                  if i.get("modification") == "added")


def test_cfy_scale_out_and_in_shows_finished_modifications(deployed):
    dep, client, _mark, cfy = deployed
    before = _instances(client, dep)
    cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=app", "-p", "delta=1")
    [listed] = json.loads(cfy("deployments", "modifications", "list", dep, "--json"))
    assert (listed["status"], listed["workflow_id"], listed["tenant_name"]) == ("finished", "scale", "default_tenant")
    scale_out = client.executions.list(deployment_id=dep, workflow_id="scale")[0]
    assert listed["execution_id"] == scale_out.id  # cfy flattens the context into the row

    shown = json.loads(cfy("deployments", "modifications", "get", listed["id"], "--json"))
    [new_app] = sorted(set(_instances(client, dep)["app"]) - set(before["app"]))
    assert _added(shown) == [("app", new_app)]
    related = {i["id"]: i for i in shown["node_instances"]["added_and_related"] if i.get("modification") != "added"}
    [lb] = before["lb"]
    assert related[lb]["modification"] == "extended"
    assert [r["target_id"] for r in related[lb]["relationships"]] == [new_app]
    assert shown["modified_nodes"] == {"app": {"instances": 2, "removed_ids_exclude_hint": [],
                                               "removed_ids_include_hint": []}}
    assert shown["ended_at"] and shown["created_at"] <= shown["ended_at"]
    text = cfy("deployments", "modifications", "get", listed["id"])
    assert "Added node instances:" in text and f"{new_app} (app)" in text

    cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=app", "-p", "delta=-1")
    second = client.deployment_modifications.list(deployment_id=dep, status="finished")
    assert [m.id for m in second][0] == listed["id"] and len(second) == 2
    removed = [i for i in second[1].node_instances.removed_and_related if i.get("modification") == "removed"]
    assert [i.id for i in removed] == [new_app]
    assert _instances(client, dep) == before


def test_a_failed_cfy_scale_uninstalls_what_it_added_and_rolls_its_modification_back(deployed):
    dep, client, mark, cfy = deployed
    before = _instances(client, dep)
    mark.write_text("")
    out = cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=host", ok=False)
    assert "create refused" in out
    [rolled] = client.deployment_modifications.list(deployment_id=dep)
    assert rolled.status == "rolledback" and rolled.ended_at
    [new_host] = [i for node, i in _added(rolled) if node == "host"]
    assert (mark.parent / f"{mark.name}.deleted").read_text().split() == [new_host]  # its delete ran
    assert _instances(client, dep) == before
    [lb] = before["lb"]
    assert [r["target_id"] for r in client.node_instances.get(lb).relationships] == before["app"]
    [failed] = client.executions.list(deployment_id=dep, workflow_id="scale")
    assert failed.status == "failed"
    logs = cfy("events", "list", failed.id, "--include-logs")
    assert f"Rolling back deployment modification. [modification_id={rolled.id}]" in logs


def test_a_failed_scale_leaves_its_modification_started_and_cfy_rolls_it_back(deployed):
    dep, client, mark, cfy = deployed
    before = _instances(client, dep)
    mark.write_text("")
    out = cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=host", "-p",
              "rollback_if_failed=false", ok=False)
    assert "create refused" in out
    [started] = client.deployment_modifications.list(deployment_id=dep)
    assert started.status == "started"
    added = _added(started)
    assert [node for node, _id in added] == ["app", "host"]
    assert len(_instances(client, dep)["host"]) == 2  # the rows stay until the rollback
    [lb] = before["lb"]
    assert len(client.node_instances.get(lb).relationships) == 2

    # only one started modification per deployment: the next scale fails with Cloudify's words
    again = cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=host", ok=False)
    assert "existing started deployment modifications" in again and started.id in again
    assert len(client.deployment_modifications.list(deployment_id=dep)) == 1

    out = cfy("deployments", "modifications", "rollback", started.id)
    assert "Node instances before rollback:" in out
    assert _instances(client, dep) == before
    assert [r["target_id"] for r in client.node_instances.get(lb).relationships] == before["app"]
    assert {n.id: n.number_of_instances for n in client.nodes.list(deployment_id=dep)} == \
        {"host": 1, "app": 1, "lb": 1}
    rolled = client.deployment_modifications.get(started.id)
    assert rolled.status == "rolledback" and rolled.ended_at
    assert {i.id for i in rolled.node_instances.before_rollback} >= {i for _node, i in added}
    refused = cfy("deployments", "modifications", "rollback", started.id, ok=False)
    assert f"Cannot rollback deployment modification: {started.id}. It is already in rolledback status." in refused
    resumed = cfy("executions", "resume", client.executions.list(deployment_id=dep, workflow_id="scale")[0].id,
                  ok=False)
    assert "is rolledback" in resumed

    mark.unlink()  # the deployment scales again once nothing is started
    cfy("executions", "start", "scale", "-d", dep, "-p", "scalable_entity_name=host")
    assert len(_instances(client, dep)["host"]) == 2


def test_rest_client_starts_and_finishes_a_modification_with_cloudify_refusals(deployed):
    from cloudify_rest_client.exceptions import (CloudifyClientError, DeploymentModificationAlreadyEndedError,
                                                 ExistingStartedDeploymentModificationError)

    dep, client, _mark, _cfy = deployed
    modifications = client.deployment_modifications
    context = {"workflow_id": "custom", "execution_id": "e-1"}
    started = modifications.start(dep, {"app": {"instances": 3}}, context=context)
    assert (started.status, started.deployment_id, started.context) == ("started", dep, context)
    assert started.modified_nodes == {"app": {"instances": 3}} and started.ended_at is None
    added = [i for i in started.node_instances.added_and_related if i.get("modification") == "added"]
    assert len(added) == 2 and {i.state for i in added} == {"uninitialized"}
    assert len(_instances(client, dep)["app"]) == 3  # added at the start, as Cloudify's manager does

    with pytest.raises(ExistingStartedDeploymentModificationError, match=started.id) as refused:
        modifications.start(dep, {"app": {"instances": 1}})
    assert (refused.value.status_code, refused.value.error_code) == \
        (400, "existing_started_deployment_modification_error")

    finished = modifications.finish(started.id)
    assert finished.status == "finished" and finished.ended_at
    with pytest.raises(DeploymentModificationAlreadyEndedError, match="already in finished status"):
        modifications.finish(started.id)
    with pytest.raises(DeploymentModificationAlreadyEndedError):
        modifications.rollback(started.id)
    apps = _instances(client, dep)["app"]
    assert len(apps) == 3

    hinted = modifications.start(dep, {"app": {"instances": 2, "removed_ids_include_hint": [apps[0]]}})
    modifications.finish(hinted.id)
    assert _instances(client, dep)["app"] == apps[1:]  # the hint's instance went, not the newest

    page = modifications.list(deployment_id=dep, _size=1, _offset=0)
    assert [m.id for m in page] == [started.id] and page.metadata.pagination.total == 2
    assert modifications.list(deployment_id="nowhere").metadata.pagination.total == 0
    for call, args in ((modifications.get, ("no-such-id",)), (modifications.finish, ("no-such-id",)),
                       (modifications.rollback, ("no-such-id",))):
        with pytest.raises(CloudifyClientError, match="Requested `DeploymentModification` with ID `no-such-id` was "
                                                      "not found") as unknown:
            call(*args)
        assert (unknown.value.status_code, unknown.value.error_code) == (404, "not_found_error")
    for nodes in ({}, {"app": {"instances": -1}}, {"app": {"instances": "two"}}, {"nope": {"instances": 1}},
                  {"app": {"instances": 1}, "host": {"instances": 1}},
                  {"app": {"instances": 1, "removed_ids_exclude_hint": "app_x"}}):
        with pytest.raises(CloudifyClientError) as bad:
            modifications.start(dep, nodes)
        assert (bad.value.status_code, bad.value.error_code) == (400, "bad_parameters_error"), nodes
    with pytest.raises(CloudifyClientError) as missing:
        modifications.start("no-such-deployment", {"app": {"instances": 1}})
    assert missing.value.status_code == 404


def test_a_deployment_shows_its_scaling_group_s_current_and_planned_instances(server, tmp_path):
    client, cfy, mark = rest_client(server), cfy_on(server, tmp_path), tmp_path / "fail-create"
    client.blueprints.upload(folder(tmp_path, GROUPED), "bp-grouped")
    client.deployments.create("bp-grouped", "grouped", inputs={"mark": str(mark)})
    cfy("executions", "start", "install", "-d", "grouped")

    def counts() -> tuple[int, int]:
        shown = client.deployments.get("grouped").scaling_groups["pair"]["properties"]
        return shown["current_instances"], shown["planned_instances"]

    assert counts() == (1, 1)
    cfy("executions", "start", "scale", "-d", "grouped", "-p", "scalable_entity_name=pair")
    assert counts() == (2, 2)
    mark.write_text("")
    cfy("executions", "start", "scale", "-d", "grouped", "-p", "scalable_entity_name=pair", "-p",
        "rollback_if_failed=false", ok=False)
    assert counts() == (2, 3)  # its modification is started
    [started] = client.deployment_modifications.list(deployment_id="grouped", status="started")
    cfy("deployments", "modifications", "rollback", started.id)
    assert counts() == (2, 2)
    cfy("executions", "start", "scale", "-d", "grouped", "-p", "scalable_entity_name=pair", ok=False)
    assert counts() == (2, 2)  # rolled back by the scale itself
