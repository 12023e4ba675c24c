"""``stoker.started.Started``: returns once the action shows, raises what stopped it before,
gives up after its timeout, waits for the end wherever the action runs, follows its events."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from stoker.errors import Conflict
from stoker.started import Started, in_thread, stack_running


class Kept:
    """States of one stack, as a store would give them: each read takes the next."""

    def __init__(self, *statuses: str):
        self.statuses = list(statuses)
        self.reads = 0

    def __call__(self, stack_id: str) -> dict:
        self.reads += 1
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return {"id": stack_id, "stack_status": status}


def test_it_returns_once_the_action_shows_while_the_action_goes_on():
    go_on, ended = threading.Event(), threading.Event()
    started = Started(Kept("CREATE_COMPLETE"), stack_running)

    def action():
        started.show("s1")
        go_on.wait(10)
        ended.set()
        return {"id": "s1", "stack_status": "CREATE_COMPLETE"}

    assert started.run(in_thread, action).id == "s1"
    assert not ended.is_set() and not started.ended()
    go_on.set()
    assert started.wait()["stack_status"] == "CREATE_COMPLETE" and ended.is_set()


def test_an_error_before_it_shows_is_the_starters():
    def refused():
        raise Conflict("stack s is busy")

    with pytest.raises(Conflict, match="busy"):
        Started(Kept("x"), stack_running).run(in_thread, refused)


def test_after_the_timeout_the_starter_gives_up_and_a_late_show_does_not_count():
    release = threading.Event()
    started = Started(Kept("x"), stack_running)

    def slow():
        release.wait(10)
        with started.lock:
            if started.given_up.is_set():
                return "stopped"
            started.show("late")

    started.run(in_thread, slow, timeout=0.01)
    release.set()
    assert started.id is None and started.given_up.is_set()
    assert started.future.result(10) == "stopped"


def test_an_action_that_ran_to_its_start_only_is_waited_for_through_its_state():
    """The workers (or a server) run it: the thread returns it in progress; the wait reads on."""
    look = Kept("UPDATE_IN_PROGRESS", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE")
    started = Started(look, stack_running)

    def start_on_workers():
        started.show("s2")
        return {"id": "s2", "stack_status": "UPDATE_IN_PROGRESS"}

    assert started.run(in_thread, start_on_workers).wait(interval=0.001)["stack_status"] == "UPDATE_COMPLETE"
    assert look.reads == 3


def test_a_handle_of_an_action_run_elsewhere_follows_it_to_its_end():
    look = Kept("DELETE_IN_PROGRESS", "DELETE_IN_PROGRESS", "DELETE_IN_PROGRESS", "DELETE_COMPLETE")
    shown: list[int] = []
    ended = Started(look, stack_running, "s3").follow(lambda: shown.append(len(shown)), interval=0.001)
    assert ended["stack_status"] == "DELETE_COMPLETE"
    assert len(shown) >= 3  # while it ran, and once after its end


def test_an_action_that_never_shows_gives_its_result():
    future: Future = Future()
    future.set_result({"resources": []})
    started = Started(Kept("x"), stack_running)
    assert started.run(lambda _work: future, lambda: None).wait() == {"resources": []}
