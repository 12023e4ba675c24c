"""The built-in workflows Cloudify's types declare beyond install/uninstall/scale: check_status,
check_drift, pull, reinstall and rollback run; install_new_agents and validate_agents are refused."""

from __future__ import annotations

import pytest

from stoker.errors import StokerError

from .conftest import deploy, states

BLUEPRINT = """
inputs:
  fail_create: {type: boolean, default: false}
node_templates:
  host:
    type: cloudify.nodes.Compute
    interfaces:
      cloudify.interfaces.lifecycle: &ops
        create: scripts/op.sh
        delete: scripts/op.sh
        pull: scripts/op.sh
        check_drift: scripts/op.sh
      cloudify.interfaces.validation:
        check_status: scripts/op.sh
  app:
    type: cloudify.nodes.SoftwareComponent
    interfaces:
      cloudify.interfaces.lifecycle:
        <<: *ops
        create:
          implementation: scripts/op.sh
          inputs: {fail: {get_input: fail_create}}
      cloudify.interfaces.validation:
        check_status:
          implementation: scripts/op.sh
          inputs: {fail: {get_attribute: [SELF, broken]}}
    relationships:
      - {type: cloudify.relationships.contained_in, target: host}
"""

SCRIPTS = {"scripts/op.sh": """
    echo "$(ctx node id) $(ctx operation name | sed 's/.*\\.//') ${word:-}" >> "$TRACE"
    if [ "${fail:-}" = "true" ]; then echo "broken" >&2; exit 1; fi
    """}


@pytest.fixture
def trace(tmp_path, monkeypatch):
    path = tmp_path / "trace.txt"
    monkeypatch.setenv("TRACE", str(path))
    path.write_text("")
    return path


def _lines(trace) -> list[str]:
    return [line.strip() for line in trace.read_text().splitlines()]


def _installed(engine, tmp_path, trace, **inputs) -> str:
    name = deploy(engine, tmp_path / "bp", BLUEPRINT, SCRIPTS, inputs=inputs)
    engine.executions.start("install", name)
    trace.write_text("")
    return name


def test_check_status_runs_each_instance_check_and_fails_on_a_failed_one(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    assert engine.executions.start("check_status", dep)["status"] == "terminated"
    assert sorted(_lines(trace)) == ["app check_status", "host check_status"]
    [app] = [i for i in engine.blueprints.deployments.node_instances(dep) if i["node_id"] == "app"]
    engine.blueprints.deployments.update_node_instance(app["id"], dep, runtime_properties={"broken": True})
    failed = engine.executions.start("check_status", dep)
    assert failed["status"] == "failed" and "cloudify.interfaces.validation.check_status on app" in failed["error"]


def test_pull_and_check_drift_run_their_operations_in_dependency_order(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    assert engine.executions.start("pull", dep, {"operation_parms": {"word": "fresh"}})["status"] == "terminated"
    assert _lines(trace) == ["host pull fresh", "app pull fresh"]
    trace.write_text("")
    assert engine.executions.start("check_drift", dep, {"node_ids": ["app"]})["status"] == "terminated"
    assert _lines(trace) == ["app check_drift"]


def test_reinstall_uninstalls_then_installs_the_chosen_instances(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    assert engine.executions.start("reinstall", dep, {"node_ids": ["app"]})["status"] == "terminated"
    assert _lines(trace) == ["app delete", "app create"]
    assert states(engine, dep) == {"host": "started", "app": "started"}


def test_rollback_takes_instances_left_half_made_back_and_full_rollback_everything(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_create=True)
    assert states(engine, dep) == {"host": "started", "app": "creating"}
    assert engine.executions.start("rollback", dep)["status"] == "terminated"
    assert _lines(trace) == ["app delete"]
    assert states(engine, dep) == {"host": "started", "app": "deleted"}
    trace.write_text("")
    assert engine.executions.start("rollback", dep, {"full_rollback": True})["status"] == "terminated"
    assert _lines(trace) == ["host delete"]
    assert states(engine, dep) == {"host": "deleted", "app": "deleted"}


@pytest.mark.parametrize("workflow", ["install_new_agents", "validate_agents"])
def test_agent_workflows_are_refused_saying_why(engine, tmp_path, trace, workflow):
    dep = _installed(engine, tmp_path, trace)
    with pytest.raises(StokerError, match=f"workflow {workflow} is not supported by Stoker: its operations run "
                                          "as local processes, with no agent"):
        engine.executions.start(workflow, dep)
    assert [e["workflow_id"] for e in engine.executions.list(dep)] == ["install"]  # nothing stored
