"""Several ``-e`` files merge in order; ``stack environment show`` prints the merged one."""

from __future__ import annotations

import json

import pytest
import yaml

from stoker.errors import ValidationFailed
from stoker.template.environment import Environment

from .conftest import hot, load, outputs

TEMPLATE = hot(
    parameters={
        "a": {"type": "string", "default": "template-a"},
        "b": {"type": "string", "default": "template-b"},
        "c": {"type": "string", "default": "template-c"},
        "secret": {"type": "string", "hidden": True, "default": "x"},
        "tags": {"type": "comma_delimited_list", "default": []},
        "conf": {"type": "json", "default": {}},
    },
    resources={"v": {"type": "OS::Heat::Value", "properties": {"value": "x"}}},
    outputs={k: {"value": {"get_param": k}} for k in ("a", "b", "c", "secret", "tags", "conf")},
)


def test_two_environments_merge_in_order_later_wins(tree, engine):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameters": {"a": "one-a", "b": "one-b"}, "parameter_defaults": {"c": "one-c"}},
        "two.yaml": {"parameters": {"b": "two-b"}, "parameter_defaults": {"c": "two-c"}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    got = outputs(result)
    assert (got["a"], got["b"], got["c"]) == ("one-a", "two-b", "two-c")


def test_parameters_beat_parameter_defaults_whatever_the_order(tree, engine):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameters": {"a": "param-a"}},
        "two.yaml": {"parameter_defaults": {"a": "default-a"}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    assert outputs(engine.create_stack("s", template, env))["a"] == "param-a"


def test_user_parameters_beat_environment(tree, engine):
    root = tree({"t.yaml": TEMPLATE, "one.yaml": {"parameters": {"a": "env-a"}}})
    template, env = load(root / "t.yaml", root / "one.yaml")
    assert outputs(engine.create_stack("s", template, env, {"a": "user-a"}))["a"] == "user-a"


def test_parameter_merge_strategies_merge_and_deep_merge(tree, engine):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameter_defaults": {"tags": ["x"], "conf": {"k": {"p": 1, "q": 2}, "top": 1}}},
        "two.yaml": {"parameter_merge_strategies": {"tags": "merge", "conf": "deep_merge"},
                     "parameter_defaults": {"tags": ["y"], "conf": {"k": {"q": 3, "r": 4}}}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    got = outputs(engine.create_stack("s", template, env))
    assert got["tags"] == ["x", "y"]
    assert got["conf"] == {"k": {"p": 1, "q": 3, "r": 4}, "top": 1}


def test_without_strategy_later_value_overwrites(tree, engine):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameter_defaults": {"conf": {"k": 1, "j": 2}}},
        "two.yaml": {"parameter_defaults": {"conf": {"k": 3}}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    assert outputs(engine.create_stack("s", template, env))["conf"] == {"k": 3}


def test_merge_strategy_merge_on_maps_is_shallow(tree, engine):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameter_defaults": {"conf": {"k": {"p": 1}, "j": 2}}},
        "two.yaml": {"parameter_merge_strategies": {"conf": "merge"},
                     "parameter_defaults": {"conf": {"k": {"q": 3}}}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml", root / "two.yaml")
    assert outputs(engine.create_stack("s", template, env))["conf"] == {"k": {"q": 3}, "j": 2}


def test_invalid_merge_strategy_is_an_error(tree, engine):
    root = tree({"t.yaml": TEMPLATE, "one.yaml": {"parameter_merge_strategies": {"conf": "smash"}}})
    template, env = load(root / "t.yaml", root / "one.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    assert "invalid-merge-strategy" in [p.code for p in info.value.problems]


def test_environment_show_prints_merged_environment_with_hidden_masked(tree, cli):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"parameters": {"a": "one-a", "secret": "s3cr3t"}},
        "two.yaml": {"parameters": {"b": "two-b"}, "parameter_defaults": {"c": "two-c"}},
    })
    run = cli("stack", "create", "s", "-t", root / "t.yaml", "-e", root / "one.yaml", "-e", root / "two.yaml",
              "--wait")
    assert run.code == 0, run.output
    shown = cli("stack", "environment", "show", "s", "-f", "json")
    assert shown.code == 0, shown.output
    env = json.loads(shown.stdout)
    assert env["parameters"]["a"] == "one-a"
    assert env["parameters"]["b"] == "two-b"
    assert env["parameter_defaults"]["c"] == "two-c"
    assert env["parameters"]["secret"] != "s3cr3t"
    assert "s3cr3t" not in shown.stdout
    as_yaml = cli("stack", "environment", "show", "s")
    assert "s3cr3t" not in as_yaml.stdout
    assert yaml.safe_load(as_yaml.stdout)["parameters"]["b"] == "two-b"


def test_hidden_parameter_default_masked_in_environment_show(tree, cli):
    root = tree({"t.yaml": TEMPLATE, "one.yaml": {"parameter_defaults": {"secret": "pd-s3cr3t"}}})
    run = cli("stack", "create", "s", "-t", root / "t.yaml", "-e", root / "one.yaml", "--wait")
    assert run.code == 0, run.output
    shown = cli("stack", "environment", "show", "s", "-f", "json")
    assert "pd-s3cr3t" not in shown.stdout


def test_event_sinks_warn_and_are_ignored(tree, engine, cli):
    root = tree({
        "t.yaml": TEMPLATE,
        "one.yaml": {"event_sinks": [{"type": "zaqar-queue", "target": "q"}], "parameters": {"a": "A"}},
    })
    template, env = load(root / "t.yaml", root / "one.yaml")
    assert any(w.code == "ignored-section" for w in env.warnings)
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert outputs(result)["a"] == "A"
    run = cli("template", "validate", "-t", root / "t.yaml", "-e", root / "one.yaml")
    assert run.code == 0, run.output
    assert "event_sinks" in run.output


def test_unknown_environment_section_is_an_error(tree, engine):
    root = tree({"t.yaml": TEMPLATE, "one.yaml": {"paramters": {"a": "A"}}})
    template, env = load(root / "t.yaml", root / "one.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    assert "unknown-section" in [p.code for p in info.value.problems]


# -- restricted_actions ----------------------------------------------------------------------
def _restricted_events(engine, reason):
    return [e for e in engine.events("s", "bar") if e["resource_status_reason"] == reason]


@pytest.mark.parametrize("replace, restricted, refused", [
    (False, ["update", "replace"], "update"),
    (True, ["update", "replace"], "replace"),
    (True, "replace", "replace"),
])
def test_restricted_actions_fail_the_update_and_keep_the_resource(engine, replace, restricted, refused):
    def template(value):
        return hot({"bar": {"type": "OS::Heat::TestResource",
                            "properties": {"value": value, "update_replace": replace}}})
    engine.create_stack("s", template("1"))
    env = {"resource_registry": {"resources": {"*ar": {"restricted_actions": restricted}}}}
    result = engine.update_stack("s", template("2"), environment=Environment.from_dict(env))
    assert result["stack_status"] == "UPDATE_FAILED"
    bar = engine.resource("s", "bar")
    assert (bar["resource_status"], bar["attributes"]["output"]) == ("CREATE_COMPLETE", "1")
    assert len(_restricted_events(engine, f"{refused} is restricted for resource.")) == 1


def test_an_update_in_place_is_allowed_when_only_replace_is_restricted(engine):
    engine.create_stack("s", hot({"bar": {"type": "OS::Heat::TestResource", "properties": {"value": "1"}}}))
    env = {"resource_registry": {"resources": {"bar": {"restricted_actions": "replace"}}}}
    result = engine.update_stack("s", hot({"bar": {"type": "OS::Heat::TestResource",
                                                   "properties": {"value": "2"}}}),
                                 environment=Environment.from_dict(env))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert engine.resource("s", "bar")["attributes"]["output"] == "2"
