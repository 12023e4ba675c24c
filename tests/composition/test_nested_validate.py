"""A create or update request checks its nested stacks first, as Heat: a bad value inside a
provider template, a group's member or an inline ``OS::Heat::Stack`` is refused before anything
starts, placed in Heat's words; ``template validate`` still leaves it to create (a warning)."""

from __future__ import annotations

import json

import pytest
import yaml

from stoker.errors import ValidationFailed
from stoker.template.template import Template

from .conftest import hot

BAD_PROVIDER = {
    "heat_template_version": "2013-05-23",
    "parameters": {"length": {"type": "string", "default": 50}, "salt": {"type": "string", "default": "initial"}},
    "resources": {"random": {"type": "OS::Heat::RandomString", "properties": {"length": "BAD"}}},
}
GROUP = hot({"random_group": {"type": "OS::Heat::ResourceGroup", "properties": {
    "count": {"get_param": "count"},
    "resource_def": {"type": "My::RandomString", "properties": {"length": 30, "salt": "initial"}}}}},
    parameters={"count": {"type": "number", "default": 0}})
ENV = {"resource_registry": {"My::RandomString": "provider.yaml"}}
HEATS_WORDS = ".resources.random: : Value 'BAD' is not an integer"


@pytest.fixture
def group_tree(tree):
    return tree({"top.yaml": GROUP, "env.yaml": ENV, "provider.yaml": BAD_PROVIDER})


def test_empty_group_is_created_and_growing_it_is_refused_with_heats_place(cli, group_tree):
    top, env = group_tree / "top.yaml", group_tree / "env.yaml"
    created = cli("stack", "create", "g", "-t", top, "-e", env, "--wait", "-f", "json")
    assert created.code == 0, created.output
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE"
    nested = json.loads(cli("stack", "resource", "list", "g", "--nested-depth", "1", "-f", "json").stdout)
    assert [r["resource_name"] for r in nested] == ["random_group"]  # its nested stack is empty

    refused = cli("stack", "update", "g", "-t", top, "-e", env, "-P", "count=2", "--wait")
    assert refused.code == 1
    label = f"file://{group_tree / 'provider.yaml'}"  # the CLI names the template by its URL, as heatclient
    assert f"resources.random_group<nested_stack>.resources.0<{label}>{HEATS_WORDS}" in refused.output
    assert "Traceback" not in refused.output
    shown = json.loads(cli("stack", "show", "g", "-f", "json").stdout)
    assert (shown["stack_status"], shown["parameters"]["count"]) == ("CREATE_COMPLETE", "0")

    again = cli("stack", "create", "h", "-t", top, "-e", env, "-P", "count=2")
    assert again.code == 1
    assert f"resources.random_group<nested_stack>.resources.0<{label}>{HEATS_WORDS}" in again.output
    assert "h" not in [s["stack_name"] for s in json.loads(cli("stack", "list", "-f", "json").stdout)]


def test_template_validate_leaves_the_nested_value_to_create(cli, group_tree):
    checked = cli("template", "validate", "-t", group_tree / "top.yaml", "-e", group_tree / "env.yaml",
                  "-P", "count=2")
    assert checked.code == 0, checked.output


def test_provider_resource_with_a_bad_literal_is_refused_at_create(engine):
    files = {"provider.yaml": yaml.safe_dump(BAD_PROVIDER)}
    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("d", _with_files(hot({"one": {"type": "provider.yaml"}}), files))
    assert [".".join(p.path) + ": " + p.message for p in refused.value.problems] == [
        "resources.one<provider.yaml>.resources.random: : Value 'BAD' is not an integer"]
    assert engine.list_stacks() == []


def _with_files(data: dict, files: dict) -> Template:
    return Template(data, files)


PASSED_ON = {
    "heat_template_version": "2013-05-23",
    "parameters": {"length": {"type": "number"}},
    "resources": {"random": {"type": "OS::Heat::RandomString", "properties": {"length": {"get_param": "length"}}}},
    "outputs": {"value": {"value": {"get_attr": ["random", "value"]}}},
}


def _parent(length) -> dict:
    return hot({"one": {"type": "provider.yaml", "properties": {"length": {"get_param": "len"}}}},
               parameters={"len": {"type": "string", "default": length}},
               outputs={"value": {"value": {"get_attr": ["one", "value"]}}})


def test_a_value_the_parent_passes_validates_inside(engine):
    files = {"provider.yaml": yaml.safe_dump(PASSED_ON)}
    result = engine.create_stack("ok", _with_files(_parent("8"), files))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert len(result["outputs"][0]["output_value"]) == 8
    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("bad", _with_files(_parent("-3"), files))
    assert [".".join(p.path) for p in refused.value.problems] == ["resources.one<provider.yaml>.resources.random"]
    assert [s["stack_name"] for s in engine.list_stacks()] == ["ok"]


def test_a_value_known_only_later_is_left_to_create(engine):
    files = {"provider.yaml": yaml.safe_dump(PASSED_ON)}
    data = hot({"n": {"type": "OS::Heat::Value", "properties": {"value": 6}},
                "one": {"type": "provider.yaml", "properties": {"length": {"get_attr": ["n", "value"]}}}},
               outputs={"value": {"value": {"get_attr": ["one", "value"]}}})
    result = engine.create_stack("later", _with_files(data, files))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert len(result["outputs"][0]["output_value"]) == 6


def test_inline_stack_with_a_bad_value_is_refused(engine):
    inner = yaml.safe_dump(BAD_PROVIDER)
    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("st", hot({"st": {"type": "OS::Heat::Stack", "properties": {"template": inner}}}))
    assert [(".".join(p.path), p.message) for p in refused.value.problems] == [
        ("resources.st<nested_stack>.resources.random", ": Value 'BAD' is not an integer")]


def test_autoscaling_member_template_with_a_bad_value_is_refused(engine):
    files = {"provider.yaml": yaml.safe_dump(BAD_PROVIDER)}
    data = hot({"asg": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 2, "resource": {"type": "provider.yaml"}}}})
    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("asg", _with_files(data, files))
    assert [(".".join(p.path), p.message) for p in refused.value.problems] == [
        ("resources.asg.properties.resource.member<provider.yaml>.resources.random",
         ": Value 'BAD' is not an integer")]
    assert engine.check_template(_with_files(data, files), at_validate=True)[1].errors == []
