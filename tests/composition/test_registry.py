"""``resource_registry``: type to type, to ``OS::Heat::None``, to a template, wildcards, per resource."""

from __future__ import annotations

import json

import pytest

from stoker.errors import ValidationFailed
from stoker.template.template import Template
from stoker.template.environment import Environment

from .conftest import hot, load, outputs

MEMBER = hot(
    parameters={"value": {"type": "string", "default": "from-template"}},
    resources={"inner": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "value"}}}},
    outputs={"value": {"value": {"str_replace": {"template": "T:$v", "params": {"$v": {"get_attr": ["inner", "value"]}}}}}},
)


def _types(engine, name="s"):
    return {r["resource_name"]: r["resource_type"] for r in engine.resources(name)}


def test_type_to_type(tree, engine):
    root = tree({
        "t.yaml": hot({"x": {"type": "My::Thing", "properties": {"value": "hello"}}},
                      outputs={"v": {"value": {"get_attr": ["x", "value"]}}}),
        "env.yaml": {"resource_registry": {"My::Thing": "OS::Heat::Value"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["v"] == "hello"


def test_unmapped_unknown_type_is_a_validation_error(tree, engine):
    root = tree({"t.yaml": hot({"x": {"type": "My::Thing"}})})
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    assert any("x" in ".".join(map(str, p.path)) for p in info.value.problems)


def test_os_heat_none_disables_a_type(tree, engine):
    root = tree({
        "t.yaml": hot({"f": {"type": "Stoker::Local::File",
                             "properties": {"path": "/nonexistent/dir/never-written", "content": "x"}},
                       "v": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "f"}}}}),
        "env.yaml": {"resource_registry": {"Stoker::Local::File": "OS::Heat::None"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    statuses = {r["resource_name"]: r["resource_status"] for r in engine.resources("s")}
    assert statuses == {"f": "CREATE_COMPLETE", "v": "CREATE_COMPLETE"}


def test_type_to_template_relative_to_environment_file(tree, engine):
    root = tree({
        "t.yaml": hot({"x": {"type": "My::Thing", "properties": {"value": "given"}}},
                      outputs={"v": {"value": {"get_attr": ["x", "value"]}}}),
        "envs/env.yaml": {"resource_registry": {"My::Thing": "../providers/thing.yaml"}},
        "providers/thing.yaml": MEMBER,
    })
    template, env = load(root / "t.yaml", root / "envs" / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["v"] == "T:given"
    nested = engine.resources("s", nested_depth=1)
    assert [r["resource_name"] for r in nested if r.get("parent_resource") == "x"] == ["inner"]


def test_type_to_template_missing_file_is_validation_error(tree, engine):
    root = tree({
        "t.yaml": hot({"x": {"type": "My::Thing"}}),
        "env.yaml": {"resource_registry": {"My::Thing": "nope.yaml"}},
    })
    with pytest.raises(ValidationFailed) as info:  # as heatclient, reading refuses it
        load(root / "t.yaml", root / "env.yaml")
    assert [p.message for p in info.value.problems] == [
        f"Could not fetch contents for {(root / 'nope.yaml').as_uri()}"]
    env = Environment.from_dict({"resource_registry": {"My::Thing": "nope.yaml"}})
    with pytest.raises(ValidationFailed) as info:  # the engine, given no file, says so too
        engine.create_stack("s", hot({"x": {"type": "My::Thing"}}), env)
    assert "nope.yaml" in " ".join(p.message for p in info.value.problems)


def test_wildcard_mapping(tree, engine):
    root = tree({
        "t.yaml": hot({"a": {"type": "My::Value", "properties": {"value": "A"}},
                       "b": {"type": "My::None"}},
                      outputs={"a": {"value": {"get_attr": ["a", "value"]}}}),
        "env.yaml": {"resource_registry": {"My::*": "OS::Heat::*"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["a"] == "A"


def test_longest_wildcard_wins(tree, engine):
    root = tree({
        "t.yaml": hot({"a": {"type": "My::Deep::Value", "properties": {"value": "A"}}},
                      outputs={"a": {"value": {"get_attr": ["a", "value"]}}}),
        "env.yaml": {"resource_registry": {"My::*": "Nope::*", "My::Deep::*": "OS::Heat::*"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["a"] == "A"


def test_per_resource_override_only_affects_that_resource(tree, engine):
    root = tree({
        "t.yaml": hot({"one": {"type": "My::Thing", "properties": {"value": "1"}},
                       "two": {"type": "My::Thing", "properties": {"value": "2"}}},
                      outputs={"one": {"value": {"get_attr": ["one", "value"]}},
                               "two": {"value": {"get_attr": ["two", "value"]}}}),
        "env.yaml": {"resource_registry": {
            "My::Thing": "OS::Heat::Value",
            "resources": {"two": {"My::Thing": "member.yaml"}}}},
        "member.yaml": MEMBER,
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result) == {"one": "1", "two": "T:2"}
    nested = [r for r in engine.resources("s", nested_depth=1) if r.get("parent_resource")]
    assert {r["parent_resource"] for r in nested} == {"two"}


def test_mapping_loop_is_a_clear_validation_error(tree, engine):
    root = tree({
        "t.yaml": hot({"x": {"type": "My::A"}}),
        "env.yaml": {"resource_registry": {"My::A": "My::B", "My::B": "My::A"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    problem = next(p for p in info.value.problems if p.code == "registry-loop")
    assert tuple(problem.path[:2]) == ("resources", "x")
    assert "My::A" in problem.message and "My::B" in problem.message
    assert engine.list_stacks() == []


def test_later_environment_registry_overrides_earlier(tree, engine):
    root = tree({
        "t.yaml": hot({"x": {"type": "My::Thing", "properties": {"value": "v"}}},
                      outputs={"v": {"value": {"get_attr": ["x", "value"]}}}),
        "one.yaml": {"resource_registry": {"My::Thing": "OS::Heat::None"}},
        "two.yaml": {"resource_registry": {"My::Thing": "OS::Heat::Value"}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    assert outputs(engine.create_stack("s", template, env))["v"] == "v"


def test_registry_reaches_nested_stacks(tree, engine):
    root = tree({
        "t.yaml": hot({"p": {"type": "parent.yaml"}}, outputs={"v": {"value": {"get_attr": ["p", "v"]}}}),
        "parent.yaml": hot({"x": {"type": "My::Thing", "properties": {"value": "deep"}}},
                           outputs={"v": {"value": {"get_attr": ["x", "value"]}}}),
        "env.yaml": {"resource_registry": {"My::Thing": "OS::Heat::Value"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["v"] == "deep"


def _alias_stack(engine, rtype, registry):
    from stoker.template.environment import Environment

    template = hot({"test1": {"type": rtype}})
    return template, Environment.from_dict({"resource_registry": registry})


def test_another_alias_of_the_same_type_updates_in_place(engine):
    registry = {"My::A": "OS::Heat::RandomString", "My::B": "OS::Heat::RandomString"}
    engine.create_stack("s", *_alias_stack(engine, "My::A", registry))
    before = engine.resource("s", "test1")
    result = engine.update_stack("s", *_alias_stack(engine, "My::B", registry))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = engine.resource("s", "test1")
    assert after["physical_resource_id"] == before["physical_resource_id"]
    assert after["attributes"]["value"] == before["attributes"]["value"]
    assert (before["resource_type"], after["resource_type"]) == ("My::A", "My::B")


def test_another_alias_of_the_same_provider_template_updates_its_nested_stack_in_place(engine):
    from stoker.template.environment import Environment

    provider = hot({"inner": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}})
    registry = {"My::A": "provider.yaml", "My::B": "provider.yaml"}

    def version(rtype):
        return Template(hot({"test1": {"type": rtype}}), {"provider.yaml": json.dumps(provider)})

    env = Environment.from_dict({"resource_registry": registry})
    engine.create_stack("s", version("My::A"), env)
    before = engine.resource("s", "test1")
    result = engine.update_stack("s", version("My::B"), env)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = engine.resource("s", "test1")
    assert after["resource_type"] == "My::B"
    assert after["physical_resource_id"] == before["physical_resource_id"]


def test_an_alias_mapped_to_another_type_replaces(engine):
    engine.create_stack("s", *_alias_stack(engine, "My::A", {"My::A": "OS::Heat::RandomString"}))
    before = engine.resource("s", "test1")
    result = engine.update_stack("s", *_alias_stack(engine, "My::A", {"My::A": "OS::Heat::TestResource"}))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert engine.resource("s", "test1")["physical_resource_id"] != before["physical_resource_id"]
