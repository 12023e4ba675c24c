"""An action's stacks are freed by reference counting at its end (``running.ended``,
``Stack.drop``): the cyclic collector finds none of them, and the outputs the action returns
are still those of its resources."""

from __future__ import annotations

import gc

from stoker.engine.stack import Stack
from stoker.resources.resource import Resource

def _template(count: int, gen: int) -> dict:
    resources = {f"r{i}": {"type": "OS::Heat::Value", "properties": {"value": f"v{i}-{gen}"}}
                 for i in range(count)}
    resources["last"] = {"type": "OS::Heat::Value",
                         "properties": {"value": {"get_attr": ["r0", "value"]}}}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"first": {"value": {"get_attr": ["r0", "value"]}},
                        "last": {"value": {"get_attr": ["last", "value"]}}}}


def _stacks_left_to_the_collector() -> list:
    """The stacks and resources among what a full collection finds unreachable now (frozen
    ones too: an earlier test may have left a collection due)."""
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, (Stack, Resource))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_create_update_rollback_and_delete_leave_no_stack_to_the_collector(engine):
    gc.unfreeze()
    gc.collect()  # what earlier tests left
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
    failed = engine.update_stack("freed", failing, disable_rollback=False)
    assert failed["stack_status"] == "ROLLBACK_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in failed["outputs"]} == {"first": "v0-2", "last": "v0-2"}
    assert _stacks_left_to_the_collector() == []

    assert engine.delete_stack("freed")["stack_status"] == "DELETE_COMPLETE"
    assert _stacks_left_to_the_collector() == []
