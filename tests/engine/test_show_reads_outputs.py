"""A stack's show (and its outputs) reads only the resources its outputs need, following each
chain of dependencies to its end: the values shown are those the whole stack gives."""

from __future__ import annotations

from stoker.engine.reads import _read_by_outputs
from stoker.template.definition import build_definition
from stoker.template.template import Template

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"which": {"type": "string", "default": "picked"}, "base": {"type": "string", "default": "x"}},
    "resources": {
        "a": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "base"}}},
        "b": {"type": "OS::Heat::Value", "properties": {"value": {"list_join": ["-", [{"get_attr": ["a", "value"]}, "b"]]}}},
        "c": {"type": "OS::Heat::Value", "properties": {"value": {"list_join": ["-", [{"get_attr": ["b", "value"]}, "c"]]}},
              "depends_on": ["gate"]},
        "gate": {"type": "OS::Heat::None"},
        "picked": {"type": "OS::Heat::Value", "properties": {"value": "by name"}},
        **{f"n{i}": {"type": "OS::Heat::None", "properties": {"after": {"get_resource": "a"}}} for i in range(20)},
    },
    "outputs": {
        "chain": {"value": {"get_attr": ["c", "value"]}},
        "ref": {"value": {"get_resource": "n3"}},
        "dynamic": {"value": {"get_attr": [{"get_param": "which"}, "value"]}},
        "plain": {"value": "no resource"},
    },
}


def test_the_resources_read_are_those_the_outputs_reach():
    definition = build_definition(Template(TEMPLATE))
    assert _read_by_outputs(definition) == {"c", "b", "a", "gate", "n3", "picked"}


def test_show_gives_the_values_of_the_whole_stack(engine):
    engine.create_stack("shown", TEMPLATE)
    first = {o["output_key"]: o["output_value"] for o in engine.show_stack("shown")["outputs"]}
    assert first == {"chain": "x-b-c", "ref": engine.resource("shown", "n3")["physical_resource_id"],
                     "dynamic": "by name", "plain": "no resource"}

    engine.update_stack("shown", TEMPLATE, parameters={"base": "y"})

    assert {o["output_key"]: o["output_value"] for o in engine.outputs("shown")}["chain"] == "y-b-c"
    assert engine.show_stack("shown")["parameters"]["base"] == "y"
