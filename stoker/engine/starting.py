"""A stack action started on an engine copy, returning ``stoker.started.Started`` once it shows.

The engine's verbs run an action to its end (or, with workers, to its start); whoever wants it
under way instead (the REST API, the detached ``stoker`` command, ``Engine.begin``) runs the verb
on a copy of the engine whose store tells the handle when the action shows: the stack row stored
(a create) or its state turned ``*_IN_PROGRESS`` (every other action).  No polling, and no
confusion between two starters racing for one stack name.  The copy has an engine id of its own,
so two actions of one process on one stack exclude each other through the lease as two processes'
would.
"""

from __future__ import annotations

from typing import Any, Callable

from stoker.engine.summaries import stack_summary
from stoker.errors import GivenUp
from stoker.started import Started, stack_running
from stoker.store.locks import new_engine_id


def looked(engine: Any, stack_id: str) -> dict:
    """The stack as stored now, its outputs once its action has ended (and it is still there)."""
    record = engine.get_record(stack_id, show_deleted=True)
    state = stack_summary(record)
    if record.deleted_at is None and not stack_running(state):
        state["outputs"] = engine.outputs(record.id)
    return state


def begin(engine: Any, action: Callable[[Any], Any], submit: Callable, timeout: float | None = None,
          summary: bool = True) -> Started:
    """``action(copy of engine)`` through ``submit``; the handle once the action shows (see
    ``Started.run`` for errors and ``timeout``).  Not ``summary``: the starter drops what the
    action returns, so a create or update returns None instead of re-reading the stack."""
    started = Started(lambda stack_id: looked(engine, stack_id), stack_running)
    copy = engine.for_project(engine.project_id)
    copy.engine_id = new_engine_id()
    copy.given_up = started.given_up
    copy.returns_summary = summary
    copy._store = SignallingStore(engine.store, started)
    return started.run(submit, lambda: action(copy), timeout)


class SignallingStore:
    """The engine's store, telling ``started`` when the action shows."""

    def __init__(self, store: Any, started: Started):
        self._store = store
        self._started = started

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def create_stack_with_template(self, *args: Any, **kwargs: Any) -> Any:
        with self._started.lock:
            if self._started.given_up.is_set():  # the starter answered already: nothing is stored
                raise GivenUp("the request gave up waiting for the create to start")
            record = self._store.create_stack_with_template(*args, **kwargs)
            self._started.show(record.id)  # the first stack created is the top one; nested ones come later
        return record

    create_stack = create_stack_with_template  # same arguments; the store's own would not signal

    def update_stack(self, stack_id: str, **fields: Any) -> None:
        """A stack's row changes; before the action shows, only while its starter still waits (an
        update stores its new definition here: one the starter gave up on stops and stores nothing)."""
        with self._started.lock:
            if self._started.id is None and self._started.given_up.is_set():
                raise GivenUp("the request gave up waiting for this action to start")
            self._store.update_stack(stack_id, **fields)
        if fields.get("status") == "IN_PROGRESS":
            self._started.show(stack_id)

    def write_batch(self, changes: Any, events: Any, stacks: Any = (), *args: Any, **kwargs: Any) -> None:
        """The engine's group commit, which carries stack states too."""
        stacks = list(stacks)
        self._store.write_batch(changes, events, stacks, *args, **kwargs)
        for stack_id, fields in stacks:
            if fields.get("status") == "IN_PROGRESS":
                self._started.show(stack_id)
                break
