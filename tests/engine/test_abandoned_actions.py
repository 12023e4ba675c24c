"""An engine taking over the stacks of a server that died (``Engine.resume_abandoned``)."""

from __future__ import annotations

import socket
import subprocess
import sys

from .helpers import hot, statuses


def _dead_engine_id() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}:{child.pid}:gone"


def _simple() -> dict:
    return hot({"r": {"type": "OS::Heat::TestResource", "properties": {"value": "v"}}})


def test_a_lock_left_on_an_ended_action_is_only_released(make_engine):
    """Killed between its action's end and the lock's release: nothing is run or marked again."""
    engine = make_engine()
    stack_id = engine.create_stack("done", _simple())["id"]
    engine.store.update_stack(stack_id, lock_owner=_dead_engine_id(), lock_action="UPDATE")
    [abandoned] = engine.store.abandoned_stacks()
    events = len(engine.events("done"))
    assert engine.resume_abandoned(abandoned)
    shown = engine.show_stack("done")
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert engine.store.get_stack(stack_id, engine.project_id).lock_owner is None
    assert len(engine.events("done")) == events


def test_an_update_its_server_died_in_is_marked_failed(make_engine):
    engine = make_engine()
    stack_id = engine.create_stack("cut", _simple())["id"]
    engine.store.update_stack(stack_id, action="UPDATE", status="IN_PROGRESS",
                              lock_owner=_dead_engine_id(), lock_action="UPDATE")
    [abandoned] = engine.store.abandoned_stacks()
    assert engine.resume_abandoned(abandoned)
    shown = engine.show_stack("cut")
    assert shown["stack_status"] == "UPDATE_FAILED"
    assert shown["stack_status_reason"] == "Stack UPDATE interrupted: the server stopped while it ran"
    assert statuses(engine, "cut") == {"r": "CREATE_COMPLETE"}
    assert not engine.resume_abandoned(abandoned)  # taken already: its holder is no longer the dead one
