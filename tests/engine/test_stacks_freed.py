"""An action's stacks are freed by reference counting at its end (``running.ended``,
``Stack.drop``): the cyclic collector finds none of them, and the outputs the action returns
are still those of its resources."""

from __future__ import annotations

import gc
import json
from collections import Counter

import pytest

from stoker.engine.stack import Stack
from stoker.resources.resource import Resource
from stoker.template.template import Template

def _template(count: int, gen: int) -> dict:
    resources = {f"r{i}": {"type": "OS::Heat::Value", "properties": {"value": f"v{i}-{gen}"}}
                 for i in range(count)}
    resources["last"] = {"type": "OS::Heat::Value",
                         "properties": {"value": {"get_attr": ["r0", "value"]}}}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"first": {"value": {"get_attr": ["r0", "value"]}},
                        "last": {"value": {"get_attr": ["last", "value"]}}}}


@pytest.fixture
def older_objects_held():
    """Every object made before the test, held while it runs: what an earlier test left (a
    thread of its that ends late, say) cannot turn unreachable now and be counted as this
    test's."""
    gc.unfreeze()
    gc.collect()  # what earlier tests left
    older = gc.get_objects()
    yield
    older.clear()


def _left_to_the_collector() -> list:
    """What a full collection finds unreachable now (frozen objects too: an earlier test may
    have left a collection due), then freed."""
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()


def _kinds_left_to_the_collector() -> dict[str, int]:
    """How many objects of each type a full collection finds unreachable now."""
    return dict(Counter(type(o).__qualname__ for o in _left_to_the_collector()))


def _stacks_left_to_the_collector() -> list:
    """The stacks and resources among what a full collection finds unreachable now."""
    return [o for o in _left_to_the_collector() if isinstance(o, (Stack, Resource))]


def test_create_update_rollback_and_delete_leave_no_stack_to_the_collector(engine, older_objects_held):
    created = engine.create_stack("freed", _template(20, 1))
    assert created["stack_status"] == "CREATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"first": "v0-1", "last": "v0-1"}
    assert _stacks_left_to_the_collector() == []

    updated = engine.update_stack("freed", _template(25, 2))
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in updated["outputs"]} == {"first": "v0-2", "last": "v0-2"}
    assert _stacks_left_to_the_collector() == []

    failing = _template(5, 3)
    failing["resources"]["bad"] = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}
    for _ in range(2):  # (the failure's frames, each holding the stack, once made a cycle from the second on)
        failed = engine.update_stack("freed", failing, disable_rollback=False)
        assert failed["stack_status"] == "ROLLBACK_COMPLETE"
        assert {o["output_key"]: o["output_value"] for o in failed["outputs"]} == {"first": "v0-2", "last": "v0-2"}
        assert _stacks_left_to_the_collector() == []

    assert engine.delete_stack("freed")["stack_status"] == "DELETE_COMPLETE"
    assert _stacks_left_to_the_collector() == []


_MEMBER = "heat_template_version: 2018-08-31\nparameters:\n  value: {type: string}\n" \
          "resources:\n  inner: {type: OS::Heat::Value, properties: {value: {get_param: value}}}\n" \
          "outputs:\n  value: {value: {get_attr: [inner, value]}}\n"


def _nesting(gen: int, size: int) -> Template:
    """A stack of nested stacks of each kind: a stack resource (another inside it), a template
    resource, a group of template resources and an autoscaling group (``size`` members each)."""
    value = {"type": "OS::Heat::Value", "properties": {"value": f"v-{gen}"}}
    provided = {"type": "member.yaml", "properties": {"value": f"v-{gen}"}}
    inline = {"heat_template_version": "2018-08-31",
              "resources": {"deeper": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps({
                  "heat_template_version": "2018-08-31", "resources": {"inner": value},
                  "outputs": {"value": {"value": {"get_attr": ["inner", "value"]}}}})}}},
              "outputs": {"value": {"value": {"get_attr": ["deeper", "outputs", "value"]}}}}
    resources = {
        "stack": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(inline)}},
        "provided": {"type": "member.yaml", "properties": {"value": f"p-{gen}"}},
        "group": {"type": "OS::Heat::ResourceGroup",
                  "properties": {"count": size, "resource_def": provided}},
        "scaled": {"type": "OS::Heat::AutoScalingGroup",
                   "properties": {"min_size": 0, "max_size": 5, "desired_capacity": size, "resource": value}},
    }
    outputs = {"stack": {"value": {"get_attr": ["stack", "outputs", "value"]}},
               "provided": {"value": {"get_attr": ["provided", "value"]}},
               "group": {"value": {"get_attr": ["group", "value"]}},
               "scaled": {"value": {"get_attr": ["scaled", "outputs_list", "value"]}}}
    return Template({"heat_template_version": "2018-08-31", "resources": resources, "outputs": outputs},
                    {"member.yaml": _MEMBER})


def test_nested_stacks_are_freed_with_their_top_stack(engine, older_objects_held):
    """Nothing at all is left to the collector: not the nested stacks (``Stack.nested_stacks``),
    nor a template resource's property schemas, nor the statements storing nested outputs."""
    created = engine.create_stack("nesting", _nesting(1, 2))
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {
        "stack": "v-1", "provided": "p-1", "group": ["v-1", "v-1"], "scaled": ["v-1", "v-1"]}
    assert _kinds_left_to_the_collector() == {}

    updated = engine.update_stack("nesting", _nesting(2, 3))
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in updated["outputs"]} == {
        "stack": "v-2", "provided": "p-2", "group": ["v-2"] * 3, "scaled": ["v-2"] * 3}
    assert _kinds_left_to_the_collector() == {}

    assert engine.delete_stack("nesting")["stack_status"] == "DELETE_COMPLETE"
    assert _kinds_left_to_the_collector() == {}
