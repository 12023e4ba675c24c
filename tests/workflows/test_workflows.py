"""execute_operation, start/stop/restart, scale out and in, heal, custom script workflows, secrets masked."""

from __future__ import annotations

import pytest

from .conftest import deploy, states

LOGGED = """
inputs:
  hosts: {type: integer, default: 1}
  fail_unlink: {type: boolean, default: false}
node_templates:
  host:
    type: cloudify.nodes.Compute
    capabilities: {scalable: {properties: {default_instances: {get_input: hosts}, max_instances: 4}}}
    interfaces:
      cloudify.interfaces.lifecycle: &ops
        create: scripts/op.sh
        start: scripts/op.sh
        stop: scripts/op.sh
        delete: scripts/op.sh
      custom:
        touch:
          implementation: scripts/op.sh
          inputs: {word: default}
  app:
    type: cloudify.nodes.SoftwareComponent
    interfaces:
      cloudify.interfaces.lifecycle: *ops
    relationships:
      - {type: cloudify.relationships.contained_in, target: host}
  lb:
    type: cloudify.nodes.LoadBalancer
    interfaces:
      cloudify.interfaces.lifecycle: *ops
    relationships:
      - type: cloudify.relationships.connected_to
        target: app
        source_interfaces:
          cloudify.interfaces.relationship_lifecycle:
            establish: scripts/link.sh
            unlink: {implementation: scripts/link.sh, inputs: {fail: {get_input: fail_unlink}}}
workflows:
  greet:
    mapping: scripts/greet.sh
    parameters:
      who: {default: world}
      password: {default: {get_secret: db_password}}
"""

SCRIPTS = {
    "scripts/op.sh": 'echo "$(ctx operation name | sed \'s/.*\\.//\') $(ctx instance id) ${word:-}" >> "$TRACE"\n',
    "scripts/link.sh": 'echo "$(ctx operation name | sed \'s/.*\\.//\') $(ctx source instance id)->$(ctx target instance id)" >> "$TRACE"\n'
                       'if [ "${fail:-}" = "true" ]; then exit 1; fi\n',
    "scripts/greet.sh": """
        echo "hello $who from $(ctx deployment id), workflow $(ctx workflow-id)" >> "$TRACE"
        echo "the password is s3cr3t-pw"
        ctx logger info "again: s3cr3t-pw"
    """,
}


@pytest.fixture
def trace(tmp_path, monkeypatch):
    path = tmp_path / "trace.txt"
    monkeypatch.setenv("TRACE", str(path))
    return path


@pytest.fixture
def dep(engine, tmp_path, trace):
    engine.blueprints.secrets.create("db_password", "s3cr3t-pw")
    name = deploy(engine, tmp_path / "bp", LOGGED, SCRIPTS)
    assert engine.executions.start("install", name)["status"] == "terminated"
    trace.write_text("")
    return name


def _ids(engine, dep, node):
    return [i["id"] for i in engine.blueprints.deployments.node_instances(dep) if i["node_id"] == node]


def _lines(trace):
    return trace.read_text().splitlines()


def test_execute_operation_on_chosen_instances_with_kwargs(engine, dep, trace):
    [host] = _ids(engine, dep, "host")
    done = engine.executions.start("execute_operation", dep, {
        "operation": "custom.touch", "node_ids": ["host"], "operation_kwargs": {"word": "given"},
        "allow_kwargs_override": True})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == [f"touch {host} given"]
    refused = pytest.raises(Exception, match="Parameter \"operation\" does not meet its constraints: Value "
                                             "'custom.nope' of 'operation' is not a valid value for data type "
                                             "'operation_name'.")
    with refused:
        engine.executions.start("execute_operation", dep, {"operation": "custom.nope"})
    trace.write_text("")  # declared by host only: on app, as in Cloudify, nothing runs
    done = engine.executions.start("execute_operation", dep, {"operation": "custom.touch", "node_ids": ["app"]})
    assert (done["status"], _lines(trace)) == ("terminated", [])


def test_install_and_uninstall_of_chosen_nodes_unlink_and_establish_the_others_relationships(engine, dep, trace):
    [host], [app], [lb] = (_ids(engine, dep, n) for n in ("host", "app", "lb"))
    done = engine.executions.start("uninstall", dep, {"node_ids": ["app"]})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == [f"unlink {lb}->{app}", f"stop {app} ", f"delete {app} "]
    assert states(engine, dep) == {"host": "started", "app": "deleted", "lb": "started"}
    trace.write_text("")
    done = engine.executions.start("install", dep, {"type_names": ["cloudify.nodes.SoftwareComponent"]})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == [f"create {app} ", f"start {app} ", f"establish {lb}->{app}"]


def test_a_failed_unlink_of_an_instance_left_in_place_does_not_fail_the_uninstall(engine, tmp_path, trace):
    dep = deploy(engine, tmp_path / "failing", LOGGED, SCRIPTS, inputs={"fail_unlink": True})
    assert engine.executions.start("install", dep)["status"] == "terminated"
    [app], [lb] = (_ids(engine, dep, n) for n in ("app", "lb"))
    trace.write_text("")
    done = engine.executions.start("uninstall", dep, {"node_ids": ["app"]})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == [f"unlink {lb}->{app}", f"stop {app} ", f"delete {app} "]
    assert [e["message"] for e in engine.executions.events(done["id"]) if e["message"].startswith("Ignoring")] == [
        "Ignoring task cloudify.interfaces.relationship_lifecycle.unlink failure"]


def test_stop_start_restart_in_dependency_order(engine, dep, trace):
    """As cloudify-common's: stop runs execute_operation's one order, a target before its source (the host
    stops before what it contains), and restart stops all, then starts all, in that order."""
    [host], [app], [lb] = (_ids(engine, dep, n) for n in ("host", "app", "lb"))
    assert engine.executions.start("stop", dep, {"run_by_dependency_order": True})["status"] == "terminated"
    assert _lines(trace) == [f"stop {host} ", f"stop {app} ", f"stop {lb} "]
    trace.write_text("")
    assert engine.executions.start("restart", dep, {"run_by_dependency_order": True})["status"] == "terminated"
    assert _lines(trace) == [f"stop {host} ", f"stop {app} ", f"stop {lb} ",
                             f"start {host} ", f"start {app} ", f"start {lb} "]
    assert set(states(engine, dep).values()) == {"started"}  # as Cloudify: start/stop run operations only


def test_scale_out_and_in_a_compute_with_what_it_contains(engine, dep, trace):
    [old_host], [old_app], [lb] = (_ids(engine, dep, n) for n in ("host", "app", "lb"))
    out = engine.executions.start("scale", dep, {"scalable_entity_name": "app", "delta": 2, "scale_compute": True})
    assert out["status"] == "terminated", out["error"]
    hosts, apps = _ids(engine, dep, "host"), _ids(engine, dep, "app")
    assert len(hosts) == 3 and len(apps) == 3 and hosts[0] == old_host and apps[0] == old_app
    lines = _lines(trace)
    for host, app in zip(hosts[1:], apps[1:]):
        assert lines.index(f"start {host} ") < lines.index(f"create {app} ")
        assert f"establish {lb}->{app}" in lines  # the load balancer is connected to the new apps too
    assert not any(old_host in line or old_app in line for line in lines)  # the old unit is untouched
    instances = {i["id"]: i for i in engine.blueprints.deployments.node_instances(dep)}
    assert all(instances[i]["state"] == "started" for i in hosts + apps)
    assert [i["index"] for i in instances.values() if i["node_id"] == "host"] == [1, 2, 3]
    assert [r["target_id"] for r in instances[lb]["relationships"]] == apps
    assert {n["id"]: n["number_of_instances"] for n in engine.blueprints.deployments.nodes(dep)} == \
        {"host": 3, "app": 3, "lb": 1}
    with pytest.raises(Exception, match=r"would have 5 instances, outside its bounds \[0, 4\]"):
        engine.executions.start("scale", dep, {"scalable_entity_name": "host", "delta": 2})

    trace.write_text("")
    back = engine.executions.start("scale", dep, {"scalable_entity_name": "host", "delta": -2})
    assert back["status"] == "terminated", back["error"]
    assert _ids(engine, dep, "host") == [old_host] and _ids(engine, dep, "app") == [old_app]
    lines = _lines(trace)
    for host, app in zip(hosts[1:], apps[1:]):
        assert lines.index(f"unlink {lb}->{app}") < lines.index(f"stop {app} ") < lines.index(f"stop {host} ")
    lb_row = next(i for i in engine.blueprints.deployments.node_instances(dep) if i["id"] == lb)
    assert [r["target_id"] for r in lb_row["relationships"]] == [old_app]
    assert {n["id"]: n["number_of_instances"] for n in engine.blueprints.deployments.nodes(dep)} == \
        {"host": 1, "app": 1, "lb": 1}


def test_heal_with_force_reinstall_reinstalls_the_instance_and_what_it_contains(engine, dep, trace):
    [host], [app], [lb] = (_ids(engine, dep, n) for n in ("host", "app", "lb"))
    healed = engine.executions.start("heal", dep, {"node_instance_id": host, "force_reinstall": True})
    assert healed["status"] == "terminated", healed["error"]
    assert _lines(trace) == [f"unlink {lb}->{app}", f"stop {app} ", f"delete {app} ", f"stop {host} ",
                             f"delete {host} ", f"create {host} ", f"start {host} ", f"create {app} ", f"start {app} ",
                             f"establish {lb}->{app}"]
    assert set(states(engine, dep).values()) == {"started"}


def test_custom_workflow_script_with_parameters_and_secrets_masked(engine, dep, trace):
    done = engine.executions.start("greet", dep, {"who": "stoker"})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == [f"hello stoker from {dep}, workflow greet"]
    logs = engine.executions.events(done["id"], include_logs=True)
    messages = [e["message"] for e in logs]
    assert "the password is ******" in messages and "again: ******" in messages
    assert not any("s3cr3t-pw" in m for m in messages)


GROUPED = """
node_templates:
  vm:
    type: cloudify.nodes.Compute
    interfaces: {cloudify.interfaces.lifecycle: {create: scripts/op.sh, delete: scripts/op.sh}}
  app:
    type: cloudify.nodes.ApplicationModule
    interfaces: {cloudify.interfaces.lifecycle: {create: scripts/op.sh, delete: scripts/op.sh}}
    relationships: [{type: cloudify.relationships.contained_in, target: vm}]
groups:
  pair: {members: [vm, app]}
policies:
  pairs:
    type: cloudify.policies.scaling
    properties: {default_instances: 1, max_instances: 3}
    targets: [pair]
"""


def test_scale_a_scaling_group_out_and_in(engine, tmp_path, trace):
    dep = deploy(engine, tmp_path / "grouped", GROUPED, SCRIPTS, name="grouped")
    assert engine.executions.start("install", dep)["status"] == "terminated"
    [vm1], [app1] = _ids(engine, dep, "vm"), _ids(engine, dep, "app")
    trace.write_text("")
    assert engine.executions.start("scale", dep, {"scalable_entity_name": "pair", "delta": 2})["status"] == "terminated"
    rows = {i["id"]: i for i in engine.blueprints.deployments.node_instances(dep)}
    vms, apps = _ids(engine, dep, "vm"), _ids(engine, dep, "app")
    assert len(vms) == len(apps) == 3 and vms[0] == vm1 and apps[0] == app1
    group_ids = [rows[vm]["scaling_groups"][0]["id"] for vm in vms]
    assert len(set(group_ids)) == 3  # one new group instance per pair (the app is in it through its vm)
    for vm, app in zip(vms[1:], apps[1:]):
        assert rows[app]["scaling_groups"] == rows[app1]["scaling_groups"]
        assert rows[app]["relationships"][0]["target_id"] == vm and rows[app]["host_id"] == vm
    assert sorted(_lines(trace)) == sorted([f"create {i} " for i in vms[1:] + apps[1:]])
    with pytest.raises(Exception, match=r"would have 4 instances, outside its bounds \[0, 3\]"):
        engine.executions.start("scale", dep, {"scalable_entity_name": "pair", "delta": 1})
    trace.write_text("")
    assert engine.executions.start("scale", dep, {"scalable_entity_name": "pair", "delta": -1})["status"] == "terminated"
    assert _ids(engine, dep, "vm") == vms[:2] and _ids(engine, dep, "app") == apps[:2]
    assert _lines(trace) == [f"delete {apps[2]} ", f"delete {vms[2]} "]


def test_cloudify_s_own_workflows_run_under_any_plugin_name(engine, tmp_path, trace):
    """``builtin.cloudify.plugins.workflows.install`` (cloudify-manager's deployment-update test
    blueprints map their install so) is cloudify-common's install, as ``default_workflows.`` is."""
    dep = deploy(engine, tmp_path / "own", """
        plugins:
          builtin: {executor: central_deployment_agent, install: false}
        node_templates:
          n:
            type: cloudify.nodes.Root
            interfaces:
              cloudify.interfaces.lifecycle: {create: scripts/op.sh, delete: scripts/op.sh}
        workflows:
          deploy_all: builtin.cloudify.plugins.workflows.install
          remove_all: {mapping: builtin.cloudify.plugins.workflows.uninstall}
        """, SCRIPTS, name="own")
    [n] = _ids(engine, dep, "n")
    assert engine.executions.start("deploy_all", dep)["status"] == "terminated"
    assert states(engine, dep) == {"n": "started"}
    assert engine.executions.start("remove_all", dep)["status"] == "terminated"
    assert states(engine, dep) == {"n": "deleted"} and _lines(trace) == [f"create {n} ", f"delete {n} "]
