"""Hooks as Heat's functional tests use them: pre-update fires for a resource the update
leaves alone and for one it replaces; hooks reach resources inside nested stacks."""

from __future__ import annotations

import copy

import yaml

from stoker.template.environment import Environment
from stoker.template.template import Template

from .conftest import in_thread, wait_for

STEPS = {"heat_template_version": "2014-10-16",
         "resources": {"foo_step1": {"type": "OS::Heat::RandomString"},
                       "foo_step2": {"type": "OS::Heat::RandomString", "depends_on": "foo_step1"},
                       "foo_step3": {"type": "OS::Heat::RandomString", "depends_on": "foo_step2"}}}


def _hooked(registry_resources: dict) -> Environment:
    return Environment.from_dict({"resource_registry": {"resources": registry_resources}})


def _wait_for_reason(engine, stack, resource, reason):
    def found():
        try:
            return any(e["resource_name"] == resource and e["resource_status_reason"] == reason
                       for e in engine.events(stack))
        except Exception:  # noqa: BLE001 - the stack may not exist yet
            return False
    wait_for(found, timeout=30)
    return [e for e in engine.events(stack) if e["resource_name"] == resource
            and e["resource_status_reason"] == reason][-1]


def _update_pausing_at_pre_update(make_engine, new_template) -> tuple[str, str]:
    runner, other = make_engine(), make_engine()
    env = _hooked({"foo_step2": {"hooks": "pre-update"}})
    runner.create_stack("s", STEPS, env)
    before = other.resource("s", "foo_step2")["physical_resource_id"]
    thread, box = in_thread(lambda: runner.update_stack("s", new_template, env))
    paused = _wait_for_reason(other, "s", "foo_step2", "UPDATE paused until Hook pre-update is cleared")
    assert paused["resource_status"] == "CREATE_COMPLETE"
    assert other.clear_hook("s", "foo_step2", "pre-update") == "pre-update"
    thread.join(30)
    assert box["value"]["stack_status"] == "UPDATE_COMPLETE", box
    return before, other.resource("s", "foo_step2")["physical_resource_id"]


def test_pre_update_hook_fires_for_an_unchanged_resource(make_engine):
    before, after = _update_pausing_at_pre_update(make_engine, STEPS)
    assert before == after


def test_pre_update_hook_fires_before_a_replacement(make_engine):
    changed = copy.deepcopy(STEPS)
    changed["resources"]["foo_step2"]["properties"] = {"length": 10}
    before, after = _update_pausing_at_pre_update(make_engine, changed)
    assert before != after


def test_pre_create_hook_inside_a_nested_stack(make_engine):
    runner, other = make_engine(), make_engine()
    env = _hooked({"nested": {"foo_step2": {"hooks": "pre-create"}}})
    top = {"heat_template_version": "2014-10-16", "resources": {"nested": {"type": "nested.yaml"}}}
    template = Template(top, {"nested.yaml": yaml.safe_dump(STEPS)})
    thread, box = in_thread(lambda: runner.create_stack("s", template, env))

    def nested_id():
        try:
            return other.resource("s", "nested")["physical_resource_id"]
        except Exception:  # noqa: BLE001 - not there yet
            return None
    wait_for(nested_id, timeout=30)
    inner = nested_id()
    paused = _wait_for_reason(other, inner, "foo_step2", "CREATE paused until Hook pre-create is cleared")
    assert paused["resource_status"] == "INIT_COMPLETE"
    assert other.clear_hook(inner, "foo_step2", "pre-create") == "pre-create"
    thread.join(30)
    assert box["value"]["stack_status"] == "CREATE_COMPLETE", box
