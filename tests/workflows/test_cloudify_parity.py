"""Built-in workflows where they behaved otherwise than Cloudify 7's: uninstall's ``recursive`` (service
deployments first), checked against cloudify-common's workflows and the manager's records."""

from __future__ import annotations

import pytest

from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.workflows.execution_groups import ExecutionGroups

from .conftest import deploy, states

#: one box whose create and delete append "<operation> <deployment>" to $TRACE and set its runtime property
#: ``made`` to the operation's name; the delete fails for a deployment named bad*
BOX = """
node_templates:
  box:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/op.sh
        delete: scripts/op.sh
"""
SCRIPTS = {"scripts/op.sh": """
    echo "$(ctx operation name | sed 's/.*\\.//') $(ctx deployment id)" >> "$TRACE"
    ctx instance runtime-properties made "$(ctx operation name | sed 's/.*\\.//')"
    case "$(ctx operation name)-$(ctx deployment id)" in *delete-bad*) exit 1 ;; esac
"""}


@pytest.fixture
def trace(tmp_path, monkeypatch):
    path = tmp_path / "trace.txt"
    monkeypatch.setenv("TRACE", str(path))
    return path


def _family(engine, tmp_path, trace, *members: tuple[str, str | None]) -> None:
    """Each (deployment, its parent) of one blueprint, installed; the trace emptied."""
    for name, parent in members:
        labels = [("csys-obj-parent", parent)] if parent else []
        deploy(engine, tmp_path / name, BOX, SCRIPTS, name=name, labels=labels)
        assert engine.executions.start("install", name)["status"] == "terminated"
    trace.write_text("")


def test_a_recursive_uninstall_uninstalls_the_services_first_generation_after_generation(engine, tmp_path, trace):
    _family(engine, tmp_path, trace, ("env", None), ("svc", "env"), ("leaf", "svc"), ("other", None))
    ended = engine.executions.start("uninstall", "env", {"recursive": True})
    assert ended["status"] == "terminated", ended["error"]
    # the leaf before its parent, the parent before the environment; a deployment outside untouched
    assert trace.read_text().splitlines() == ["delete leaf", "delete svc", "delete env"]
    assert {name: states(engine, name)["box"] for name in ("env", "svc", "leaf", "other")} == {
        "env": "deleted", "svc": "deleted", "leaf": "deleted", "other": "started"}
    # as Cloudify's: an execution group of the same workflow per generation, recursive, with the parent's
    # parameters; the deployment groups that gathered them are gone
    groups = ExecutionGroups(engine.executions).list()
    assert sorted(g["deployment_group_id"] for g in groups) == ["env_services_uninstall", "svc_services_uninstall"]
    assert {g["workflow_id"] for g in groups} == {"uninstall"} and {g["status"] for g in groups} == {"terminated"}
    [svc_run] = [e for e in engine.executions.list("svc") if e["workflow_id"] == "uninstall"]
    assert svc_run["parameters"]["recursive"] is True and svc_run["parameters"]["ignore_failure"] is False
    assert DeploymentGroups(engine.blueprints.deployments).list() == []
    messages = [e["message"] for e in engine.executions.events(ended["id"], include_logs=True)]
    assert messages.index("Uninstalling service deployments recursively") < messages.index(
        "Service deployments uninstalled") < next(i for i, m in enumerate(messages) if m.endswith(" is deleting"))


def test_a_failed_service_uninstall_does_not_stop_the_environments(engine, tmp_path, trace):
    """cloudify-common waits for the services' executions to end, whatever their end, and goes on."""
    _family(engine, tmp_path, trace, ("env", None), ("bad", "env"))
    ended = engine.executions.start("uninstall", "env", {"recursive": True})
    assert ended["status"] == "terminated", ended["error"]
    [bad_run] = [e for e in engine.executions.list("bad") if e["workflow_id"] == "uninstall"]
    assert bad_run["status"] == "failed"
    assert trace.read_text().splitlines() == ["delete bad", "delete env"]
    assert states(engine, "env")["box"] == "deleted"



#: a host with an app in it, whose create fails while the file FAIL exists, and a load balancer connected to the
#: app; each operation appends "<operation> <node>" (an unlink: "unlink lb->app") to $TRACE
HOSTED = """
node_templates:
  host:
    type: cloudify.nodes.Compute
    properties: {agent_config: {install_method: none}}
    capabilities: {scalable: {properties: {max_instances: 3}}}
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/op.sh, stop: scripts/op.sh, delete: scripts/op.sh}
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/op.sh, delete: scripts/op.sh}
    relationships: [{type: cloudify.relationships.contained_in, target: host}]
  lb:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.connected_to
        target: app
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle: {establish: scripts/link.sh, unlink: scripts/link.sh}
"""
HOSTED_SCRIPTS = {
    "scripts/op.sh": """
        echo "$(ctx operation name | sed 's/.*\\.//') $(ctx node id)" >> "$TRACE"
        if [ "$(ctx node id)" = app ] && [ -e "$FAIL" ]; then exit 1; fi
    """,
    "scripts/link.sh": 'echo "$(ctx operation name | sed \'s/.*\\.//\') lb->$(ctx target node id)" >> "$TRACE"\n'}


def test_a_failed_scale_out_takes_back_only_what_was_cut_short(engine, tmp_path, trace, monkeypatch):
    """cloudify-common's ``rollback_node_instances``: the added app, cut short while creating, is deleted (the
    load balancer's relationship to it unlinked first, established or not); the added host, which got started,
    is left as it is: no stop, no delete, its row gone with the modification's rollback."""
    monkeypatch.setenv("FAIL", str(tmp_path / "fail"))
    deploy(engine, tmp_path / "bp", HOSTED, HOSTED_SCRIPTS)
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    trace.write_text("")
    (tmp_path / "fail").write_text("")
    failed = engine.executions.start("scale", "dep", {"scalable_entity_name": "host"})
    assert failed["status"] == "failed" and "lifecycle.create on app_" in failed["error"]
    assert trace.read_text().splitlines() == ["create host", "create app", "unlink lb->app", "delete app"]
    [modification] = engine.executions.modifications.list("dep")
    assert modification["status"] == "rolledback"
    assert sorted(states(engine, "dep")) == ["app", "host", "lb"]


def test_a_modification_lists_every_instance_before_it_and_before_its_rollback(engine, tmp_path, trace):
    """As the manager's record: ``before_modification`` is every instance of the deployment, touched or not, as it
    was; ``before_rollback`` every one as it is when rolled back."""
    _family(engine, tmp_path, trace, ("dep", None))
    [first] = [i["id"] for i in engine.blueprints.deployments.node_instances("dep")]
    assert engine.executions.start("scale", "dep", {"scalable_entity_name": "box"})["status"] == "terminated"
    modifications = engine.executions.modifications
    [scaled] = modifications.list("dep")
    assert [(i["id"], i["state"]) for i in scaled["node_instances"]["before_modification"]] == [(first, "started")]
    second = next(i["id"] for i in engine.blueprints.deployments.node_instances("dep") if i["id"] != first)

    started = modifications.start("dep", {"box": {"instances": 3}})
    assert [i["id"] for i in started["node_instances"]["before_modification"]] == [first, second]
    [third] = [i["id"] for i in started["node_instances"]["added_and_related"] if i.get("modification") == "added"]
    rolled = modifications.rollback(started["id"])
    assert [(i["id"], i["state"]) for i in rolled["node_instances"]["before_rollback"]] == [
        (first, "started"), (second, "started"), (third, "uninitialized")]


def test_a_failed_scale_in_s_rollback_puts_its_instances_back_as_they_were(engine, tmp_path, trace):
    """The manager's rollback sets every instance back from ``before_modification``: the one whose delete failed
    is started again, with the runtime properties it had."""
    _family(engine, tmp_path, trace, ("bad", None))
    assert engine.executions.start("scale", "bad", {"scalable_entity_name": "box"})["status"] == "terminated"
    failed = engine.executions.start("scale", "bad", {"scalable_entity_name": "box", "delta": -1})
    assert failed["status"] == "failed" and "lifecycle.delete" in failed["error"]
    assert trace.read_text().splitlines() == ["create bad", "delete bad"]
    [_, rolled] = engine.executions.modifications.list("bad")
    [removed] = [i["id"] for i in rolled["node_instances"]["removed_and_related"] if i.get("modification") == "removed"]
    assert rolled["status"] == "rolledback"
    assert [(i["state"], i["runtime_properties"]["made"]) for i in rolled["node_instances"]["before_rollback"]
            if i["id"] == removed] == [("deleting", "delete")]
    again = engine.blueprints.deployments.node_instance(removed)
    assert (again["state"], again["runtime_properties"]) == ("started", {"made": "create"})
