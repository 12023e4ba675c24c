"""The stored counters and locks workers decide from (PostgreSQL, no broker needed)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from stoker.dispatch import traversal
from stoker.engine.graph import Graph
from stoker.store.db import open_store


@pytest.fixture
def store(new_pg_database):
    with new_pg_database("stoker_traversal") as database:
        opened = open_store(database.url.render_as_string(hide_password=False))
        yield opened
        opened.close()


def stack_in(store) -> str:
    return store.create_stack("s", store.store_template({"heat_template_version": "2018-08-31"}, {})).id


def started(store, graph: Graph, name: str = "t1") -> tuple[str, list]:
    stack_id = stack_in(store)
    return stack_id, traversal.start(store, name, stack_id, "CREATE", graph, None, True)


def diamond() -> Graph:
    return Graph({1: set(), 2: {1}, 3: {1}, 4: {2, 3}})


def view(store, node: int, name: str = "t1"):
    with store.engine.connect() as conn:
        return traversal.read(conn, name, node)


def test_a_node_is_ready_when_its_last_requirement_ends(store):
    stack_id, ready = started(store, diamond())
    assert ready == [1]
    assert traversal.begin_node(store, "t1", 1, stack_id, "dispatch:t1")
    assert view(store, 1).node_state == traversal.RUNNING
    ready, ends = traversal.end_node(store, "t1", 1, view(store, 1).dependents, True)
    assert (sorted(ready), ends) == ([2, 3], False)
    assert traversal.end_node(store, "t1", 2, [4], True) == ([], False)
    assert traversal.end_node(store, "t1", 3, [4], True) == ([4], False)
    assert traversal.end_node(store, "t1", 4, [], True) == ([], True)  # the last one ends the action
    assert view(store, 4).status == traversal.ENDING


def test_a_node_ended_twice_counts_once(store):
    started(store, diamond())
    first = traversal.end_node(store, "t1", 1, [2, 3], True)
    assert sorted(first[0]) == [2, 3]
    assert traversal.end_node(store, "t1", 1, [2, 3], True) == ([], False)  # a redelivered task
    assert {view(store, n).node_state for n in (2, 3)} == {traversal.PENDING}
    assert traversal.ready_not_started(store, "t1", [2, 3, 4]) == [2, 3]


def test_after_a_failure_nothing_starts_and_the_last_running_node_ends_it(store):
    stack_id, _ = started(store, Graph({1: set(), 2: set(), 3: set()}))
    owner = "dispatch:t1"
    assert traversal.begin_node(store, "t1", 1, stack_id, owner)
    assert traversal.begin_node(store, "t1", 2, stack_id, owner)
    traversal.stop(store, "t1", "boom", interrupt=False, first_prefix="Resource CREATE failed: ")
    traversal.stop(store, "t1", "bang", interrupt=False, first_prefix="Resource CREATE failed: ")
    assert not traversal.begin_node(store, "t1", 3, stack_id, owner)
    assert traversal.end_node(store, "t1", 3, [], False) == ([], False)  # never ran: 1 and 2 still run
    assert traversal.end_node(store, "t1", 1, [], False) == ([], False)
    assert traversal.end_node(store, "t1", 2, [], True) == ([], True)
    assert traversal.outcome(store, "t1") == ("CREATE", "Resource CREATE failed: boom; bang", True)


def test_a_cancel_replaces_the_failures_and_an_idle_traversal_ends_at_once(store):
    started(store, Graph({1: set(), 2: {1}}))
    traversal.stop(store, "t1", "boom", interrupt=False, first_prefix="Resource CREATE failed: ")
    traversal.stop(store, "t1", "Stack CREATE cancelled", interrupt=True)
    assert traversal.end_if_done(store, "t1")
    assert not traversal.end_if_done(store, "t1")  # only one caller ends it
    assert traversal.outcome(store, "t1")[1] == "Stack CREATE cancelled"


def test_workers_ending_nodes_at_once_end_the_traversal_exactly_once(store):
    nodes = list(range(1, 61))
    started(store, Graph({n: set() for n in nodes}))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: traversal.end_node(store, "t1", n, [], True), nodes))
    assert [ends for _, ends in results].count(True) == 1
    assert view(store, 1).status == traversal.ENDING


def test_dependents_become_ready_once_however_the_ends_interleave(store):
    requirements = list(range(1, 41))
    started(store, Graph({**{n: set() for n in requirements}, 100: set(requirements)}))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: traversal.end_node(store, "t1", n, [100], True), requirements))
    assert [ready for ready, _ in results if ready] == [[100]]


def test_a_park_moves_the_node_to_its_next_step(store):
    stack_id, _ = started(store, Graph({1: set()}))
    assert view(store, 1).step == 0
    assert traversal.park(store, "t1", 1, stack_id, "dispatch:t1") == 1
    assert traversal.park(store, "t1", 1, stack_id, "dispatch:t1") == 2
    assert view(store, 1).step == 2


def test_one_session_at_a_time_holds_a_resource(store):
    with traversal.resource_lock(store, 7) as (held, _):
        assert held
        with traversal.resource_lock(store, 7) as (again, _):
            assert not again
        with traversal.resource_lock(store, 8) as (other, _):
            assert other
    with traversal.resource_lock(store, 7) as (after, _):
        assert after


def test_a_long_step_keeps_the_stack_lock_fresh(store, monkeypatch):
    from stoker.dispatch import worker

    monkeypatch.setattr(worker, "LOCK_BEAT", 0.01)
    stack_id = stack_in(store)
    store.acquire_lock(stack_id, "dispatch:t1", "CREATE")
    taken = store.get_stack(stack_id).lock_time
    with worker._keeping_lock(store, stack_id, "dispatch:t1"):  # a plug-in's handler blocking meanwhile
        for _ in range(500):
            if store.get_stack(stack_id).lock_time > taken:
                break
            threading.Event().wait(0.01)
    assert store.get_stack(stack_id).lock_time > taken


def test_a_deferred_resource_change_is_committed_with_its_node_end_and_not_before(store):
    from types import SimpleNamespace

    from stoker.dispatch.step import DirectRecorder

    stack_id = stack_in(store)
    rid, = store.add_resources_bulk([{"stack_id": stack_id, "name": "r", "type": "OS::Heat::None",
                                      "action": "INIT", "status": "COMPLETE"}])
    traversal.start(store, "t1", stack_id, "CREATE", Graph({rid: set()}), None, True)
    recorder = DirectRecorder(SimpleNamespace(store=store), defer=True)
    event = {"stack_id": stack_id, "resource_name": "r", "action": "CREATE", "status": "IN_PROGRESS"}
    recorder.queue(rid, {"action": "CREATE", "status": "IN_PROGRESS"}, event)
    recorder.queue(rid, {"status": "COMPLETE", "status_reason": "done"}, {**event, "status": "COMPLETE"})
    assert [(r.action, r.status) for r in store.get_resources(stack_id)] == [("INIT", "COMPLETE")]  # not yet

    writes = recorder.take()
    assert writes[0] == [(rid, {"action": "CREATE", "status": "COMPLETE", "status_reason": "done"})]  # merged
    assert traversal.begin_node(store, "t1", rid, stack_id, "dispatch:t1")
    assert traversal.end_node(store, "t1", rid, [], True, writes) == ([], True)
    assert [(r.action, r.status) for r in store.get_resources(stack_id)] == [("CREATE", "COMPLETE")]
    assert [e.status for e in store.list_events(stack_id)] == ["IN_PROGRESS", "COMPLETE"]
    assert recorder.take() == ([], [])
