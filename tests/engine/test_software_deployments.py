"""Software deployments through the real engine (no API server), on SQLite and PostgreSQL:
the deployment row waits IN_PROGRESS until ``stoker stack resource signal`` (another
process) or another engine reports, and its outputs become the resource's attributes."""

from __future__ import annotations

import json
import subprocess
import sys

from stoker.store.software import SoftwareStore, outcome

from .helpers import hot, outputs_by_key, physical_ids, statuses, wait_until
from .test_wait_conditions import Background


def deployment_stack(actions: list[str] | None = None) -> dict:
    deployment = {"config": {"get_resource": "config"}, "server": "node-1",
                  "input_values": {"name": "world"}}
    if actions is not None:
        deployment["actions"] = actions
    return hot(
        {
            "config": {"type": "OS::Heat::SoftwareConfig",
                       "properties": {"config": "echo hello $name", "inputs": [{"name": "name"}],
                                      "outputs": [{"name": "greeting"},
                                                  {"name": "broken", "error_output": True}]}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": deployment},
        },
        outputs={"greeting": {"value": {"get_attr": ["deployment", "greeting"]}},
                 "stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}}},
    )


def deployment_row(engine, name: str) -> dict:
    deployment_id = physical_ids(engine, name)["deployment"]
    return SoftwareStore(engine.store.engine).get_deployment(engine.project_id, deployment_id)


def deploying(engine, name: str) -> None:
    wait_until(lambda: statuses(engine, name).get("deployment") == "CREATE_IN_PROGRESS"
               and physical_ids(engine, name).get("deployment"), what="the deployment to wait")


def delete_answering_the_server(engine, other, name: str) -> SoftwareStore:
    """Delete stack ``name`` with ``engine`` while ``other`` reports the deployment's DELETE done."""
    deployment_id = physical_ids(other, name)["deployment"]
    software = SoftwareStore(other.store.engine)
    deleting = Background(engine, name, action="delete_stack")
    wait_until(lambda: software.get_deployment(other.project_id, deployment_id)["action"] == "DELETE",
               what="the deployment to run its DELETE")
    other.signal(name, "deployment", {"deploy_status_code": 0})
    deleting.result(timeout=120)
    return software


def test_the_signal_command_completes_the_deployment(make_engine, db_url):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "sd", deployment_stack())
    deploying(other, "sd")
    row = deployment_row(other, "sd")
    assert (row["status"], row["action"], row["input_values"]) == ("IN_PROGRESS", "CREATE", {"name": "world"})
    derived = SoftwareStore(other.store.engine).get_config(other.project_id, row["config_id"])
    assert {i["name"]: i["value"] for i in derived["inputs"]}["name"] == "world"
    assert derived["config"] == "echo hello $name"

    report = {"deploy_stdout": "hello world", "deploy_status_code": 0, "greeting": "hi"}
    done = subprocess.run([sys.executable, "-m", "stoker", "--db-url", db_url, "stack", "resource", "signal",
                           "sd", "deployment", "--data", json.dumps(report)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = create.result(timeout=120)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    outputs = outputs_by_key(result["outputs"])
    assert outputs["greeting"]["output_value"] == "hi"
    assert outputs["stdout"]["output_value"] == "hello world"
    assert deployment_row(other, "sd")["status"] == "COMPLETE"


def test_an_error_output_fails_the_deployment(make_engine):
    creator, other = make_engine(), make_engine()
    create = Background(creator, "sd", deployment_stack())
    deploying(other, "sd")
    other.signal("sd", "deployment", {"deploy_status_code": 0, "broken": "disk full"})
    result = create.result(timeout=120)
    assert result["stack_status"] == "CREATE_FAILED"
    assert "Deployment to server failed: broken : disk full" in result["stack_status_reason"]
    assert deployment_row(other, "sd")["status"] == "FAILED"


def test_a_signal_when_nothing_waits_changes_nothing(make_engine):
    engine = make_engine()
    result = engine.create_stack("sd", deployment_stack(actions=["UPDATE"]))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    before = deployment_row(engine, "sd")
    # as Heat: CREATE not listed, the deployment is stored complete, nothing waits for the server
    assert (before["status"], before["status_reason"]) == ("COMPLETE", "Not waiting for outputs signal")
    engine.signal("sd", "deployment", {"deploy_status_code": 1})
    assert deployment_row(engine, "sd") == before


def test_outcome_as_heat_decides_it():
    outputs = [{"name": "result"}, {"name": "problem", "error_output": True}]
    assert outcome({}, outputs) == ("COMPLETE", "Outputs received")
    assert outcome({"deploy_status_code": "0", "result": "x"}, outputs) == ("COMPLETE", "Outputs received")
    assert outcome({"deploy_status_code": 2}, outputs) == (
        "FAILED", "deploy_status_code : Deployment exited with non-zero status code: 2")
    assert outcome({"deploy_status_code": 2, "problem": "bad"}, outputs) == (
        "FAILED", "deploy_status_code : Deployment exited with non-zero status code: 2, problem : bad")
    assert outcome({"problem": None}, outputs) == ("COMPLETE", "Outputs received")


def test_suspend_resume_and_delete_wait_for_the_server_when_listed(make_engine):
    engine, other = make_engine(), make_engine()
    result = engine.create_stack("sd", deployment_stack(actions=["SUSPEND", "RESUME", "DELETE"]))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    for action, method in (("SUSPEND", "suspend_stack"), ("RESUME", "resume_stack")):
        running = Background(engine, "sd", action=method)
        wait_until(lambda: (deployment_row(other, "sd")["action"], deployment_row(other, "sd")["status"])
                   == (action, "IN_PROGRESS"), what=f"the deployment to wait in {action}")
        assert statuses(other, "sd")["deployment"] == f"{action}_IN_PROGRESS"
        other.signal("sd", "deployment", {"deploy_status_code": 0})
        running.result(timeout=120)
        assert statuses(other, "sd")["deployment"] == f"{action}_COMPLETE"

    software = delete_answering_the_server(engine, other, "sd")
    assert software.list_deployments(other.project_id, "node-1") == []
    assert software.list_configs(other.project_id) == []  # the config and every derived one


def test_a_new_value_of_a_replace_on_change_input_replaces_the_deployment(make_engine):
    engine = make_engine()
    template = deployment_stack(actions=[])
    config = template["resources"]["config"]["properties"]
    config["inputs"].append({"name": "release", "replace_on_change": True})
    engine.create_stack("sd", template)
    first = physical_ids(engine, "sd")["deployment"]

    template["resources"]["deployment"]["properties"]["input_values"]["name"] = "again"
    assert engine.update_stack("sd", template)["stack_status"] == "UPDATE_COMPLETE"
    assert physical_ids(engine, "sd")["deployment"] == first  # an ordinary input: in place
    assert deployment_row(engine, "sd")["input_values"] == {"name": "again"}

    template["resources"]["deployment"]["properties"]["input_values"]["release"] = "2"
    assert engine.update_stack("sd", template)["stack_status"] == "UPDATE_COMPLETE"
    assert physical_ids(engine, "sd")["deployment"] != first
    assert deployment_row(engine, "sd")["input_values"] == {"name": "again", "release": "2"}
    # the replaced deployment is gone
    assert len(SoftwareStore(engine.store.engine).list_deployments(engine.project_id, "node-1")) == 1


def test_a_signal_whose_delete_removed_the_resource_first_took_effect(make_engine, monkeypatch):
    """The server's report ends the DELETE; the delete may remove the resource before the signal writes it back."""
    from stoker.resources.builtin.software_deployment import SoftwareDeployment

    engine, other = make_engine(), make_engine()
    assert engine.create_stack("sd", deployment_stack(actions=["DELETE"]))["stack_status"] == "CREATE_COMPLETE"
    record = other.get_record("sd")
    reported = SoftwareDeployment.handle_signal

    def reported_then_removed(resource, details=None):
        said = reported(resource, details)
        wait_until(lambda: not other.store.get_resources(record.id), what="the delete to remove the resource")
        return said

    monkeypatch.setattr(SoftwareDeployment, "handle_signal", reported_then_removed)
    delete_answering_the_server(engine, other, "sd")
    assert SoftwareStore(other.store.engine).list_deployments(other.project_id, "node-1") == []
