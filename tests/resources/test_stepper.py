"""A resource action as a stepper (``resources/stepper.py``): each step checks once, the poll kept
between steps lets a later stepper (a later task, another process) go on without acting again."""

from __future__ import annotations

import asyncio

import pytest

from stoker.resources.resource import POLL_KEY, Resource
from stoker.resources.stepper import RUN_TO_END, ActionStepper

from .fakes import FakeStack, make, run


class Slow(Resource):
    """Done at its third check; counts its handler's calls and remembers what each check was given."""

    run_in_thread = False

    def __init__(self, *args):
        super().__init__(*args)
        self.started, self.checked, self.cancelled = 0, [], []

    def handle_create(self):
        self.started += 1
        return {"job": "j-1"}

    def check_create_complete(self, token):
        self.checked.append(token)
        return len(self.checked) >= 3

    def handle_create_cancel(self, token):
        self.cancelled.append(token)


def stepper(resource: Resource) -> ActionStepper:
    return ActionStepper(resource, "CREATE", resource.handle_create, resource.check_create_complete)


def test_a_kept_poll_is_picked_up_by_the_next_stepper_without_starting_again():
    res = make(Slow)

    async def steps():
        first = stepper(res)
        wait = await first.step()
        assert wait is not None and wait > 0 and first.keep()
        second = stepper(res)  # as a later task would: only the stored poll connects them
        waits = [await second.step(), await second.step()]
        return second, waits

    second, waits = run(steps())
    assert res.started == 1 and res.checked == [{"job": "j-1"}] * 3
    assert waits[0] is not None and waits[1] is None
    assert second.picked_up and res.data()[POLL_KEY]["token"] == {"job": "j-1"}


def test_the_delay_grows_up_to_the_drivers_longest():
    res = make(Slow)
    res.check_create_complete = lambda token: False

    async def waits():
        one = stepper(res)
        return [await one.step() for _ in range(12)]

    seen = run(waits())
    assert seen == sorted(seen) and seen[0] < seen[-1] == RUN_TO_END.longest_poll


def test_a_cancelled_action_tells_the_plugin_and_fails():
    stack = FakeStack()
    stack.cancel_reason = "Stack CREATE cancelled"
    res = make(Slow, stack=stack)
    res.check_create_complete = lambda token: False

    async def cancelled():
        task = asyncio.ensure_future(res.create())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancelled())
    assert res.cancelled == [{"job": "j-1"}]
    assert res.state == ("CREATE", "FAILED") and res.status_reason == "Stack CREATE cancelled"
    assert POLL_KEY not in res.data()
