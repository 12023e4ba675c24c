"""A resource action cancelled because the server stops stays in progress with its poll kept;
the next server picks it up where it stood, without calling the plug-in's handler again."""

from __future__ import annotations

import asyncio

import pytest

from stoker.resources.builtin.test_resource import TestResource
from stoker.resources.resource import POLL_KEY

from .fakes import create, make, run


class CountingResource(TestResource):
    creates = 0

    def handle_create(self):
        type(self).creates += 1
        return super().handle_create()


def _stop_mid_create(res) -> None:
    async def create_then_stop():
        task = asyncio.ensure_future(create(res))
        while res.state != ("CREATE", "IN_PROGRESS"):
            await asyncio.sleep(0.01)
        res.stack.handing_back = True
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    run(create_then_stop())


def test_handing_back_keeps_the_poll_and_the_state():
    CountingResource.creates = 0
    res = make(CountingResource, {"wait_secs": 60, "value": "kept"})
    _stop_mid_create(res)
    assert res.state == ("CREATE", "IN_PROGRESS")
    assert res.data()[POLL_KEY]["action"] == "CREATE"
    assert isinstance(res.data()[POLL_KEY]["token"], float)  # the deadline
    assert CountingResource.creates == 1


def test_pick_up_polls_the_kept_token_without_creating_again():
    CountingResource.creates = 0
    res = make(CountingResource, {"wait_secs": 60, "value": "kept"})
    _stop_mid_create(res)
    res.stack.handing_back = False
    res._data[POLL_KEY]["token"] = 0.0  # the wait is over by now
    assert run(res.pick_up("CREATE")) is True
    assert res.state == ("CREATE", "COMPLETE")
    assert CountingResource.creates == 1
    assert POLL_KEY not in res.data() and res.FnGetAtt("output") == "kept"


def test_a_cancel_that_is_not_a_hand_back_still_fails_the_resource():
    res = make(CountingResource, {"wait_secs": 60})

    async def cancelled():
        await asyncio.wait_for(create(res), 0.3)

    with pytest.raises(asyncio.TimeoutError):
        run(cancelled())
    assert res.state == ("CREATE", "FAILED") and POLL_KEY not in res.data()
    assert run(res.pick_up("CREATE")) is False
