"""``stoker.lease``: the loop a stack action and a workflow execution both keep their lease with,
and the table of how a stack action ends (``engine/outcomes.py``), read the way both drivers read it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from stoker import lease
from stoker.engine.outcomes import DELETE_BACK, UPDATE_BACK, rollback_after
from stoker.lease import HAND_BACK, Cancel


class Row:
    """A leased row whose cancel requests are given in advance, one per beat."""

    def __init__(self, *requests: Cancel | None):
        self.requests = list(requests)
        self.beats: list[str] = []

    def beat(self, owner: str) -> Cancel | None:
        self.beats.append(owner)
        return self.requests.pop(0) if self.requests else None


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(lease, "WATCH_INTERVAL", 0.01)


def keep_while(row: Row, heard_says: bool, seconds: float, stopping: threading.Event | None = None):
    """Run ``keep`` beside work of ``seconds``; (was the work cancelled?, the requests heard)."""
    heard: list[Cancel] = []

    async def on_request(request: Cancel) -> bool:
        heard.append(request)
        return heard_says

    async def main() -> bool:
        work = asyncio.ensure_future(asyncio.sleep(seconds))
        await asyncio.wait_for(lease.keep(row, "me", work, on_request, stopping), 5)
        try:
            await work
        except asyncio.CancelledError:
            return True
        return False

    return asyncio.run(main()), heard


def test_the_holder_beats_until_its_work_ends_and_hears_nothing_unasked():
    row = Row()
    cancelled, heard = keep_while(row, True, 0.1)
    assert not cancelled and heard == []
    assert len(row.beats) >= 2 and set(row.beats) == {"me"}


def test_a_graceful_request_is_heard_and_the_work_goes_on_when_the_holder_says_so():
    cancelled, heard = keep_while(Row(Cancel(graceful=True)), False, 0.1)
    assert not cancelled and heard == [Cancel(graceful=True)]


def test_a_request_that_stops_the_work_cancels_it_once_and_the_lease_beats_on():
    row = Row(Cancel(graceful=False, rollback=True), Cancel(graceful=False, rollback=True))

    async def main() -> tuple[int, int]:
        cancels = 0

        async def stubborn() -> None:  # winds down for a while after its cancel, as a walk does
            nonlocal cancels
            while True:
                try:
                    await asyncio.sleep(1)
                except asyncio.CancelledError:
                    cancels += 1
                    if cancels == 1:
                        await asyncio.sleep(0.1)
                    raise

        async def stop(request: Cancel) -> bool:
            return True

        work = asyncio.ensure_future(stubborn())
        beats_before = len(row.beats)
        await asyncio.wait_for(lease.keep(row, "me", work, stop), 5)
        return cancels, len(row.beats) - beats_before

    cancels, beats = asyncio.run(main())
    assert cancels == 1  # the second request found the work stopped already
    assert beats >= 3  # it went on beating while the work wound down


def test_a_stopping_server_hands_the_work_back_at_once_without_beating():
    stopping = threading.Event()
    stopping.set()
    row = Row()
    cancelled, heard = keep_while(row, True, 2, stopping)
    assert cancelled and heard == [HAND_BACK] and row.beats == []


def test_an_execution_request_is_graceful_or_not():
    class Records:
        def __init__(self, request):
            self.request = request

        def heartbeat(self, pk, owner):
            return self.request

    assert lease.ExecutionLease(Records("graceful"), 1).beat("me") == Cancel(graceful=True)
    assert lease.ExecutionLease(Records("force"), 1).beat("me") == Cancel(graceful=False)
    assert lease.ExecutionLease(Records(None), 1).beat("me") is None


WITH_ROLLBACK, WITHOUT = Cancel(graceful=False, rollback=True), Cancel(graceful=True)


@pytest.mark.parametrize("action, disable_rollback, cancel, follows", [
    ("CREATE", False, None, DELETE_BACK),          # a failure rolls back...
    ("CREATE", True, None, None),                  # ...unless rollback is off
    ("ADOPT", False, None, DELETE_BACK),
    ("CREATE", False, WITH_ROLLBACK, DELETE_BACK),
    ("CREATE", True, WITH_ROLLBACK, None),         # a create's cancel keeps rollback off
    ("CREATE", False, WITHOUT, None),              # cancel_without_rollback never rolls back
    ("UPDATE", False, None, UPDATE_BACK),
    ("UPDATE", True, None, None),
    ("UPDATE", True, WITH_ROLLBACK, UPDATE_BACK),  # Heat's cancel_update rolls back all the same
    ("UPDATE", False, WITHOUT, None),
    ("RESTORE", False, None, UPDATE_BACK),
    ("DELETE", False, None, None),                 # nothing rolls a delete, a rollback or a check back
    ("ROLLBACK", False, WITH_ROLLBACK, None),
    ("CHECK", False, None, None),
])
def test_what_follows_a_failed_action(action, disable_rollback, cancel, follows):
    assert rollback_after(action, disable_rollback, cancel) == follows
