"""``OS::Heat::SoftwareComponent`` deployed by ``OS::Heat::SoftwareDeployment``, as in Heat:
the component's configs (one per action) say which of the deployment's actions the server
runs, the derived config carries them all with ``deploy_action``, a signal completes it."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed
from stoker.store.software import SoftwareStore

from .helpers import hot, outputs_by_key, physical_ids, statuses, wait_until
from .test_software_deployments import delete_answering_the_server, deployment_row
from .test_wait_conditions import Background

CONFIGS = [
    {"actions": ["CREATE"], "config": "install $name", "tool": "script"},
    {"actions": ["UPDATE"], "config": "upgrade $name", "tool": "script"},
    {"actions": ["DELETE"], "config": "uninstall", "tool": "ansible"},
]


def component_stack(name: str = "world", configs: list | None = None, deployment_actions: list | None = None,
                    outputs: dict | None = None) -> dict:
    deployment = {"config": {"get_resource": "component"}, "server": "node-1",
                  "input_values": {"name": name}}
    if deployment_actions is not None:
        deployment["actions"] = deployment_actions
    return hot(
        {
            "component": {"type": "OS::Heat::SoftwareComponent",
                          "properties": {"configs": configs or CONFIGS, "inputs": [{"name": "name"}],
                                         "outputs": [{"name": "result"}], "options": {"retries": 2}}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": deployment},
        },
        outputs=outputs or {"result": {"value": {"get_attr": ["deployment", "result"]}},
                            "stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
                            "shown": {"value": {"get_attr": ["component", "show"]}}},
    )


def derived(engine, name: str) -> dict:
    row = deployment_row(engine, name)
    config = SoftwareStore(engine.store.engine).get_config(engine.project_id, row["config_id"])
    return {**config, "values": {i["name"]: i.get("value") for i in config["inputs"]}}


def _waits_in(engine, name: str, action: str) -> None:
    wait_until(lambda: statuses(engine, name).get("deployment") == f"{action}_IN_PROGRESS"
               and physical_ids(engine, name).get("deployment")
               and deployment_row(engine, name)["action"] == action, what=f"the deployment to wait in {action}")


def test_a_component_is_deployed_for_its_actions_and_a_signal_completes_it(make_engine):
    engine, other = make_engine(), make_engine()
    create = Background(engine, "sc", component_stack())
    _waits_in(other, "sc", "CREATE")
    config = derived(other, "sc")
    assert config["group"] == "component"
    assert config["config"] == {"configs": CONFIGS}  # the hook picks the config of deploy_action
    assert config["values"]["deploy_action"] == "CREATE" and config["values"]["name"] == "world"
    assert config["options"] == {"retries": 2}

    other.signal("sc", "deployment", {"deploy_stdout": "installed", "deploy_status_code": 0, "result": "v1"})
    result = create.result(timeout=120)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    outputs = outputs_by_key(result["outputs"])
    assert outputs["result"]["output_value"] == "v1"
    assert outputs["stdout"]["output_value"] == "installed"
    shown = outputs["shown"]["output_value"]
    assert shown["group"] == "component" and shown["config"] == {"configs": CONFIGS}
    assert shown["id"] == physical_ids(other, "sc")["component"]

    # an update runs the UPDATE config: same deployment, deploy_action UPDATE
    updating = Background(engine, "sc", component_stack(name="mars"), action="update_stack")
    _waits_in(other, "sc", "UPDATE")
    config = derived(other, "sc")
    assert config["values"]["deploy_action"] == "UPDATE" and config["values"]["name"] == "mars"
    [chosen] = [c for c in config["config"]["configs"] if config["values"]["deploy_action"] in c["actions"]]
    assert chosen["config"] == "upgrade $name"
    other.signal("sc", "deployment", {"deploy_status_code": 0, "result": "v2"})
    result = updating.result(timeout=120)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs_by_key(result["outputs"])["result"]["output_value"] == "v2"

    # DELETE is one of the component's actions: the server runs it too
    software = delete_answering_the_server(engine, other, "sc")
    assert software.list_configs(other.project_id) == []


def test_the_components_actions_decide_not_the_deployments(make_engine):
    """Heat ignores a component deployment's ``actions``: an action no config lists is not run."""
    engine = make_engine()
    only_update = [{"actions": ["UPDATE"], "config": "upgrade", "tool": "script"}]
    result = engine.create_stack("sc", component_stack(configs=only_update, deployment_actions=["CREATE"]))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    row = deployment_row(engine, "sc")
    assert (row["status"], row["status_reason"]) == ("COMPLETE", "Not waiting for outputs signal")


def test_a_failed_report_fails_the_component_deployment(make_engine):
    engine, other = make_engine(), make_engine()
    create = Background(engine, "sc", component_stack())
    _waits_in(other, "sc", "CREATE")
    other.signal("sc", "deployment", {"deploy_status_code": 3, "deploy_stderr": "no disk"})
    result = create.result(timeout=120)
    assert result["stack_status"] == "CREATE_FAILED"
    assert "Deployment to server failed: deploy_status_code : Deployment exited with non-zero status code: 3" \
        in result["stack_status_reason"]


def _problems(engine, template: dict) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", template)
    return {".".join(map(str, p.path)): p.message for p in caught.value.problems if p.severity == "error"}


def test_two_configs_for_one_action_are_refused(make_engine):
    engine = make_engine()
    twice = [{"actions": ["CREATE", "UPDATE"], "config": "a", "tool": "script"},
             {"actions": ["UPDATE"], "config": "b", "tool": "script"}]
    problems = _problems(engine, component_stack(configs=twice))
    assert list(problems) == ["resources.component"]
    assert problems["resources.component"].endswith(
        'Defining more than one configuration for the same action in SoftwareComponent "component" '
        "is not allowed.")
    defaulted = [{"config": "a", "tool": "script"}, {"actions": ["CREATE"], "config": "b", "tool": "script"}]
    assert list(_problems(engine, component_stack(configs=defaulted))) == ["resources.component"]
    assert engine.list_stacks(show_deleted=True) == []


@pytest.mark.parametrize("configs, place, message", [
    ([], "configs", "length (0) is out of range (min: 1, max: None)"),
    ([{"actions": ["CREATE"], "config": "a"}], "configs.0", "Property tool not assigned"),
    ([{"actions": [], "config": "a", "tool": "script"}], "configs.0.actions",
     "length (0) is out of range (min: 1, max: None)"),
])
def test_component_properties_are_checked_with_their_place(make_engine, configs, place, message):
    engine = make_engine()
    component = component_stack()
    component["resources"]["component"]["properties"]["configs"] = configs
    assert _problems(engine, component) == {f"resources.component.properties.{place}": message}


def test_configs_is_not_an_attribute_a_template_may_read_as_in_heat(make_engine):
    engine = make_engine()
    problems = _problems(engine, component_stack(outputs={"c": {"value": {"get_attr": ["component", "configs"]}}}))
    assert any("configs" in message for message in problems.values()), problems
