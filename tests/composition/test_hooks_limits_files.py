"""Breakpoints (hooks), nesting and size limits, and ``get_file`` through the files map only."""

from __future__ import annotations

import pytest

from stoker.errors import Conflict, ValidationFailed
from stoker.template.environment import Environment
from stoker.template.template import Template

from .conftest import hot, in_thread, load, outputs, wait_for

TWO = hot({"web": {"type": "OS::Heat::Value", "properties": {"value": "w"}},
           "db": {"type": "OS::Heat::Value", "properties": {"value": "d"}}})


def _reason(engine, stack, resource):
    rows = {r["resource_name"]: r for r in engine.resources(stack)}
    return rows[resource]["resource_status_reason"] if resource in rows else ""


def _paused(engine, stack, resource, action="CREATE"):
    def check():
        try:
            return f"{action} paused until Hook" in _reason(engine, stack, resource)
        except Exception:  # noqa: BLE001 - the stack may not exist yet
            return False
    wait_for(check)


@pytest.mark.parametrize("pattern", ["web", "w*"])
def test_pre_create_hook_pauses_until_cleared(make_engine, pattern):
    runner, other = make_engine(), make_engine()
    env = Environment.from_dict({"resource_registry": {"resources": {pattern: {"hooks": "pre-create"}}}})
    thread, box = in_thread(lambda: runner.create_stack("s", TWO, env))
    _paused(other, "s", "web")
    events = [e for e in other.events("s") if e["resource_name"] == "web"]
    assert events[-1]["resource_status_reason"] == "CREATE paused until Hook pre-create is cleared"
    assert _reason(other, "s", "db") != "" and "paused" not in _reason(other, "s", "db")
    with pytest.raises(Conflict):
        other.clear_hook("s", "web", "pre-delete")
    assert other.clear_hook("s", "web", "pre-create") == "pre-create"
    thread.join(15)
    assert not thread.is_alive()
    assert box["value"]["stack_status"] == "CREATE_COMPLETE", box


def test_hook_cleared_through_cli(make_engine, cli):
    runner = make_engine()
    env = Environment.from_dict({"resource_registry": {"resources": {"web": {"hooks": ["pre-create"]}}}})
    thread, box = in_thread(lambda: runner.create_stack("s", TWO, env))
    _paused(make_engine(), "s", "web")
    run = cli("stack", "hook", "clear", "s", "web")
    assert run.code == 0, run.output
    assert "Cleared hook pre-create on web" in run.stdout
    thread.join(15)
    assert box["value"]["stack_status"] == "CREATE_COMPLETE", box


def test_clear_hook_on_a_resource_not_paused_is_an_error(engine, cli):
    engine.create_stack("s", TWO)
    with pytest.raises(Conflict):
        engine.clear_hook("s", "web", "pre-create")
    run = cli("stack", "hook", "clear", "s", "web")
    assert run.code == 1
    assert "not paused" in run.stderr


def test_pre_delete_hook(make_engine):
    runner, other = make_engine(), make_engine()
    env = Environment.from_dict({"resource_registry": {"resources": {"web": {"hooks": "pre-delete"}}}})
    assert runner.create_stack("s", TWO, env)["stack_status"] == "CREATE_COMPLETE"
    thread, box = in_thread(lambda: runner.delete_stack("s"))
    _paused(other, "s", "web", "DELETE")
    assert other.clear_hook("s", "web") == "pre-delete"
    thread.join(15)
    assert box["value"]["stack_status"] == "DELETE_COMPLETE", box


def test_hook_event_says_cleared(make_engine):
    runner, other = make_engine(), make_engine()
    env = Environment.from_dict({"resource_registry": {"resources": {"web": {"hooks": "pre-create"}}}})
    thread, box = in_thread(lambda: runner.create_stack("s", TWO, env))
    _paused(other, "s", "web")
    other.clear_hook("s", "web")
    thread.join(15)
    reasons = [e["resource_status_reason"] for e in other.events("s") if e["resource_name"] == "web"]
    assert "Hook pre-create is cleared" in reasons


# -- limits -----------------------------------------------------------------------------------
def test_self_including_provider_template_is_nesting_too_deep(tree, engine):
    root = tree({"self.yaml": hot({"me": {"type": "self.yaml"}})})
    template, env = load(root / "self.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    assert "nesting-too-deep" in [p.code for p in info.value.problems]
    assert engine.list_stacks() == []


def _chain(tree, levels):
    files = {"t.yaml": hot({"n": {"type": "l1.yaml"}})}
    for i in range(1, levels):
        files[f"l{i}.yaml"] = hot({"n": {"type": f"l{i + 1}.yaml"}})
    files[f"l{levels}.yaml"] = hot({"v": {"type": "OS::Heat::Value", "properties": {"value": "bottom"}}})
    return tree(files)


def test_nesting_five_deep_is_allowed_six_is_not(tree, engine):
    root = _chain(tree, 5)
    template, env = load(root / "t.yaml")
    result = engine.create_stack("ok", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    (root / "l5.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  n: {type: l6.yaml}\n")
    (root / "l6.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n  v: {type: OS::Heat::None}\n")
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("deep", template, env)
    assert "nesting-too-deep" in [p.code for p in info.value.problems]


def test_max_nested_depth_from_environment_variable(tree, make_engine, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_NESTED_DEPTH", "2")
    engine = make_engine()
    root = _chain(tree, 3)
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    problem = next(p for p in info.value.problems if p.code == "nesting-too-deep")
    assert "2" in problem.message
    template, env = load(_chain(tree, 2) / "t.yaml")
    assert engine.create_stack("ok", template, env)["stack_status"] == "CREATE_COMPLETE"


def test_max_resources_limits_a_big_group(make_engine, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_RESOURCES", "5")
    engine = make_engine()
    tmpl = hot({"g": {"type": "OS::Heat::ResourceGroup",
                      "properties": {"count": 10, "resource_def": {"type": "OS::Heat::None"}}}})
    try:
        result = engine.create_stack("s", tmpl)
    except ValidationFailed as exc:
        assert "too-many-resources" in [p.code for p in exc.problems]
        return
    assert result["stack_status"] == "CREATE_FAILED"
    assert "too-many-resources" in result["stack_status_reason"] or "max_resources" in result["stack_status_reason"]


def test_small_group_within_max_resources(make_engine, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_RESOURCES", "5")
    engine = make_engine()
    tmpl = hot({"g": {"type": "OS::Heat::ResourceGroup",
                      "properties": {"count": 3, "resource_def": {"type": "OS::Heat::None"}}}})
    assert engine.create_stack("s", tmpl)["stack_status"] == "CREATE_COMPLETE"


# -- get_file ---------------------------------------------------------------------------------
def test_get_file_next_to_template_through_files_map(tree, engine):
    root = tree({
        "t.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_file": "data/hello.txt"}}}},
                      outputs={"v": {"value": {"get_attr": ["v", "value"]}}}),
        "data/hello.txt": "hello from a file\n",
    })
    template, env = load(root / "t.yaml")
    assert any(k.endswith("/data/hello.txt") for k in template.files)
    result = engine.create_stack("s", template, env)
    assert outputs(result)["v"] == "hello from a file\n"
    # the file is kept with the stack: changing it on disk changes nothing
    (root / "data" / "hello.txt").write_text("changed")
    assert outputs(engine.outputs("s"))["v"] == "hello from a file\n"


def test_get_file_in_nested_template_relative_to_it(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "sub/member.yaml"}}, outputs={"v": {"value": {"get_attr": ["m", "v"]}}}),
        "sub/member.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_file": "x.txt"}}}},
                               outputs={"v": {"value": {"get_attr": ["v", "value"]}}}),
        "sub/x.txt": "nested file",
    })
    template, env = load(root / "t.yaml")
    assert outputs(engine.create_stack("s", template, env))["v"] == "nested file"


def test_get_file_missing_is_a_validation_error_naming_the_place(tree, engine):
    root = tree({"t.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_file": "nope.txt"}}}})})
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    problem = info.value.problems[0]
    assert tuple(problem.path[:4]) == ("resources", "v", "properties", "value")
    assert "nope.txt" in problem.message
    assert engine.list_stacks() == []


def test_engine_never_reads_a_file_outside_the_map(tmp_path, engine):
    secret = tmp_path / "on-disk.txt"
    secret.write_text("should never be read")
    tmpl = hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_file": secret.as_uri()}}}})
    for template in (Template(tmpl, {}), Template(tmpl, {"file:///other.txt": "x"})):
        with pytest.raises(ValidationFailed) as info:
            engine.create_stack("s", template)
        assert "should never be read" not in str(info.value)
    tmpl = hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_file": str(secret)}}}})
    with pytest.raises(ValidationFailed):
        engine.create_stack("s", Template(tmpl, {}))
    assert engine.list_stacks() == []


def test_provider_template_not_in_map_is_refused(tmp_path, engine):
    member = tmp_path / "member.yaml"
    member.write_text("heat_template_version: 2018-08-31\nresources: {}\n")
    tmpl = hot({"m": {"type": member.as_uri()}})
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", Template(tmpl, {}))
    assert "files map" in info.value.problems[0].message
