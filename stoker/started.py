"""``Started``: an action under way, as whoever started it holds it.

Starting an action returns once it is *visible* -- a stack's row stored or its state
``*_IN_PROGRESS``, an execution's row stored -- as Heat's API answers 201/202 and Cloudify's
201, with this handle: the id, the state now, a wait for the end, and a follow that shows the new
events meanwhile.  Where the action runs (a thread here, the workers, a detached engine process,
a server) is the starter's business: the handle knows only the thread's future, if there is one,
and ``look``, which reads the state of the id.  The REST API, the detached ``stoker`` command and
the CLI's followers of stacks and executions all hold one of these.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover - concurrent.futures (and logging) load with an action only
    from concurrent.futures import Future

#: how often a waiter reads the state of an action run elsewhere (workers, a server)
POLL_INTERVAL = 0.25


def stack_running(state: dict) -> bool:
    """Whether a stack (as clients see it: ``stack_status``) is in an action still."""
    return str(state.get("stack_status", "")).endswith("IN_PROGRESS")


def in_thread(work: Callable[[], Any]) -> Future:
    """``work()`` in a thread of its own (a daemon: a command that exits does not wait for it)."""
    from concurrent.futures import Future

    future: Future = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)

    threading.Thread(target=run, name="stoker-action", daemon=True).start()
    return future


class Started:
    """One action, from the moment it shows: ``id``, ``state()``, ``wait()``, ``follow()``."""

    def __init__(self, look: Callable[[str], dict], running: Callable[[dict], bool], id: str | None = None):
        #: the state of the action's stack or execution, read from where it is kept
        self.look = look
        #: whether a state is one the action is still in
        self.running = running
        self.id = id
        self.visible = threading.Event()
        if id is not None:
            self.visible.set()
        #: the action run here (None: it runs elsewhere, seen through ``look``)
        self.future: Future | None = None
        #: set when the starter stopped waiting before the action showed: it stops and stores nothing
        self.given_up = threading.Event()
        #: held while an action stores what makes it visible, so giving up and showing never cross
        self.lock = threading.Lock()

    def show(self, id: str) -> None:
        """The action is visible, as ``id`` (the first call counts: a nested stack shows later)."""
        if not self.visible.is_set():
            self.id = id
            self.visible.set()

    def give_up(self) -> None:
        with self.lock:
            if self.id is None:
                self.given_up.set()
        self.visible.set()

    def run(self, submit: Callable[[Callable[[], Any]], Future], work: Callable[[], Any],
            timeout: float | None = None) -> "Started":
        """``work()`` through ``submit`` (a pool's, ``in_thread``); this handle once it shows.  An
        error before that is raised here; after ``timeout`` seconds (None: none) the starter gives
        up (``given_up``), and the action, if it shows, raises ``GivenUp`` and stores nothing."""
        self.future = submit(work)
        self.future.add_done_callback(lambda _future: self.visible.set())
        if not self.visible.wait(timeout):
            self.give_up()
        future = self.future
        if self.id is None and future.done() and not future.cancelled() and future.exception() is not None:
            raise future.exception()  # type: ignore[misc]
        return self

    def state(self) -> dict:
        return self.look(self.id)  # type: ignore[arg-type]

    def wait(self, interval: float = POLL_INTERVAL) -> Any:
        """How the action ended: what it returned when it ran to its end here, else its state read
        until it no longer runs (the workers or a server run it); the action's error is raised."""
        state = self.future.result() if self.future is not None else None
        if self.id is None and self.future is not None:
            return state  # it never showed (a dry run, a queued execution's answer)
        while not isinstance(state, dict) or self.running(state):
            if state is not None:
                time.sleep(interval)
            state = self.state()
        return state

    def ended(self) -> bool:
        """Has the action ended (its thread, if any, done, and its state no longer running)?"""
        if self.future is not None and not self.future.done():
            return False
        return self.id is None or not self.running(self.state())

    def follow(self, show_new: Callable[[], Any], interval: float = POLL_INTERVAL) -> Any:
        """Call ``show_new()`` (which shows what is new since its last call) until the action has
        ended, and once after; how it ended (``wait``)."""
        while not self.ended():
            # read before ``show_new``: a thread that ends while it prints is seen ended at once,
            # not after a sleep (0.2 s of every short ``stoker install``)
            here = self.future is not None and not self.future.done()
            show_new()
            if here:
                from concurrent import futures

                futures.wait([self.future], interval)  # back at once when the action ends
            else:
                time.sleep(interval)
        show_new()
        return self.wait()
