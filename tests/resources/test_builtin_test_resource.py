"""OS::Heat::TestResource: waits without blocking, fails on request, replaces on request."""

from __future__ import annotations

import asyncio
import time

import pytest

from stoker.resources.builtin.test_resource import TestResource
from stoker.resources.exceptions import ResourceFailure

from .fakes import FakeStack, create, make, run, update


def created(props=None):
    res = make(TestResource, props or {})
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE")
    return res


def test_stores_value_as_output():
    res = created({"value": "hello"})
    assert res.FnGetAtt("output") == "hello"
    assert res.resource_id  # a physical name


def test_default_value():
    assert created().FnGetAtt("output") == "test_string"


def test_waiting_does_not_block_other_resources():
    """All 100 waits overlap: every resource is in progress before the first one completes."""
    stack = FakeStack()
    resources = [make(TestResource, {"wait_secs": 0.5}, name=f"r{i}", stack=stack)
                 for i in range(100)]

    async def create_all():
        await asyncio.gather(*(create(r) for r in resources))

    run(create_all())
    assert all(r.state == ("CREATE", "COMPLETE") for r in resources)
    statuses = [status for _name, action, status, _reason in stack.states if action == "CREATE"]
    first_complete = statuses.index("COMPLETE")
    assert statuses[:first_complete].count("IN_PROGRESS") == 100


def _within(coroutine, seconds: float = 30):
    """Run ``coroutine``; raise TimeoutError if it has not ended after ``seconds``."""
    async def bounded():
        return await asyncio.wait_for(coroutine, seconds)

    return run(bounded())


def test_action_wait_secs_overrides_wait_secs_per_action():
    # wait_secs -1 waits forever: the create and delete finish only if their own waits are used
    res = make(TestResource, {"wait_secs": -1, "action_wait_secs": {"create": 0.1, "delete": 0}})
    _within(create(res))
    _within(res.delete())
    assert res.state == ("DELETE", "COMPLETE")


def test_action_wait_secs_falls_back_to_wait_secs():
    res = make(TestResource, {"wait_secs": 0.3, "action_wait_secs": {"delete": 0}})
    started = time.monotonic()
    run(create(res))
    assert time.monotonic() - started >= 0.3


def test_negative_wait_never_finishes():
    res = make(TestResource, {"wait_secs": -1})

    async def create_briefly():
        await asyncio.wait_for(create(res), 0.3)

    with pytest.raises(asyncio.TimeoutError):
        run(create_briefly())
    assert res.state == ("CREATE", "FAILED")  # cancelled


def test_fail_fails_create_with_heats_message():
    res = make(TestResource, {"fail": True, "wait_secs": 0.05})
    with pytest.raises(ResourceFailure):
        run(create(res))
    assert res.state == ("CREATE", "FAILED")
    assert "Test Resource failed res" in res.status_reason
    assert res.resource_id is None and res.FnGetAtt("output") is None


def test_fail_does_not_fail_delete():
    res = make(TestResource, {"fail": True})
    with pytest.raises(ResourceFailure):
        run(create(res))
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")


def test_update_value_in_place():
    res = created({"value": "one"})
    ref = res.FnGetRefId()
    assert run(update(res, {"value": "two"})) == "updated"
    assert res.state == ("UPDATE", "COMPLETE")
    assert res.FnGetAtt("output") == "two"
    assert res.FnGetRefId() == ref


def test_update_waits_only_when_value_changes():
    # an update wait of -1 never ends: the first update returns only because it does not wait
    res = created({"value": "one", "action_wait_secs": {"update": -1}})
    assert _within(update(res, {"value": "one", "action_wait_secs": {"update": -1}, "client_name": "x"})) \
        == "updated"
    with pytest.raises(asyncio.TimeoutError):
        _within(update(res, {"value": "two", "action_wait_secs": {"update": -1}}), 0.3)


def test_fail_fails_update():
    res = created({"value": "one"})
    with pytest.raises(ResourceFailure, match="Test Resource failed res"):
        run(update(res, {"value": "two", "fail": True}))
    assert res.state == ("UPDATE", "FAILED")
    assert res.FnGetAtt("output") == "one"


def test_update_replace_replaces_when_value_changes():
    res = created({"value": "one", "update_replace": True})
    assert run(update(res, {"value": "two", "update_replace": True})) == "replace"
    assert res.FnGetAtt("output") == "one"
    assert run(update(res, {"value": "one", "update_replace": True, "wait_secs": 0})) == "unchanged"  # wait_secs 0 is its default: nothing changes


def test_update_replace_value_change_replaces():
    res = created({"update_replace_value": "a"})
    assert run(update(res, {"update_replace_value": "b"})) == "replace"


def test_check_needs_a_created_resource():
    res = created()
    run(res.check())
    assert res.state == ("CHECK", "COMPLETE")
    failed = make(TestResource, {"fail": True})
    with pytest.raises(ResourceFailure):
        run(create(failed))
    with pytest.raises(ResourceFailure, match="Resource not created"):
        run(failed.check())


def test_attr_wait_secs_delays_the_attribute():
    res = created({"attr_wait_secs": 0.2})
    started = time.monotonic()
    assert res.FnGetAtt("output") == "test_string"
    assert time.monotonic() - started >= 0.2


def test_heat_only_knobs_are_accepted():
    res = created({"client_name": "nova", "entity_name": "servers", "constraint_prop_secs": 1})
    assert res.FnGetAtt("output") == "test_string"
