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


def view(store, name: str = "t1"):
    with store.engine.connect() as conn:
        return traversal.read(conn, name)[0]


def node(store, resource_id: int, name: str = "t1"):
    with store.engine.connect() as conn:
        return traversal.read(conn, name, [resource_id])[1][resource_id]


def begin(store, stack_id, *nodes) -> set:
    with store.engine.connect() as conn:
        began = traversal.begin_nodes(conn, "t1", nodes, stack_id, "dispatch:t1")
        conn.commit()
    return began


def end(store, resource_id, dependents=(), succeeded=True, writes=([], [])):
    """One node's end: (ready now, whether this caller ends the traversal)."""
    ready = traversal.advance(store, "t1", {resource_id: (list(dependents), succeeded)}, writes=writes).ready
    return ready, not ready and traversal.end_if_done(store, "t1")


def test_a_node_is_ready_when_its_last_requirement_ends(store):
    stack_id, ready = started(store, diamond())
    assert ready == [1]
    assert begin(store, stack_id, 1) == {1}
    assert node(store, 1).state == traversal.RUNNING
    assert begin(store, stack_id, 1) == set()  # taken once
    assert end(store, 1, node(store, 1).dependents) == ([2, 3], False)
    assert end(store, 2, [4]) == ([], False)
    assert end(store, 3, [4]) == ([4], False)
    assert end(store, 4) == ([], True)  # the last one ends the action
    assert view(store).status == traversal.ENDING


def test_many_nodes_end_in_one_transaction_and_a_shared_dependent_counts_each(store):
    stack_id, ready = started(store, Graph({1: set(), 2: set(), 3: set(), 4: {1, 2}, 5: {1, 2, 3}}))
    assert begin(store, stack_id, *ready) == {1, 2, 3}
    moved = traversal.advance(store, "t1", {1: ([4, 5], True), 2: ([4, 5], True)})
    assert moved.ready == [4]  # 5 still waits for 3
    assert node(store, 5).state == traversal.PENDING
    assert traversal.advance(store, "t1", {3: ([5], True)}).ready == [5]


def test_a_node_ended_twice_counts_once(store):
    started(store, diamond())
    assert end(store, 1, [2, 3])[0] == [2, 3]
    assert end(store, 1, [2, 3]) == ([], False)  # a redelivered task
    assert {node(store, n).state for n in (2, 3)} == {traversal.PENDING}


def test_a_redelivered_task_finds_what_ran_after_its_nodes(store):
    stack_id, _ = started(store, Graph({1: set(), 2: {1}, 3: {2}, 4: {3}, 5: {2}}))
    begin(store, stack_id, 1)
    end(store, 1, [2])
    begin(store, stack_id, 2)
    end(store, 2, [3, 5])
    begin(store, stack_id, 3, 5)  # the worker running the chain on its own dies here
    traversal.advance(store, "t1", {}, parked=[5])  # 5 waits for a countdown
    assert traversal.left_behind(store, "t1", [1]) == {3: 0, 5: 1}  # 4 still waits for 3
    assert traversal.left_behind(store, "t1", []) == {}


def test_after_a_failure_nothing_starts_and_the_last_running_node_ends_it(store):
    stack_id, _ = started(store, Graph({1: set(), 2: set(), 3: set()}))
    assert begin(store, stack_id, 1, 2) == {1, 2}
    traversal.stop(store, "t1", "boom", interrupt=False, first_prefix="Resource CREATE failed: ")
    traversal.stop(store, "t1", "bang", interrupt=False, first_prefix="Resource CREATE failed: ")
    assert begin(store, stack_id, 3) == set()
    assert end(store, 3, [], False) == ([], False)  # never ran: 1 and 2 still run
    assert end(store, 1, [], False) == ([], False)
    assert end(store, 2, [], True) == ([], True)
    assert traversal.outcome(store, "t1") == ("CREATE", "Resource CREATE failed: boom; bang", True)


def test_a_cancel_replaces_the_failures_and_an_idle_traversal_ends_at_once(store):
    started(store, Graph({1: set(), 2: {1}}))
    traversal.stop(store, "t1", "boom", interrupt=False, first_prefix="Resource CREATE failed: ")
    traversal.stop(store, "t1", "Stack CREATE cancelled", interrupt=True)
    assert traversal.end_if_done(store, "t1")
    assert not traversal.end_if_done(store, "t1")  # only one caller ends it
    assert traversal.outcome(store, "t1")[1] == "Stack CREATE cancelled"


def tree(store) -> tuple[str, str, str]:
    """A stack, its nested stack and that one's: each with a traversal in progress (t1, t2, t3)."""
    template = store.store_template({"heat_template_version": "2018-08-31"}, {})
    top = store.create_stack("top", template).id
    inner = store.create_stack("inner", template, parent_id=top).id
    deeper = store.create_stack("deeper", template, parent_id=inner).id
    for name, stack_id in (("t1", top), ("t2", inner), ("t3", deeper)):
        traversal.start(store, name, stack_id, "CREATE", Graph({1: set(), 2: {1}}), None, True)
    return top, inner, deeper


def test_a_cancel_stops_the_nested_stacks_traversals_at_any_depth_and_a_failure_does_not(store):
    tree(store)
    traversal.stop(store, "t1", "boom", interrupt=False, first_prefix="Resource CREATE failed: ")
    assert [view(store, t).stopping for t in ("t2", "t3")] == [None, None]  # a failure stops its own only

    traversal.stop(store, "t1", "Stack CREATE cancelled", interrupt=True)
    assert [(view(store, t).stopping, view(store, t).interrupt) for t in ("t2", "t3")] == [
        ("Stack CREATE cancelled", True)] * 2


def test_a_cancel_without_rollback_stops_nothing_running_in_the_tree_and_happens_once(store):
    tree(store)
    assert traversal.cancel_gracefully(store, "t1", "Stack CREATE cancelled")
    assert not traversal.cancel_gracefully(store, "t1", "Stack CREATE cancelled")  # one worker acts on it
    assert [(view(store, t).stopping, view(store, t).interrupt) for t in ("t1", "t2", "t3")] == [
        ("Stack CREATE cancelled", False)] * 3
    assert traversal.outcome(store, "t1") == ("CREATE", "Stack CREATE cancelled", True)  # no rollback follows
    # a resource that then fails is the reason the action ends with, as in-process
    traversal.stop(store, "t2", "resources.x: gone", interrupt=False, first_prefix="Resource CREATE failed: ")
    assert view(store, "t2").stopping == "Resource CREATE failed: resources.x: gone"


def test_a_nested_stack_whose_action_starts_after_its_parents_cancel_starts_stopped(store):
    template = store.store_template({"heat_template_version": "2018-08-31"}, {})
    top = store.create_stack("top", template).id
    traversal.start(store, "t1", top, "CREATE", Graph({1: set()}), None, True)
    traversal.stop(store, "t1", "CREATE timed out", interrupt=True)
    inner = store.create_stack("inner", template, parent_id=top).id
    traversal.start(store, "t2", inner, "CREATE", Graph({1: set()}), None, True)
    traversal.inherit_stop(store, "t2", inner)
    assert (view(store, "t2").stopping, view(store, "t2").interrupt) == ("CREATE timed out", True)
    assert traversal.end_if_done(store, "t2")  # nothing of it ever starts


def test_workers_ending_nodes_at_once_end_the_traversal_exactly_once(store):
    nodes = list(range(1, 61))
    started(store, Graph({n: set() for n in nodes}))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: end(store, n), nodes))
    assert [ends for _, ends in results].count(True) == 1
    assert view(store).status == traversal.ENDING


def test_dependents_become_ready_once_however_the_ends_interleave(store):
    requirements = list(range(1, 41))
    shared = [100, 101, 102]
    started(store, Graph({**{n: set() for n in requirements}, **{s: set(requirements) for s in shared}}))
    batches = [requirements[i:i + 3] for i in range(0, 40, 3)]
    with ThreadPoolExecutor(8) as pool:  # batches of ends lowering the same counters at once
        results = list(pool.map(lambda b: traversal.advance(store, "t1", {n: (shared, True) for n in b}).ready,
                                batches))
    assert [ready for ready in results if ready] == [shared]


def test_a_park_moves_the_node_to_its_next_step(store):
    stack_id, _ = started(store, Graph({1: set(), 2: set()}))
    assert node(store, 1).step == 0
    assert traversal.advance(store, "t1", {}, parked=[1, 2]).steps == {1: 1, 2: 1}
    assert traversal.advance(store, "t1", {}, parked=[1]).steps == {1: 2}
    assert (node(store, 1).step, node(store, 2).step) == (2, 1)


def test_one_session_at_a_time_holds_a_resource(store):
    with traversal.resource_locks(store) as first, traversal.resource_locks(store) as second:
        assert traversal.try_locks(first, "t1", [7, 9]) == {7, 9}
        assert traversal.try_locks(second, "t1", [7, 8]) == {8}
        traversal.release(first, "t1", [7])
        assert traversal.try_locks(second, "t1", [7, 9]) == {7}
    with traversal.resource_locks(store) as after:  # the blocks' ends released the rest
        assert traversal.try_locks(after, "t1", [7, 8, 9]) == {7, 8, 9}


def test_one_session_at_a_time_runs_a_traversals_end(store):
    with traversal.resource_locks(store) as first, traversal.resource_locks(store) as second:
        assert traversal.take_end(first, "t1")
        assert not traversal.take_end(second, "t1")  # its end runs in the first session
        assert traversal.take_end(second, "t2")
    with traversal.resource_locks(store) as after:  # a session gone (a lost ender's) holds it no more
        assert traversal.take_end(after, "t1")


def test_a_traversal_started_again_is_stored_once_and_gives_its_ready_nodes_not_started(store):
    stack_id, ready = started(store, diamond())

    def again() -> list:
        return sorted(traversal.start(store, "t1", stack_id, "CREATE", diamond(), None, True))

    assert ready == again() == [1]
    begin(store, stack_id, 1)
    assert again() == []
    assert end(store, 1, [2, 3]) == ([2, 3], False)
    assert again() == [2, 3]
    assert traversal.status(store, "t1") == traversal.IN_PROGRESS
    assert [node(store, rid).state for rid in (1, 2, 3, 4)] == [traversal.DONE] + [traversal.PENDING] * 3


def test_a_long_step_keeps_the_stack_lock_fresh(store, monkeypatch):
    from stoker.dispatch import worker

    monkeypatch.setattr(worker, "LOCK_BEAT", 0.01)
    stack_id = stack_in(store)
    store.acquire_lock(stack_id, "dispatch:t1", "CREATE")
    taken = store.get_stack(stack_id).lock_time
    with worker._keeping_lock(store, stack_id, "dispatch:t1", quick=False):  # a plug-in's handler blocking meanwhile
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
    assert begin(store, stack_id, rid) == {rid}
    assert end(store, rid, [], True, writes) == ([], True)
    assert [(r.action, r.status) for r in store.get_resources(stack_id)] == [("CREATE", "COMPLETE")]
    assert [e.status for e in store.list_events(stack_id)] == ["IN_PROGRESS", "COMPLETE"]
    assert recorder.take() == ([], [])


def test_a_redelivered_task_enqueues_again_the_nodes_its_worker_parked(store):
    """Its worker may have died between parking them and enqueueing their next step."""
    import uuid

    from stoker.dispatch import celery_app
    from stoker.dispatch.worker import Worker

    from .test_publish import published

    started(store, Graph({1: set(), 2: set(), 3: set()}))
    traversal.advance(store, "t1", {3: ([], True)}, parked=[1, 2])  # 3 done; 1 and 2 at their step 1
    app, queue = celery_app.make_app("memory://"), f"q-{uuid.uuid4().hex[:8]}"
    worker = Worker(app, store.engine.url.render_as_string(hide_password=False))
    with traversal.resource_locks(store) as conn:  # the task named 1 and 3 at step 0, 2 at step 1
        worker._repoll_lost("t1", {1: 0, 2: 1, 3: 0}, queue, conn)
    assert published(queue) == [("t1", [[1, 1]])]


def test_an_ended_traversal_keeps_no_nodes_and_a_late_task_finds_nothing_to_do(store):
    """Its nodes go with its end; a task redelivered after it (its worker lost once the end was
    committed) neither acts nor enqueues anything."""
    import uuid

    from stoker.dispatch import celery_app
    from stoker.dispatch.worker import Worker

    from .test_publish import published

    started(store, diamond())
    for resource_id, dependents in ((1, [2, 3]), (2, [4]), (3, [4])):
        end(store, resource_id, dependents)
    assert end(store, 4) == ([], True)
    traversal.mark_ended(store, "t1")
    with store.engine.connect() as conn:
        assert traversal.read(conn, "t1", [1, 2, 3, 4])[1] == {}
    app, queue = celery_app.make_app("memory://"), f"q-{uuid.uuid4().hex[:8]}"
    worker = Worker(app, store.engine.url.render_as_string(hide_password=False))
    worker.run_nodes("t1", [[4, 0], [2, 1]], queue, redelivered=True)
    assert published(queue) == []
    assert view(store).status == traversal.ENDED


def test_a_worker_forgets_the_stacks_of_traversals_that_ended(store):
    """Whichever worker ended them: the others find out when they next parse a stack."""
    from collections import OrderedDict

    from stoker.dispatch import celery_app
    from stoker.dispatch.worker import Worker

    stack_id = stack_in(store)
    for name in ("t1", "t2"):
        traversal.start(store, name, stack_id, "CREATE", diamond(), None, True)
    traversal.mark_ended(store, "t1")
    worker = Worker(celery_app.make_app("memory://"), store.engine.url.render_as_string(hide_password=False))
    worker._stacks = OrderedDict(t1="stack one", t2="stack two", gone="a stack whose traversal was deleted")
    with store.engine.connect() as conn:
        worker._forget_ended(conn)
    assert list(worker._stacks) == ["t2"]
