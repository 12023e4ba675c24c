"""The built-in workflows Cloudify's types declare beyond install/uninstall/scale: check_status,
check_drift, pull, reinstall and rollback run; install_new_agents and validate_agents are refused.
And their parameters as Cloudify 7 takes them: ``ignore_failure`` of uninstall, reinstall and heal,
rollback passing over its own failures, execute_operation's ``allow_kwargs_override``, heal's
optional ``node_instance_id``, ``force_reinstall`` and ``allow_reinstall`` (more of heal in test_health)."""

from __future__ import annotations

import pytest

from stoker.errors import StokerError

from .conftest import deploy, states

BLUEPRINT = """
inputs:
  fail_create: {type: boolean, default: false}
  fail_delete: {type: boolean, default: false}
  fail_start: {type: boolean, default: false}
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
      custom:
        touch:
          implementation: scripts/op.sh
          inputs: {word: declared}
  app:
    type: cloudify.nodes.SoftwareComponent
    interfaces:
      cloudify.interfaces.lifecycle:
        <<: *ops
        create:
          implementation: scripts/op.sh
          inputs: {fail: {get_input: fail_create}}
        start:
          implementation: scripts/op.sh
          inputs: {fail: {get_input: fail_start}}
        delete:
          implementation: scripts/op.sh
          inputs: {fail: {get_input: fail_delete}}
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
    assert _lines(trace) == ["app delete", "app create", "app start"]
    assert states(engine, dep) == {"host": "started", "app": "started"}


def test_rollback_takes_instances_left_half_made_back_and_full_rollback_everything(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_create=True)
    assert states(engine, dep) == {"host": "started", "app": "creating"}
    assert engine.executions.start("rollback", dep)["status"] == "terminated"
    assert _lines(trace) == ["app delete"]
    assert states(engine, dep) == {"host": "started", "app": "uninitialized"}  # as before its create
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


def _instance(engine, dep: str, node: str) -> str:
    [found] = [i["id"] for i in engine.blueprints.deployments.node_instances(dep) if i["node_id"] == node]
    return found


def _ignored(engine, execution: dict) -> list[str]:
    return [e["message"] for e in engine.executions.events(execution["id"]) if e["message"].startswith("Ignoring")]


def test_uninstall_without_ignore_failure_stops_at_a_failed_delete(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_delete=True)
    failed = engine.executions.start("uninstall", dep)
    assert failed["status"] == "failed" and "cloudify.interfaces.lifecycle.delete on app" in failed["error"]
    assert _lines(trace) == ["app delete"]
    assert states(engine, dep) == {"host": "started", "app": "deleting"}


def test_uninstall_with_ignore_failure_reports_the_failure_and_goes_on(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_delete=True)
    done = engine.executions.start("uninstall", dep, {"ignore_failure": True})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == ["app delete", "host delete"]
    assert states(engine, dep) == {"host": "deleted", "app": "deleted"}
    assert _ignored(engine, done) == ["Ignoring task cloudify.interfaces.lifecycle.delete failure"]
    failures = [e for e in engine.executions.events(done["id"]) if e["event_type"] == "task_failed"]
    assert [e["node_name"] for e in failures] == ["app"]


def test_reinstall_with_ignore_failure_passes_over_the_failed_delete_and_installs_again(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_delete=True)
    assert engine.executions.start("reinstall", dep, {"node_ids": ["app"]})["status"] == "failed"
    trace.write_text("")
    done = engine.executions.start("reinstall", dep, {"node_ids": ["app"], "ignore_failure": True})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == ["app delete", "app create", "app start"]
    assert states(engine, dep) == {"host": "started", "app": "started"}
    assert len(_ignored(engine, done)) == 1


def test_heal_passes_over_a_failed_delete_unless_ignore_failure_is_false(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_delete=True)
    app = _instance(engine, dep, "app")
    forced = {"node_instance_id": app, "force_reinstall": True}
    refused = engine.executions.start("heal", dep, {**forced, "ignore_failure": False})
    assert refused["status"] == "failed"
    trace.write_text("")
    healed = engine.executions.start("heal", dep, forced)
    assert healed["status"] == "terminated", healed["error"]
    # the failing instance's host and all it contains, as Cloudify's heal
    assert _lines(trace) == ["app delete", "host delete", "host create", "app create", "app start"]
    assert states(engine, dep) == {"host": "started", "app": "started"}


def test_heal_names_an_unknown_instance_and_refuses_what_it_would_need_to_reinstall(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    with pytest.raises(StokerError, match="Parameter \"node_instance_id\" does not meet its constraints: Value "
                                          "'nope_123' of 'node_instance_id' is not a valid value for data type "
                                          "'node_instance'."):
        engine.executions.start("heal", dep, {"node_instance_id": "nope_123"})
    app = _instance(engine, dep, "app")
    engine.blueprints.deployments.update_node_instance(app, runtime_properties={"broken": True})
    refused = engine.executions.start("heal", dep, {"node_instance_id": app, "allow_reinstall": False})
    assert refused["status"] == "failed"
    assert refused["error"] == f"allow_reinstall is false, but would need to reinstall instances: {app}"
    assert sorted(_lines(trace)) == ["app check_status", "host check_status"]  # checked, nothing reinstalled


def test_heal_of_the_whole_deployment_checks_it_and_with_force_reinstall_reinstalls_it(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    assert engine.executions.start("heal", dep)["status"] == "terminated"
    assert sorted(_lines(trace)) == ["app check_status", "host check_status"]  # both healthy: nothing more
    trace.write_text("")
    healed = engine.executions.start("heal", dep, {"force_reinstall": True})
    assert healed["status"] == "terminated", healed["error"]
    assert _lines(trace) == ["app delete", "host delete", "host create", "app create", "app start"]


def test_rollback_passes_over_its_failed_operations(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_create=True, fail_delete=True)
    assert states(engine, dep) == {"host": "started", "app": "creating"}
    done = engine.executions.start("rollback", dep)
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == ["app delete"]
    assert states(engine, dep) == {"host": "started", "app": "uninitialized"}
    assert len(_ignored(engine, done)) == 1


def test_rollback_stops_an_instance_left_starting_back_to_configured(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_start=True)
    assert states(engine, dep) == {"host": "started", "app": "starting"}
    done = engine.executions.start("rollback", dep, {"node_ids": ["app"]})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == []  # app has no stop operation: only its state goes back
    assert states(engine, dep) == {"host": "started", "app": "configured"}
    events = [e["message"] for e in engine.executions.events(done["id"]) if e["event_type"] == "workflow_node_event"]
    assert events == [f"Node instance {_instance(engine, dep, 'app')} is {state}" for state in ("stopping", "configured")]


def test_full_rollback_uninstalls_every_instance_whatever_the_filters(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace, fail_create=True)
    done = engine.executions.start("rollback", dep, {"full_rollback": True, "node_ids": ["app"]})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == ["app delete", "host delete"]
    assert states(engine, dep) == {"host": "deleted", "app": "deleted"}


def test_execute_operation_kwargs_redefine_inputs_only_with_allow_kwargs_override(engine, tmp_path, trace):
    dep = _installed(engine, tmp_path, trace)
    params = {"operation": "custom.touch", "operation_kwargs": {"word": "given"}}
    refused = engine.executions.start("execute_operation", dep, params)
    assert refused["status"] == "failed"
    assert ('Duplicate definition of word in operation properties and in kwargs. To allow redefinition, pass '
            '"allow_kwargs_override" to "execute_operation"') in refused["error"]
    assert _lines(trace) == []
    done = engine.executions.start("execute_operation", dep, {**params, "allow_kwargs_override": True})
    assert done["status"] == "terminated", done["error"]
    assert _lines(trace) == ["host touch given"]


@pytest.mark.parametrize(("workflow", "parameter", "value", "data_type"), [
    ("uninstall", "node_ids", "nope", "node_id"), ("reinstall", "node_instance_ids", "nope_1", "node_instance"),
    ("check_status", "type_names", "cloudify.nodes.Nope", "node_type")])
def test_an_unknown_node_instance_or_type_is_refused_in_cloudify_s_words(engine, tmp_path, trace, workflow,
                                                                        parameter, value, data_type):
    dep = _installed(engine, tmp_path, trace)
    with pytest.raises(StokerError) as refused:
        engine.executions.start(workflow, dep, {parameter: [value]})
    assert str(refused.value) == (f'Parameter "{parameter}" does not meet its constraints: Value \'{value}\' of '
                                  f"'{parameter}' is not a valid value for data type '{data_type}'.")
    assert engine.executions.start(workflow, dep, {parameter: []})["status"] == "terminated"
    assert [e["workflow_id"] for e in engine.executions.list(dep)] == ["install", workflow]
