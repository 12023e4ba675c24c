"""OS::Heat::WaitConditionHandle and OS::Heat::WaitCondition, on a fake stack with a fake store.

The fake store stands for the database: the stack writes a resource's data
there as the engine's writer does (only when the data changed), and
``signal_elsewhere`` plays ``Engine.signal`` in another process: a fresh
handle object loaded from the store, ``handle_signal`` called with no event
loop running, its data written back.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from types import SimpleNamespace

import pytest

from stoker.engine.recorder import resource_fields
from stoker.errors import ValidationFailed
from stoker.resources.builtin import resource_mapping
from stoker.resources.builtin.value import Value
from stoker.resources.builtin.wait_condition import (
    POLL_INTERVAL,
    InvalidSignal,
    WaitCondition,
    WaitConditionHandle,
)
from stoker.resources.exceptions import ResourceFailure
from stoker.template.definition import ResourceDefinition

from .fakes import FakeStack, create, make, run, update


class FakeStore:
    def __init__(self):
        self.rows: dict[int, dict] = {}
        self.reads = 0

    def get_resource(self, resource_id):
        self.reads += 1
        return SimpleNamespace(id=resource_id, data=dict(self.rows.get(resource_id, {})))


class StoreStack(FakeStack):
    """A fake stack with resources by name and a store its resources' data reaches."""

    def __init__(self):
        super().__init__()
        self.resources: dict = {}
        self.store = FakeStore()

    def add(self, cls, properties=None, name="res", type_name="Test::Type"):
        resource = make(cls, properties, name=name, stack=self, type_name=type_name)
        resource.id = len(self.resources) + 1
        self.resources[name] = resource
        return resource

    def _write(self, resource):
        fields = resource_fields(resource)
        if "data" in fields:
            self.store.rows[resource.id] = fields["data"]

    async def persist(self, resource, event=True, durable=False):
        await super().persist(resource, event)
        self._write(resource)

    def persist_soon(self, resource):
        super().persist_soon(resource)
        self._write(resource)


def signal_elsewhere(handle, details=None):
    """What ``Engine.signal`` does from another process; returns the handler's answer."""
    other = WaitConditionHandle(handle.name, handle.t, handle.stack)
    other.id, other.resource_id = handle.id, handle.resource_id
    other.action, other.status = handle.action, handle.status
    other._data = dict(handle.stack.store.rows.get(handle.id, {}))
    answer = other.handle_signal(details)
    handle.stack.store.rows[handle.id] = dict(other._data)
    return answer


async def signal_later(handle, delay, details=None):
    await asyncio.sleep(delay)
    return await asyncio.to_thread(signal_elsewhere, handle, details)  # no event loop there


def handle_and_wait(count=1, timeout=10, handle_ref=None):
    stack = StoreStack()
    handle = stack.add(WaitConditionHandle, name="handle")
    run(create(handle))
    wait = stack.add(WaitCondition, {"handle": handle_ref or handle.resource_id, "timeout": timeout,
                                     "count": count}, name="wait")
    return stack, handle, wait


# -- the handle -------------------------------------------------------------------------
def test_types_are_registered():
    mapping = resource_mapping()
    assert mapping["OS::Heat::WaitConditionHandle"] is WaitConditionHandle
    assert mapping["OS::Heat::WaitCondition"] is WaitCondition


def test_handle_create_keeps_a_token_in_the_store():
    stack = StoreStack()
    handle = stack.add(WaitConditionHandle, name="handle")
    run(create(handle))
    assert handle.state == ("CREATE", "COMPLETE")
    token = handle.FnGetAtt("token")
    assert isinstance(token, str) and len(token) >= 32
    assert stack.store.rows[handle.id]["token"] == token
    assert handle.FnGetRefId() == handle.resource_id


def test_handles_get_different_tokens():
    stack = StoreStack()
    one, two = stack.add(WaitConditionHandle, name="one"), stack.add(WaitConditionHandle, name="two")
    run(create(one))
    run(create(two))
    assert one.FnGetAtt("token") != two.FnGetAtt("token")


def test_handle_endpoint_and_command_name_the_stack_and_handle():
    stack, handle, _ = handle_and_wait()
    assert handle.FnGetAtt("endpoint") == (
        f"stoker://stacks/{stack.name}/{stack.id}/resources/handle/signal")
    # without an engine (no database known): the stoker command of this Python
    assert handle.FnGetAtt("curl_cli") == shlex.join(
        [sys.executable, "-m", "stoker", "stack", "resource", "signal", stack.id, "handle"])
    signal = json.loads(handle.FnGetAtt("signal"))
    assert signal == {"endpoint": handle.FnGetAtt("endpoint"), "token": handle.FnGetAtt("token"),
                      "command": handle.FnGetAtt("curl_cli")}


def test_handle_attributes_are_none_before_create():
    handle = make(WaitConditionHandle, name="handle")
    assert handle.FnGetAtt("token") is None and handle.FnGetAtt("curl_cli") is None


def test_handle_accepts_heat_signal_transports():
    stack = StoreStack()
    handle = stack.add(WaitConditionHandle, {"signal_transport": "HEAT_SIGNAL"}, name="handle")
    run(create(handle))
    assert handle.state == ("CREATE", "COMPLETE")
    with pytest.raises(ValidationFailed):
        make(WaitConditionHandle, {"signal_transport": "PIGEON"}).validate_template()


def test_signal_defaults_as_heat():
    _, handle, _ = handle_and_wait()
    assert signal_elsewhere(handle) == "status:SUCCESS reason:Signal 1 received"
    assert handle.signals() == {"1": {"data": None, "reason": "Signal 1 received", "status": "SUCCESS"}}


def test_signal_with_everything():
    _, handle, _ = handle_and_wait()
    signal_elsewhere(handle, {"id": "web", "data": {"ip": "10.0.0.1"}, "status": "FAILURE",
                              "reason": "disk full"})
    assert handle.signals() == {"web": {"data": {"ip": "10.0.0.1"}, "reason": "disk full",
                                        "status": "FAILURE"}}


def test_signal_that_is_not_a_map_is_data():
    _, handle, _ = handle_and_wait()
    signal_elsewhere(handle, "plain words")
    signal_elsewhere(handle, [1, 2])
    assert handle.all_data() == {"1": "plain words", "2": [1, 2]}
    assert handle.get_status() == ["SUCCESS", "SUCCESS"]


def test_numbers_continue_and_ids_are_strings():
    _, handle, _ = handle_and_wait()
    signal_elsewhere(handle, {"data": "a"})
    signal_elsewhere(handle, {"data": "b", "id": 7})
    signal_elsewhere(handle, {"data": "c"})
    assert handle.all_data() == {"1": "a", "7": "b", "3": "c"}


def test_same_id_replaces_the_signal():
    _, handle, _ = handle_and_wait()
    signal_elsewhere(handle, {"id": "x", "status": "FAILURE", "reason": "first try"})
    signal_elsewhere(handle, {"id": "x", "data": "ok"})
    assert handle.get_status() == ["SUCCESS"]
    assert handle.all_data() == {"x": "ok"}


@pytest.mark.parametrize("details,message", [
    ({"status": "DONE"}, "status must be SUCCESS or FAILURE"),
    ({"data": 1, "color": "red"}, "unknown keys color"),
])
def test_malformed_signal_is_refused(details, message):
    _, handle, _ = handle_and_wait()
    with pytest.raises(InvalidSignal, match=message):
        signal_elsewhere(handle, details)
    assert handle.signals() == {}


def test_signal_before_create_is_refused():
    stack = StoreStack()
    handle = stack.add(WaitConditionHandle, name="handle")
    with pytest.raises(InvalidSignal, match="cannot take signals"):
        handle.handle_signal({"data": 1})


def test_status_reads_the_store_each_time():
    stack, handle, _ = handle_and_wait()
    assert handle.get_status() == []
    stack.store.rows[handle.id]["signals"] = {"a": {"data": 1, "reason": "r", "status": "SUCCESS"}}
    assert handle.get_status() == ["SUCCESS"]
    assert handle.get_status_reason("SUCCESS") == ["r"]
    assert handle.get_status_reason("FAILURE") == []


def test_reading_signals_never_writes_them_back():
    stack, handle, _ = handle_and_wait()
    signal_elsewhere(handle, {"data": 1})
    handle.signals()
    stack.store.rows[handle.id].pop("signals")  # e.g. cleared by another process
    run(handle.set_state(handle.CHECK, handle.COMPLETE))  # a state change persists the handle
    assert "signals" not in stack.store.rows[handle.id]


def test_handle_show_lists_signals():
    _, handle, _ = handle_and_wait()
    signal_elsewhere(handle, {"data": 5})
    assert handle.FnGetAtt("show") == {"signals": {"1": {"data": 5, "reason": "Signal 1 received",
                                                         "status": "SUCCESS"}}}


# -- the wait condition ---------------------------------------------------------------------
def test_completes_when_count_signals_arrive():
    _, handle, wait = handle_and_wait(count=2)

    async def scenario():
        await asyncio.gather(create(wait), signal_later(handle, 0.1, {"data": "one"}),
                             signal_later(handle, 0.3, {"data": "two", "id": "second"}))

    run(scenario())
    assert wait.state == ("CREATE", "COMPLETE")  # by the signals, not the 10 s timeout
    assert json.loads(wait.FnGetAtt("data")) == {"1": "one", "second": "two"}


def test_signals_sent_before_the_wait_count():
    _, handle, wait = handle_and_wait(count=1)
    signal_elsewhere(handle, {"data": "early"})
    run(create(wait))
    assert wait.state == ("CREATE", "COMPLETE")
    assert wait.FnGetAtt("data") == '{"1": "early"}'


def test_failure_signal_fails_with_its_reason():
    _, handle, wait = handle_and_wait(count=2)

    async def scenario():
        await asyncio.gather(create(wait), signal_later(handle, 0.1,
                                                        {"status": "FAILURE", "reason": "disk full"}),
                             return_exceptions=True)

    run(scenario())
    assert wait.state == ("CREATE", "FAILED")
    assert wait.status_reason == "WaitConditionFailure: resources.wait: disk full"


def test_failures_are_all_reported():
    _, handle, wait = handle_and_wait(count=3)
    signal_elsewhere(handle, {"data": "fine"})
    signal_elsewhere(handle, {"status": "FAILURE", "reason": "a"})
    signal_elsewhere(handle, {"status": "FAILURE", "reason": "b"})
    with pytest.raises(ResourceFailure):
        run(create(wait))
    assert wait.status_reason == "WaitConditionFailure: resources.wait: a;b"


def test_times_out_like_heat():
    _, _, wait = handle_and_wait(timeout=1)
    started = time.monotonic()
    with pytest.raises(ResourceFailure):
        run(create(wait))
    elapsed = time.monotonic() - started
    assert wait.state == ("CREATE", "FAILED")
    assert wait.status_reason == "WaitConditionTimeout: resources.wait: 0 of 1 received"
    assert elapsed >= 1.0


def test_timeout_names_the_signals_received():
    _, handle, wait = handle_and_wait(count=2, timeout=1)
    signal_elsewhere(handle, {"reason": "web up"})
    with pytest.raises(ResourceFailure):
        run(create(wait))
    assert wait.status_reason == "WaitConditionTimeout: resources.wait: 1 of 2 received - web up"


def test_polls_gently():
    stack, _, wait = handle_and_wait(timeout=1)
    before = stack.store.reads
    with pytest.raises(ResourceFailure):
        run(create(wait))
    # one look at the start, then one every POLL_INTERVAL: no busy loop
    assert stack.store.reads - before <= 1 / POLL_INTERVAL + 3


def test_poll_delay_never_passes_the_deadline():
    _, _, wait = handle_and_wait()
    now = time.monotonic()
    assert wait.poll_delay(now + 100) == POLL_INTERVAL
    assert 0 < wait.poll_delay(now + 0.05) <= 0.05
    assert wait.poll_delay(now - 1) == 0
    assert wait.poll_delay(None) is None


def test_handle_found_by_get_resource_name():
    from stoker.functions.references import GetResource

    stack, handle, _ = handle_and_wait()
    parser = SimpleNamespace(parse=lambda args, path, conditions=False: args, references=0)
    fn = GetResource(parser, "get_resource", "handle", ("resources", "wait", "properties", "handle"))
    wait = WaitCondition("wait", ResourceDefinition(name="wait", type="OS::Heat::WaitCondition",
                                                    properties={"handle": fn, "timeout": 5}), stack)
    assert wait._handle() is handle


def test_handle_found_by_name():
    _, handle, wait = handle_and_wait(handle_ref="handle")
    signal_elsewhere(handle)
    run(create(wait))
    assert wait.state == ("CREATE", "COMPLETE")


def test_not_a_handle_fails_create():
    stack = StoreStack()
    value = stack.add(Value, {"value": 1}, name="other")
    run(create(value))
    wait = stack.add(WaitCondition, {"handle": value.FnGetRefId(), "timeout": 5}, name="wait")
    with pytest.raises(ResourceFailure):
        run(create(wait))
    assert wait.status_reason == "ValueError: resources.wait: other is not a valid wait condition handle."


def test_missing_handle_fails_create():
    stack = StoreStack()
    wait = stack.add(WaitCondition, {"handle": "nowhere", "timeout": 5}, name="wait")
    with pytest.raises(ResourceFailure, match="nowhere is not a valid wait condition handle"):
        run(create(wait))


@pytest.mark.parametrize("props", [
    {"handle": "h", "timeout": 0},
    {"handle": "h", "timeout": 43201},
    {"handle": "h", "timeout": 5, "count": 0},
    {"timeout": 5},
    {"handle": "h"},
])
def test_invalid_properties(props):
    with pytest.raises(ValidationFailed):
        make(WaitCondition, props).validate_template()


def test_count_update_waits_for_more_signals():
    _, handle, wait = handle_and_wait(count=1)
    signal_elsewhere(handle, {"data": "a"})
    run(create(wait))

    async def scenario():
        return (await asyncio.gather(update(wait, {"handle": handle.resource_id, "timeout": 10,
                                                   "count": 2}),
                                     signal_later(handle, 0.2, {"data": "b"})))[0]

    assert run(scenario()) == "updated"
    assert wait.state == ("UPDATE", "COMPLETE")
    assert json.loads(wait.FnGetAtt("data")) == {"1": "a", "2": "b"}


def test_timeout_change_replaces():
    _, handle, wait = handle_and_wait(count=1)
    signal_elsewhere(handle)
    run(create(wait))
    assert run(update(wait, {"handle": handle.resource_id, "timeout": 20, "count": 1})) == "replace"


def test_delete_clears_the_handles_signals():
    stack, handle, wait = handle_and_wait()
    signal_elsewhere(handle, {"data": "x"})
    run(create(wait))
    run(wait.delete())
    assert wait.state == ("DELETE", "COMPLETE")
    assert stack.store.rows[handle.id]["signals"] == {}
    assert handle.signals() == {}


def test_data_attribute_without_a_handle_is_empty():
    stack = StoreStack()
    wait = stack.add(WaitCondition, {"handle": "gone", "timeout": 5}, name="wait")
    wait.resource_id, wait.action = "x", wait.CREATE
    assert wait.FnGetAtt("data") == ""
