"""Built-in workflows as Cloudify 7 runs them, through the real ``cfy`` on ``stoker api``: ``cfy uninstall
--recursive`` (and ``-p recursive=true``) uninstalls the service deployments first; an execution and a deployment
modification are ``created_by`` the user who asked for them."""

from __future__ import annotations

import pytest

from box_blueprint import write_box

from .conftest import PASSWORD, cfy_on, cloudify_server, rest_client
from .test_composition_rest import CHILD, PARENT, _ended

pytestmark = pytest.mark.slow  # a server of its own, `cfy` processes

pytest.importorskip("cloudify_rest_client")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = cloudify_server(tmp_path_factory.mktemp("parity"), [("admin", "default_tenant", "manager"),
                                                                   ("alice", "default_tenant", "user")],
                              extra=("--allow-local-resources",))
    yield started
    started.stop()


def _family(client, cfy, tmp_path, suffix: str) -> tuple:
    """env-S, svc-S (its service) and leaf-S (svc-S's), installed, of blueprint box-S; the trace file."""
    trace = tmp_path / "trace.txt"
    box = write_box(tmp_path / "box", f'echo "delete $(ctx deployment id)" >> {trace}\n', "delete.sh",
                    operation="delete")
    client.blueprints.upload(str(box), f"box-{suffix}")
    env, svc, leaf = f"env-{suffix}", f"svc-{suffix}", f"leaf-{suffix}"
    client.deployments.create(f"box-{suffix}", env)
    client.deployments.create(f"box-{suffix}", svc, labels=[{"csys-obj-parent": env}])
    client.deployments.create(f"box-{suffix}", leaf, labels=[{"csys-obj-parent": svc}])
    for name in (env, svc, leaf):
        cfy("executions", "start", "install", "-d", name)
    return env, svc, leaf, trace


def test_cfy_uninstall_recursive_uninstalls_and_deletes_the_services_first(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    env, svc, leaf, trace = _family(client, cfy, tmp_path, "a")
    cfy("uninstall", env, "--recursive")
    assert trace.read_text().splitlines() == [f"delete {leaf}", f"delete {svc}", f"delete {env}"]
    left = {d["id"] for d in client.deployments.list()}
    assert not left & {env, svc, leaf}  # then deleted, children first, as `cfy deployments delete --recursive`


def test_cfy_executions_start_uninstall_with_recursive_true(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    env, svc, leaf, trace = _family(client, cfy, tmp_path, "b")
    cfy("profiles", "set", "-u", "alice", "-p", PASSWORD)
    cfy("executions", "start", "uninstall", "-d", env, "-p", "recursive=true")
    assert trace.read_text().splitlines() == [f"delete {leaf}", f"delete {svc}", f"delete {env}"]
    [run] = client.executions.list(deployment_id=leaf, workflow_id="uninstall")
    assert run["status"] == "terminated" and run["parameters"]["recursive"] is True
    groups = {g["deployment_group_id"]: g for g in client.execution_groups.list()}
    assert groups["env-b_services_uninstall"]["execution_ids"] == [
        e["id"] for e in client.executions.list(deployment_id=svc, workflow_id="uninstall")]
    assert groups["env-b_services_uninstall"]["created_by"] == "alice" == run["created_by"]
    assert "env-b_services_uninstall" not in {g["id"] for g in client.deployment_groups.list()}
    assert {i["state"] for name in (env, svc, leaf) for i in client.node_instances.list(deployment_id=name)} == {
        "deleted"}


def test_a_scale_s_execution_and_modification_are_created_by_the_user_who_asked(server, tmp_path):
    cfy, client, alice = cfy_on(server, tmp_path), rest_client(server), rest_client(server, "alice")
    client.blueprints.upload(str(write_box(tmp_path / "box", "true\n")), "box-c")
    client.deployments.create("box-c", "scaled")
    cfy("executions", "start", "install", "-d", "scaled")
    cfy("profiles", "set", "-u", "alice", "-p", PASSWORD)
    cfy("executions", "start", "scale", "-d", "scaled", "-p", "scalable_entity_name=box")
    [scale] = client.executions.list(deployment_id="scaled", workflow_id="scale")
    assert (scale["status"], scale["created_by"]) == ("terminated", "alice")
    [install] = client.executions.list(deployment_id="scaled", workflow_id="install")
    assert install["created_by"] == "admin"
    [scaled] = client.deployment_modifications.list(deployment_id="scaled")
    assert scaled["created_by"] == "alice"

    # one a plugin's workflow starts over the REST API: its caller's
    started = alice.deployment_modifications.start("scaled", {"box": {"instances": 3}})
    assert client.deployment_modifications.get(started.id)["created_by"] == "alice"
    alice.deployment_modifications.rollback(started.id)


def test_what_an_execution_starts_on_a_component_s_child_is_its_user_s(server, tmp_path):
    """The manager's own operations act with the execution's token: the Component's child's install is alice's."""
    (tmp_path / "app" / "child").mkdir(parents=True)
    (tmp_path / "app" / "child" / "blueprint.yaml").write_text(CHILD)
    (tmp_path / "app" / "blueprint.yaml").write_text(PARENT.replace("shop-db-password", "parity-password"))
    alice = rest_client(server, "alice")
    alice.blueprints.upload(str(tmp_path / "app" / "blueprint.yaml"), "app-d")
    alice.deployments.create("app-d", "parent-d")
    installed = _ended(alice, alice.executions.start("parent-d", "install")["id"])
    assert (installed["status"], installed["created_by"]) == ("terminated", "alice"), installed["error"]
    [child_install] = alice.executions.list(deployment_id="child", workflow_id="install")
    assert child_install["created_by"] == "alice"
