"""Deployment groups and execution groups through Cloudify's own ``cfy`` and cloudify-rest-client on
``stoker api``: a group made by ids and by labels, a workflow run on all of its deployments at most
``concurrency`` at a time, the group's status from its executions', cancel, resume, a group extended
with new deployments of its default blueprint, delete, and the manager's errors."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime

import pytest

from box_blueprint import write_box
from .conftest import cfy_on, cloudify_server, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

ENDED = ("terminated", "failed", "cancelled")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("groups")
    started = cloudify_server(tmp, [("admin", "default_tenant", "manager"), ("eve", "default_tenant", "viewer"),
                                    ("bob", "other_tenant", "manager")], extra=("--allow-local-resources",))
    yield started
    started.stop()


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.rstrip("Z"))


def _group_ended(client, group_id: str, bound: float = 120) -> dict:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        group = client.execution_groups.get(group_id)
        if group.status in ENDED:
            return group
        time.sleep(0.1)
    raise AssertionError(f"execution group {group_id} still {group.status} after {bound} s")


def test_cfy_runs_install_on_a_group_one_at_a_time(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy = cfy_on(server, tmp_path)
    client = rest_client(server)
    cfy("blueprints", "upload", str(write_box(tmp_path / "timed", "sleep 0.4\n")), "-b", "timed")
    cfy("deployments", "create", "d1", "-b", "timed")
    for name in ("d2", "d3", "other"):
        cfy("deployments", "create", name, "-b", "timed", "--labels", "env:prod" if name != "other" else "env:dev")
    assert "Group grp created" in cfy("deployments", "groups", "create", "grp", "-b", "timed",
                                      "--description", "three boxes")
    cfy("deployments", "groups", "extend", "grp", "-d", "d1")
    assert "It now contains 3 deployments" in cfy("deployments", "groups", "extend", "grp", "-lr", "env=prod")
    group = client.deployment_groups.get("grp")
    assert (group.deployment_ids, group.default_blueprint_id, group.description) == (["d1", "d2", "d3"], "timed",
                                                                                     "three boxes")
    assert "grp" in cfy("deployments", "groups", "list")
    listed = json.loads(cfy("deployments", "list", "--group-id", "grp", "--json"))
    assert [d["id"] for d in listed] == ["d1", "d2", "d3"]
    by_blueprint = client.summary.deployments.get(_target_field="blueprint_id", deployment_group_id="grp")
    assert [(i["blueprint_id"], i["deployments"]) for i in by_blueprint] == [("timed", 3)]  # "other" is not in it

    out = cfy("executions", "groups", "start", "install", "-g", "grp", "--concurrency", "1")
    assert "Finished executing workflow install on deployment group grp" in out
    [started] = client.execution_groups.list()
    assert (started.deployment_group_id, started.workflow_id, started.concurrency, started.status) == (
        "grp", "install", 1, "terminated")
    runs = sorted((client.executions.get(i) for i in started.execution_ids), key=lambda e: e.started_at)
    assert sorted(e.deployment_id for e in runs) == ["d1", "d2", "d3"]
    assert all(e.status == "terminated" for e in runs)
    for before, after in zip(runs, runs[1:]):  # concurrency 1: each started once the one before it ended
        assert _moment(before.ended_at) <= _moment(after.started_at), (before, after)
    events = client.events.list(execution_group_id=started.id, include_logs=True, _size=1000)
    assert sum(e["event_type"] == "workflow_succeeded" for e in events) == 3
    assert "install" in cfy("executions", "groups", "get", started.id)
    assert sorted(e.deployment_id for e in client.executions.list(execution_group_id=started.id)) == ["d1", "d2", "d3"]
    assert re.search(r"terminated:\s+3", cfy("executions", "groups", "details", started.id))  # by status

    missing = cfy("executions", "groups", "start", "no_such_flow", "-g", "grp", ok=False)
    assert "Workflow no_such_flow does not exist in the deployment d1" in missing
    with pytest.raises(CloudifyClientError) as unknown:
        client.deployment_groups.get("nope")
    assert (unknown.value.status_code, unknown.value.error_code) == (404, "not_found_error")
    assert "Requested `DeploymentGroup` with ID `nope` was not found" in str(unknown.value)
    with pytest.raises(CloudifyClientError) as no_group:
        client.execution_groups.start("nope", "install")
    assert no_group.value.status_code == 404
    with pytest.raises(CloudifyClientError) as no_run:
        client.execution_groups.get("nope")
    assert (no_run.value.status_code, no_run.value.error_code) == (404, "not_found_error")

    cfy("deployments", "groups", "labels", "add", "tier:web", "grp")
    assert "tier" in cfy("deployments", "groups", "labels", "list", "grp")
    cfy("deployments", "groups", "update", "grp", "--description", "boxes")
    assert client.deployment_groups.get("grp").description == "boxes"
    assert {"key": "tier", "value": "web"} in [
        {"key": label["key"], "value": label["value"]} for label in client.deployments.get("d1").labels]
    assert "It now contains 5 deployments" in cfy("deployments", "groups", "extend", "grp", "--count", "2")
    made = [d for d in client.deployment_groups.get("grp").deployment_ids if d.startswith("grp-")]
    assert len(made) == 2
    assert [(label["key"], label["value"]) for label in client.deployments.get(made[0]).labels] == [("tier", "web")]
    cfy("deployments", "groups", "labels", "delete", "tier", "grp")  # its deployments lose it too
    assert client.deployments.get(made[0]).labels == [] and client.deployment_groups.get("grp").labels == []
    cfy("deployments", "groups", "shrink", "grp", "-d", "d1")
    assert "d1" not in client.deployment_groups.get("grp").deployment_ids

    cfy("deployments", "groups", "delete", "grp", "--delete-deployments")
    assert sorted(d.id for d in client.deployments.list()) == ["d1", "other"]
    with pytest.raises(CloudifyClientError):
        client.deployment_groups.get("grp")

    # a deployment lacking the workflow is left out, as the group's log says (Cloudify's manager does so)
    flows = write_box(tmp_path / "flows", "true\n", more="workflows:\n  hello: {mapping: scripts/pause.sh, "
                                                         "parameters: {greeting: {default: hi}}}\n")
    cfy("blueprints", "upload", str(flows), "-b", "flows")
    cfy("deployments", "create", "greeter", "-b", "flows")
    client.deployment_groups.put("mixed", deployment_ids=["greeter", "other"])
    out = cfy("executions", "groups", "start", "hello", "-g", "mixed", "-p", "greeting=yo")
    assert "Finished executing workflow hello on deployment group mixed" in out
    [hello] = [g for g in client.execution_groups.list() if g.workflow_id == "hello"]
    [run] = [client.executions.get(i) for i in hello.execution_ids]
    assert (run.deployment_id, run.parameters["greeting"]) == ("greeter", "yo")
    own = client.execution_groups.start("mixed", "hello", default_parameters={"greeting": "yo"},
                                        parameters={"greeter": {"greeting": "hey"}})  # a deployment's own first
    assert client.executions.get(own.execution_ids[0]).parameters["greeting"] == "hey"
    assert _group_ended(client, own.id).status == "terminated"
    logs = cfy("events", "list", "-g", hello.id, "--include-logs")
    assert "Workflow hello does not exist in the deployment other" in logs and "workflow execution succeeded" in logs


def test_cancel_and_resume_of_an_execution_group(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    client = rest_client(server)
    go = tmp_path / "go"
    path = write_box(tmp_path / "waiting", f'while [ ! -f "{go}" ]; do sleep 0.1; done\n', "wait.sh")
    client.blueprints.upload(str(path), "waiting")
    for name in ("w1", "w2", "w3"):
        client.deployments.create("waiting", name, labels=[{"kind": "waiter"}])
    client.deployment_groups.put("waiters")
    client.deployment_groups.add_deployments("waiters", filter_rules=[{"key": "kind", "values": ["waiter"],
                                                                       "operator": "any_of", "type": "label"}])
    assert client.deployment_groups.get("waiters").deployment_ids == ["w1", "w2", "w3"]

    group = client.execution_groups.start("waiters", "install", concurrency=0)  # paused: nothing starts
    assert group.status == "queued" and len(group.execution_ids) == 3
    assert {client.executions.get(i).status for i in group.execution_ids} == {"queued"}
    group = client.execution_groups.set_concurrency(group.id, 1)
    statuses = [client.executions.get(i).status for i in group.execution_ids]
    assert statuses.count("queued") >= 2 and client.execution_groups.get(group.id).status == "started"
    with pytest.raises(CloudifyClientError) as busy:  # w1 runs its install: no deployment is deleted
        client.deployment_groups.delete("waiters", delete_deployments=True)
    assert busy.value.status_code == 409 and "is running execution" in str(busy.value)
    assert client.deployment_groups.get("waiters").deployment_ids == ["w1", "w2", "w3"]
    client.execution_groups.cancel(group.id, kill=True)  # the waiting script is killed
    ended = _group_ended(client, group.id)
    assert ended.status == "terminated"  # all ended, none failed (Cloudify's rule)
    assert [client.executions.get(i).status for i in group.execution_ids] == ["cancelled"] * 3

    go.write_text("go")
    client.execution_groups.resume(group.id)
    assert _group_ended(client, group.id).status == "terminated"
    runs = [client.executions.get(i) for i in group.execution_ids]
    assert [e.status for e in runs] == ["terminated"] * 3
    assert {i.state for d in ("w1", "w2", "w3") for i in client.node_instances.list(deployment_id=d)} == {"started"}
    with pytest.raises(Exception) as wrong:
        client.execution_groups.start("waiters", "install", concurrency=-1)
    assert "concurrency must be a nonnegative number" in str(wrong.value)


def test_groups_are_their_tenants_and_viewers_only_read_them(server):
    from cloudify_rest_client.exceptions import CloudifyClientError

    admin, eve, bob = rest_client(server), rest_client(server, "eve"), rest_client(server, "bob", "other_tenant")
    admin.deployment_groups.put("kept", description="the default tenant's")
    assert eve.deployment_groups.get("kept").description == "the default tenant's"
    for refused in (lambda: eve.deployment_groups.put("kept", description="changed"),
                    lambda: eve.deployment_groups.delete("kept"),
                    lambda: eve.execution_groups.start("kept", "install")):
        with pytest.raises(CloudifyClientError) as denied:
            refused()
        assert denied.value.status_code == 403
    assert "kept" not in [g["id"] for g in bob.deployment_groups.list()]
    with pytest.raises(CloudifyClientError) as unseen:
        bob.deployment_groups.get("kept")
    assert unseen.value.status_code == 404
    bob.deployment_groups.put("kept", description="bob's own")
    assert admin.deployment_groups.get("kept").description == "the default tenant's"
    everywhere = admin.deployment_groups.list(_all_tenants=True)
    assert sorted((g["id"], g["tenant_name"]) for g in everywhere if g["id"] == "kept") == [
        ("kept", "default_tenant"), ("kept", "other_tenant")]
    with pytest.raises(CloudifyClientError) as malformed:
        admin.deployment_groups.add_deployments("kept", filter_rules=[{"key": "env", "values": ["prod"],
                                                                       "operator": "equals", "type": "label"}])
    assert (malformed.value.status_code, malformed.value.error_code) == (400, "invalid_filter_rule")


def test_deployments_join_the_success_and_failure_groups_by_how_their_execution_ended(server, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    go = tmp_path / "go"
    script = f'case "$(ctx deployment id)" in bad*) [ -f "{go}" ] || exit 1 ;; esac\n'
    client.blueprints.upload(str(write_box(tmp_path / "picky", script, "picky.sh")), "picky")
    for name in ("ok1", "bad1", "ok2"):
        client.deployments.create("picky", name)
    client.deployment_groups.put("runners", deployment_ids=["ok1", "bad1", "ok2"])
    for target in ("winners", "losers"):
        client.deployment_groups.put(target)
    group = client.execution_groups.start("runners", "install", concurrency=3)
    assert _group_ended(client, group.id).status == "failed"
    assert client.deployment_groups.get("winners").deployment_ids == []  # no target named yet

    out = cfy("executions", "groups", "set-success-group", group.id, "winners")
    assert "winners" in out
    assert client.deployment_groups.get("winners").deployment_ids == ["ok1", "ok2"]  # those that ended, at once
    client.execution_groups.set_target_group(group.id, failed_group="losers")
    assert client.deployment_groups.get("losers").deployment_ids == ["bad1"]
    shown = client.execution_groups.get(group.id)
    assert (shown["success_group_id"], shown["failed_group_id"]) == ("winners", "losers")

    go.write_text("go")  # bad1 now succeeds: its resumed execution's end puts it in the success group
    client.execution_groups.resume(group.id)
    assert _group_ended(client, group.id).status == "terminated"
    assert client.deployment_groups.get("winners").deployment_ids == ["bad1", "ok1", "ok2"]
    assert client.deployment_groups.get("losers").deployment_ids == ["bad1"]  # joining never removes

    with pytest.raises(CloudifyClientError) as unknown:
        client.execution_groups.set_target_group(group.id, success_group="nowhere")
    assert unknown.value.status_code == 404 and "nowhere" in str(unknown.value)
    with pytest.raises(CloudifyClientError) as malformed:
        client.execution_groups.set_target_group(group.id, failed_group=["losers"])
    assert malformed.value.status_code == 400 and "failure_group_id" in str(malformed.value)
    client.deployment_groups.delete("losers")
    assert client.execution_groups.get(group.id)["failed_group_id"] is None
