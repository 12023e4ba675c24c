"""What is on disk when: a resource's start before it acts, a dependency's end before its
dependent starts, the stack's end before it is reported; batched commits; pushed progress."""

from __future__ import annotations

import asyncio

import pytest

from stoker.engine.recorder import Recorder
from stoker.resources.resource import Resource
from stoker.template.template import Template

from .helpers import hot


class Probe(Resource):
    """Acts outside: reads, from the database, what is committed when it acts."""

    run_in_thread = False
    seen: dict[str, dict] = {}

    def handle_create(self):
        rows = {row.name: row for row in self.stack.store.get_resources(self.stack.id)}
        Probe.seen[self.name] = {name: f"{row.action}_{row.status}" for name, row in rows.items()}
        self.resource_id_set(self.name)


@pytest.fixture
def probe_engine(engine):
    Probe.seen = {}
    engine.registry.register("Test::Probe", Probe)
    return engine


def _chain(n: int) -> dict:
    return hot({f"r{i}": {"type": "OS::Heat::None", **({"depends_on": [f"r{i - 1}"]} if i else {})}
                for i in range(n)})


def test_a_resource_acts_only_once_its_start_and_its_requirements_end_are_on_disk(probe_engine):
    # an in-engine resource (not awaited) in between two that act outside
    template = hot({"a": {"type": "Test::Probe"},
                    "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
                    "c": {"type": "Test::Probe", "depends_on": ["b"]}})
    assert probe_engine.create_stack("s", template)["stack_status"] == "CREATE_COMPLETE"
    assert Probe.seen["a"]["a"] == "CREATE_IN_PROGRESS"
    assert Probe.seen["c"] == {"a": "CREATE_COMPLETE", "b": "CREATE_COMPLETE", "c": "CREATE_IN_PROGRESS"}


def test_a_chain_of_in_engine_resources_commits_in_batches_not_per_step(engine):
    store = engine.store
    commits = []
    write_batch = store.write_batch

    def counting(changes, events, stacks=(), **kwargs):
        commits.append(len(events))
        return write_batch(changes, events, stacks, **kwargs)

    store.write_batch = counting
    n = 400
    assert engine.create_stack("chain", _chain(n))["stack_status"] == "CREATE_COMPLETE"
    assert sum(commits) == 2 * n + 2  # every event written, the stack's two included
    assert len(commits) < n // 4, commits  # a commit per step would be 2 * n
    rows = {r["resource_name"]: r["resource_status"] for r in engine.resources("chain")}
    assert set(rows.values()) == {"CREATE_COMPLETE"} and len(rows) == n


def test_progress_pushes_the_top_stacks_events_in_order_as_they_are_committed(engine):
    member = '{"heat_template_version": "2018-08-31", "resources": {"x": {"type": "OS::Heat::None"}}}'
    pushed = []
    template = Template(hot({"a": {"type": "OS::Heat::None"},
                             "nested": {"type": "member.yaml", "depends_on": ["a"]}}), {"member.yaml": member})
    with engine.progress.subscribe(lambda root, events: pushed.extend(
            (e["resource_name"], e["resource_status"]) for e in events if e["stack_id"] == root)):
        engine.create_stack("s", template)
    engine.create_stack("after", hot({"z": {"type": "OS::Heat::None"}}))  # no longer listening
    stored = [(e["resource_name"], e["resource_status"]) for e in engine.events("s")]
    assert pushed == stored
    assert pushed[0] == ("s", "CREATE_IN_PROGRESS") and pushed[-1] == ("s", "CREATE_COMPLETE")
    assert ("nested", "CREATE_COMPLETE") in pushed and not any(name == "x" for name, _ in pushed)


def test_a_listener_that_fails_is_dropped_and_the_action_goes_on(engine):
    calls = []

    def broken(root, events):
        calls.append(len(events))
        raise BrokenPipeError("display gone")

    with engine.progress.subscribe(broken):
        assert engine.create_stack("s", _chain(3))["stack_status"] == "CREATE_COMPLETE"
    assert len(calls) == 1


class _FailingStore:
    def __init__(self):
        self.calls = 0

    def write_batch(self, changes, events, stacks=()):
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("disk full")


def test_a_failed_commit_nobody_awaited_reaches_the_next_one_who_does():
    store = _FailingStore()

    class _Engine:
        def __init__(self):
            self.store = store
            from stoker.engine.progress import Progress

            self.progress = Progress()

    async def scenario():
        recorder = Recorder(_Engine(), "root")
        recorder.queue(1, {"status": "COMPLETE"})  # not awaited: its commit fails
        with pytest.raises(RuntimeError, match="disk full"):
            await recorder.flush()
        await recorder.write(2, {"status": "COMPLETE"})  # later commits are fine again
        recorder.close()

    asyncio.run(scenario())
    assert store.calls == 2


def test_a_one_resource_create_writes_in_two_transactions_on_its_own_thread(engine):
    """The stack's row (in its "started" state) with its template, lock and resource rows; then
    the resource's start and end with the stack's end and the lock's release (the walk ended
    well, so the end carries what it queued).  Batches this small are committed on the action's
    thread: no writer thread is handed them."""
    import threading

    from sqlalchemy import event

    engine.create_stack("warm", hot({"r": {"type": "OS::Heat::None"}}))
    writes: list[str] = []

    def began(conn):
        if conn.get_execution_options().get("stoker_write"):
            writes.append(threading.current_thread().name)

    event.listen(engine.store.engine, "begin", began)
    try:
        assert engine.create_stack("s", hot({"r": {"type": "OS::Heat::None"}}))["stack_status"] == "CREATE_COMPLETE"
    finally:
        event.remove(engine.store.engine, "begin", began)
    assert writes == [threading.current_thread().name] * 2, writes
    shown = [(e["resource_name"], e["resource_status"], e["resource_status_reason"]) for e in engine.events("s")]
    assert shown == [("s", "CREATE_IN_PROGRESS", "Stack CREATE started"),
                     ("r", "CREATE_IN_PROGRESS", "state changed"), ("r", "CREATE_COMPLETE", "state changed"),
                     ("s", "CREATE_COMPLETE", "Stack CREATE completed successfully")]
    record = engine.get_record("s")
    assert (record.lock_owner, record.lock_action) == (None, None)
    assert engine.store._released_with_end == set()  # the end's release was found by ``holding``


def test_an_end_that_finds_its_lock_taken_leaves_it_to_its_holder(engine, monkeypatch):
    """The lock goes with the end's commit only while it is the action's own: a stack taken over
    meanwhile keeps its new holder's lock, and the state is written all the same."""
    from stoker.engine import running

    ending = running.end_action

    async def taken_then_ended(stack, *args):
        engine.store.update_stack(stack.id, lock_owner="another-engine")
        return await ending(stack, *args)

    monkeypatch.setattr(running, "end_action", taken_then_ended)
    assert engine.create_stack("s", hot({"r": {"type": "OS::Heat::None"}}))["stack_status"] == "CREATE_COMPLETE"
    assert engine.get_record("s").lock_owner == "another-engine"
