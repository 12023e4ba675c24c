"""The stack lock: exclusive, released, taken over from dead or silent holders."""

from __future__ import annotations

import multiprocessing
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy

from stoker.errors import Conflict, NotFound
from stoker.store import new_engine_id, open_store, owner_is_dead
from stoker.store.models import utcnow


def dead_owner() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}:{child.pid}:dead"


def test_owner_liveness():
    assert not owner_is_dead(new_engine_id())
    assert owner_is_dead(dead_owner())
    assert not owner_is_dead("some-other-host:1:x")  # judged by heartbeat instead
    assert not owner_is_dead("garbage")


def test_an_ended_process_not_yet_reaped_is_dead():
    """A worker's pool process SIGKILLed with its parent stays a zombie until init reaps it."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        while open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
            pass  # ends at once; not reaped until the wait below
        assert owner_is_dead(f"{socket.gethostname()}:{child.pid}:zombie")
    finally:
        child.wait()


def test_acquire_conflict_release(store, stack):
    me, other = new_engine_id(), new_engine_id()
    store.acquire_lock(stack.id, me, "CREATE")
    store.acquire_lock(stack.id, me, "CREATE")  # re-entrant for the same engine
    with pytest.raises(Conflict, match=r"^Stack mystack already has an action \(CREATE\) in progress$"):
        store.acquire_lock(stack.id, other, "DELETE")
    locked = store.get_stack(stack.id)
    assert (locked.lock_owner, locked.lock_action) == (me, "CREATE")
    assert not store.release_lock(stack.id, other)
    assert store.release_lock(stack.id, me)
    store.acquire_lock(stack.id, other, "DELETE")
    assert store.get_stack(stack.id).lock_action == "DELETE"


def test_a_hand_over_passes_the_lock_on_and_may_be_made_again(store, stack):
    store.acquire_lock(stack.id, "dispatch:a", "UPDATE")
    store.update_stack(stack.id, cancel_requested=True)
    store.hand_over_lock(stack.id, "dispatch:a", "dispatch:b", "UPDATE")
    handed = store.get_stack(stack.id)
    assert (handed.lock_owner, handed.cancel_requested) == ("dispatch:b", False)  # a's cancel is not b's
    store.update_stack(stack.id, cancel_requested=True)  # one asked of b
    store.hand_over_lock(stack.id, "dispatch:a", "dispatch:b", "UPDATE")  # made again: b's already
    again = store.get_stack(stack.id)
    assert (again.lock_owner, again.cancel_requested) == ("dispatch:b", True)
    with pytest.raises(Conflict):
        store.hand_over_lock(stack.id, "dispatch:x", "dispatch:y", "UPDATE")
    assert store.release_lock(stack.id, "dispatch:b")  # b's own end gave it up
    store.hand_over_lock(stack.id, "dispatch:a", "dispatch:b", "UPDATE")
    assert store.get_stack(stack.id).lock_owner == "dispatch:b"


def test_missing_stack(store):
    with pytest.raises(NotFound):
        store.acquire_lock("missing", new_engine_id(), "CREATE")


def test_lock_of_dead_process_is_taken_over(store, stack):
    store.acquire_lock(stack.id, dead_owner(), "CREATE")
    me = new_engine_id()
    store.acquire_lock(stack.id, me, "DELETE")
    assert store.get_stack(stack.id).lock_owner == me


def test_silent_holder_is_taken_over_and_heartbeat_keeps_it(store, stack):
    remote = "other-host:4242:abc"
    store.acquire_lock(stack.id, remote, "UPDATE")
    store.update_stack(stack.id, lock_time=utcnow() - timedelta(seconds=61))
    assert store.heartbeat_lock(stack.id, remote)
    with pytest.raises(Conflict):
        store.acquire_lock(stack.id, new_engine_id(), "DELETE")

    store.update_stack(stack.id, lock_time=utcnow() - timedelta(seconds=61))
    me = new_engine_id()
    store.acquire_lock(stack.id, me, "DELETE")
    assert not store.heartbeat_lock(stack.id, remote)  # the old holder learns it lost the lock
    assert store.heartbeat_lock(stack.id, me)


def _race(url, stack_id, start, results, finish):
    store = open_store(url)
    start.wait()
    try:
        store.acquire_lock(stack_id, new_engine_id(), "UPDATE")
        results.put("won")
    except Conflict as error:
        results.put(str(error))
    finish.wait()  # stay alive, so the winner's lock is not stale
    store.close()


def test_racing_processes_exactly_one_wins(store, stack, db_url):
    store.engine.dispose()  # no open connections may cross the fork
    context = multiprocessing.get_context("fork")
    count = 8
    start, finish, results = context.Barrier(count), context.Event(), context.Queue()
    racers = [context.Process(target=_race, args=(db_url, stack.id, start, results, finish)) for _ in range(count)]
    for racer in racers:
        racer.start()
    outcomes = sorted(results.get(timeout=60) for _ in racers)
    finish.set()
    for racer in racers:
        racer.join()
    assert outcomes.count("won") == 1
    assert set(outcomes) - {"won"} == {"Stack mystack already has an action (UPDATE) in progress"}


# -- server processes: a holder whose server stopped beating is gone at once --------------------

def _age_process(store, process: str, seconds: float) -> None:
    from stoker.store.repository import PROCESSES

    with store.engine.begin() as conn:
        conn.execute(PROCESSES.update().where(PROCESSES.c.id == process)
                     .values(heartbeat_at=utcnow() - timedelta(seconds=seconds)))


def test_holder_on_another_host_whose_server_stopped_beating_is_taken_over(store, stack):
    from stoker.store.locks import ENGINE_TIMEOUT

    remote = "other-host:4242:abc"
    store.register_process("other-host:4242")
    store.acquire_lock(stack.id, remote, "CREATE")
    assert not store.owner_gone(remote)
    with pytest.raises(Conflict):  # its server beats: alive, however old the lock's own beat
        store.acquire_lock(stack.id, new_engine_id(), "DELETE")

    _age_process(store, "other-host:4242", ENGINE_TIMEOUT + 1)
    assert store.owner_gone(remote)
    assert [s.id for s in store.abandoned_stacks()] == [stack.id]
    me = new_engine_id()
    store.acquire_lock(stack.id, me, "DELETE")  # the lock's own timeout (60 s) is far off
    assert store.get_stack(stack.id).lock_owner == me
    assert store.abandoned_stacks() == []


def test_a_beat_after_silence_makes_the_server_alive_again_and_unregistered_holders_age_with_the_lock(store):
    from stoker.store.locks import ENGINE_TIMEOUT

    store.register_process("other-host:7")
    _age_process(store, "other-host:7", ENGINE_TIMEOUT + 1)
    assert store.owner_gone("other-host:7:x")
    store.beat_process("other-host:7")
    assert not store.owner_gone("other-host:7:x")
    store.unregister_process("other-host:7")
    assert not store.owner_gone("other-host:7:x")  # a CLI run never registers: its lock ages instead
    assert not store.owner_gone("dispatch:1234")  # the workers' traversal


def test_on_this_host_the_process_table_decides_not_a_slow_beat(store, stack):
    from stoker.store.locks import ENGINE_TIMEOUT, this_process

    store.register_process(this_process())
    _age_process(store, this_process(), ENGINE_TIMEOUT + 1)
    assert not store.owner_gone(new_engine_id())  # this process is alive, merely slow to beat
    dead = dead_owner()
    assert store.owner_gone(dead)


def test_abandoned_stacks_are_handed_back_or_dead_ones_and_taken_over_once(store, stack, template_id):
    live = store.create_stack("live", template_id)
    store.acquire_lock(live.id, new_engine_id(), "CREATE")
    dead = dead_owner()
    store.acquire_lock(stack.id, dead, "CREATE")
    assert [s.id for s in store.abandoned_stacks()] == [stack.id]
    handed = store.create_stack("handed", template_id)
    me = new_engine_id()
    store.acquire_lock(handed.id, me, "CREATE")
    store.hand_back_lock(handed.id, me)
    assert [s.id for s in store.abandoned_stacks()] == [stack.id, handed.id]
    assert [s.id for s in store.abandoned_stacks(handed_back=False)] == [stack.id]
    first, second = new_engine_id(), new_engine_id()
    assert store.take_over(stack.id, dead, first)
    assert not store.take_over(stack.id, dead, second)
    assert store.get_stack(stack.id).lock_owner == first


def test_a_stack_taken_over_while_another_looks_for_abandoned_ones_is_not_taken_over_again(store, stack):
    """Two server processes start at once: one takes a handed-back stack over (and runs it)
    while the other is still looking.  The other must not be given the stack with its new,
    live holder: taking that over would succeed, and the action would run twice."""
    from stoker.store.locks import HANDED_BACK

    stopped, peer = new_engine_id(), new_engine_id()
    store.acquire_lock(stack.id, stopped, "CREATE")
    store.hand_back_lock(stack.id, stopped)
    looked = []

    def peer_takes_over_after_the_first_read(_conn, _cursor, statement, *_rest):
        if statement.lstrip().upper().startswith("SELECT") and not looked:
            looked.append(statement)  # once: the take-over's own statements come here too
            assert store.take_over(stack.id, HANDED_BACK, peer)

    sqlalchemy.event.listen(store.engine, "after_cursor_execute", peer_takes_over_after_the_first_read)
    try:
        found = store.abandoned_stacks()
    finally:
        sqlalchemy.event.remove(store.engine, "after_cursor_execute", peer_takes_over_after_the_first_read)
    assert looked
    assert not any(store.take_over(record.id, record.lock_owner, new_engine_id()) for record in found)
    assert store.get_stack(stack.id).lock_owner == peer


def test_a_server_starting_forgets_servers_silent_for_a_day(store):
    from stoker.store.repository import PROCESSES

    store.register_process("old-host:1")
    store.register_process("recent-host:2")
    _age_process(store, "old-host:1", 86400 + 60)
    _age_process(store, "recent-host:2", 3600)
    store.register_process("new-host:3")
    with store.engine.connect() as conn:
        assert sorted(conn.scalars(PROCESSES.select().with_only_columns(PROCESSES.c.id))) == [
            "new-host:3", "recent-host:2"]


def test_the_clock_workers_share_is_the_databases(store, statements):
    """Workers on several hosts time pauses for each other by it (their own clocks may be skewed):
    one read of the database's time, as seconds since the epoch."""
    with statements() as sent:
        first = store.clock()
    assert [verb for verb in sent if verb != "BEGIN"] == ["SELECT"]  # (SQLite begins explicitly)
    with store.engine.connect() as conn:
        stamp = conn.execute(sqlalchemy.select(sqlalchemy.func.current_timestamp())).scalar_one()
    if isinstance(stamp, str):  # SQLite: UTC, as text
        stamp = datetime.fromisoformat(stamp).replace(tzinfo=timezone.utc)
    second = store.clock()
    assert first <= second
    assert abs(stamp.timestamp() - second) < 60
