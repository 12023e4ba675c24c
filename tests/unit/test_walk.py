"""The graph walker: order, concurrency, failures and cancels (``stoker.engine.graph.walk``)."""

from __future__ import annotations

import asyncio

import pytest

from stoker.engine.graph import Graph, WalkFailed, walk


def _graph(edges: dict) -> Graph:
    graph = Graph()
    for node, requires in edges.items():
        graph.add(node, requires)
    return graph


def test_every_node_starts_after_what_it_requires_and_independent_ones_overlap():
    graph = _graph({"a": [], "b": [], "c": ["a", "b"], "d": ["c"], "e": ["a"]})
    events: list[tuple[str, str]] = []

    async def run(node):
        events.append(("start", node))
        await asyncio.sleep(0.01 if node == "b" else 0)
        events.append(("end", node))

    asyncio.run(walk(graph, run))
    position = {event: i for i, event in enumerate(events)}
    for node, requires in graph.requires.items():
        for required in requires:
            assert position[("end", required)] < position[("start", node)], (required, node)
    assert position[("start", "b")] < position[("end", "a")]  # a and b ran at once
    assert position[("start", "e")] < position[("end", "b")]  # e did not wait for b


def test_an_empty_graph_and_a_long_chain():
    asyncio.run(walk(Graph(), lambda node: asyncio.sleep(0)))
    order: list[int] = []

    async def run(node):
        order.append(node)

    asyncio.run(walk(_graph({i: [i - 1] if i else [] for i in range(2000)}), run))
    assert order == list(range(2000))


def test_after_a_failure_nothing_new_starts_and_running_nodes_finish():
    graph = _graph({"bad": [], "slow": [], "after_bad": ["bad"], "after_slow": ["slow"]})
    started, finished = [], []

    async def run(node):
        started.append(node)
        if node == "bad":
            raise ValueError("broken")
        await asyncio.sleep(0.02)
        finished.append(node)

    with pytest.raises(WalkFailed) as info:
        asyncio.run(walk(graph, run))
    assert list(info.value.failures) == ["bad"] and isinstance(info.value.failures["bad"], ValueError)
    assert sorted(started) == ["bad", "slow"] and finished == ["slow"]


def test_a_cancelled_walk_cancels_its_nodes_and_starts_no_more():
    # "stubborn" swallows the cancel and ends normally: what it frees must not start any more
    graph = _graph({"long": [], "stubborn": [], "after_long": ["long"], "after_stubborn": ["stubborn"]})
    started, cancelled = [], []

    async def run(node):
        started.append(node)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(node)
            if node != "stubborn":
                raise

    async def main():
        task = asyncio.ensure_future(walk(graph, run))
        while len(started) < 2:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert sorted(cancelled) == ["long", "stubborn"]
    assert sorted(started) == ["long", "stubborn"]


def test_should_stop_stops_new_starts():
    graph = _graph({"a": [], "b": ["a"], "c": ["b"]})
    started: list[str] = []

    async def run(node):
        started.append(node)

    asyncio.run(walk(graph, run, should_stop=lambda: "b" in started))
    assert started == ["a", "b"]


def test_nodes_done_at_once_cost_no_task_and_keep_the_order():
    # even nodes are done at once (run_now), odd ones need a task: one chain of both kinds,
    # and a wide layer of instant nodes after it
    graph = _graph({**{i: [i - 1] if i else [] for i in range(40)}, **{f"w{i}": [39] for i in range(2000)}})
    order: list = []
    tasks = set()

    def run_now(node):
        if isinstance(node, int) and node % 2:
            return False
        order.append(node)
        return True

    async def run(node):
        tasks.add(asyncio.current_task())
        order.append(node)

    asyncio.run(walk(graph, run, run_now=run_now))
    assert order[:40] == list(range(40))
    assert sorted(order[40:]) == sorted(f"w{i}" for i in range(2000))
    assert len(tasks) == 20  # only the odd ones ran as tasks


def test_a_long_run_of_instant_nodes_lets_the_event_loop_run_between_bursts():
    # 5,000 nodes done at once: a timer set before the walk fires before the walk ends, so the
    # writer's commits, the lease's beat and a cancel are heard meanwhile
    graph = _graph({i: [] for i in range(5000)})
    seen_at: list[int] = []
    done: list[int] = []

    async def main():
        asyncio.get_running_loop().call_soon(lambda: seen_at.append(len(done)))
        await walk(graph, lambda node: asyncio.sleep(0), run_now=lambda node: done.append(node) is None)

    asyncio.run(main())
    assert len(done) == 5000 and 0 < seen_at[0] < 5000


def test_an_instant_node_that_raises_fails_the_walk_and_stops_new_starts():
    graph = _graph({"a": [], "b": ["a"], "c": ["b"]})
    started: list[str] = []

    def run_now(node):
        started.append(node)
        if node == "b":
            raise ValueError("broken at once")
        return True

    with pytest.raises(WalkFailed) as info:
        asyncio.run(walk(graph, lambda node: asyncio.sleep(0), run_now=run_now))
    assert list(info.value.failures) == ["b"] and started == ["a", "b"]


def test_should_stop_stops_instant_nodes_too():
    graph = _graph({"a": [], "b": ["a"], "c": ["b"]})
    started: list[str] = []
    asyncio.run(walk(graph, lambda node: asyncio.sleep(0), should_stop=lambda: "b" in started,
                     run_now=lambda node: started.append(node) is None))
    assert started == ["a", "b"]
