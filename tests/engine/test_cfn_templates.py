"""CloudFormation-format templates (AWSTemplateFormatVersion / HeatTemplateFormatVersion), as Heat runs them."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed

from .helpers import outputs_by_key, resources_by_name, template


def _outputs(engine, name):
    return {key: o.get("output_value") for key, o in outputs_by_key(engine.outputs(name)).items()}


@pytest.mark.parametrize("env, resources, outputs", [
    ("test", {"test_res"}, {"res_value": None, "test_res_value": "env_is_test", "cpu": "1",
                            "prod_resource": "no_prod_res", "joined": "cond-test,beijing"}),
    ("prod", {"test_res", "prod_res"}, {"res_value": "prod_res", "test_res_value": "env_is_prod",
                                         "cpu": "8", "joined": "cond-prod,beijing"}),
])
def test_conditions_mappings_and_references(engine, env, resources, outputs):
    name = f"cond-{env}"
    info = engine.create_stack(name, template("cfn_conditions.yaml"), parameters={"env_type": env})
    assert info["stack_status"] == "CREATE_COMPLETE", info
    assert set(resources_by_name(engine, name)) == resources
    found = _outputs(engine, name)
    if env == "prod":  # Ref of a resource is its physical id
        assert found.pop("prod_resource") == resources_by_name(engine, name)["prod_res"]["physical_resource_id"]
    assert found == outputs


def test_heat_format_functions_and_parameter_schema(engine):
    info = engine.create_stack("heatfmt", template("cfn_heat_format.yaml"))
    assert info["stack_status"] == "CREATE_COMPLETE", info
    assert _outputs(engine, "heatfmt") == {
        "first": "box-b", "second": "hello box", "split": ["x", "y"], "encoded": "plain",
        "members": {"k": "v"}, "zones": ["nova"], "stack": "heatfmt"}
    events = [(e["resource_name"], e["resource_status"]) for e in engine.events("heatfmt")]
    assert events.index(("first", "CREATE_COMPLETE")) < events.index(("second", "CREATE_IN_PROGRESS"))


@pytest.mark.parametrize("params, message", [
    ({"name": "x"}, "two to eight characters"),
    ({"count": "4"}, "4 is out of range (min: 1, max: 3)"),
])
def test_cfn_parameter_constraints_are_checked(engine, params, message):
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", template("cfn_heat_format.yaml"), parameters=params)
    assert message in str(caught.value)


def test_hot_only_keys_and_condition_functions_are_refused(engine):
    data = {"HeatTemplateFormatVersion": "2012-12-12",
            "Conditions": {"c": True},
            "Resources": {"r": {"Type": "OS::Heat::None", "Condition": "c"}}}
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("nocond", data)
    assert "conditions" in str(caught.value)
