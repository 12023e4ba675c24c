"""A dependency graph of named nodes, and the one walker that runs it.

The walker knows nothing about resources: a node is any object with an
``async run()``.  Nodes start as soon as everything they require has
finished, as many at once as the graph allows (one asyncio task each, so
10,000 waiting nodes cost 10,000 small coroutines, not threads).  When a
node fails, no new node starts; the ones already running finish (or are
cancelled on timeout / user cancel).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Hashable, Iterable


@dataclass
class Graph:
    """``requires[n]`` = the nodes that must finish before ``n`` starts."""

    requires: dict[Hashable, set] = field(default_factory=dict)

    def add(self, node: Hashable, requires: Iterable[Hashable] = ()) -> None:
        self.requires.setdefault(node, set()).update(requires)

    def edge(self, node: Hashable, required: Hashable) -> None:
        self.add(node, (required,))

    def reversed(self) -> "Graph":
        """The same nodes, every edge turned round (delete runs this way)."""
        out = Graph({n: set() for n in self.requires})
        for node, reqs in self.requires.items():
            for req in reqs:
                if req in out.requires:
                    out.requires[req].add(node)
        return out

    def required_by(self) -> dict[Hashable, list]:
        dependents: dict[Hashable, list] = {n: [] for n in self.requires}
        for node, reqs in self.requires.items():
            for req in reqs:
                if req in dependents:
                    dependents[req].append(node)
        return dependents

    def order(self) -> list:
        """A topological order (requirements first); raises on a cycle."""
        remaining = {n: len([r for r in reqs if r in self.requires]) for n, reqs in self.requires.items()}
        dependents = self.required_by()
        ready = [n for n, count in remaining.items() if count == 0]
        result = []
        while ready:
            node = ready.pop()
            result.append(node)
            for child in dependents[node]:
                remaining[child] -= 1
                if remaining[child] == 0:
                    ready.append(child)
        if len(result) != len(self.requires):
            raise ValueError("dependency cycle among: "
                             + ", ".join(sorted(str(n) for n in self.requires if n not in result)))
        return result


class WalkFailed(Exception):
    """At least one node failed; ``failures`` maps node to its exception."""

    def __init__(self, failures: dict):
        self.failures = failures
        super().__init__("; ".join(f"{n}: {e}" for n, e in failures.items()))


async def walk(graph: Graph, run: Callable[[Hashable], Awaitable[Any]],
               should_stop: Callable[[], bool] = lambda: False) -> None:
    """Run ``run(node)`` for every node in dependency order, concurrently.

    Raises ``WalkFailed`` when any node raised; ``asyncio.CancelledError``
    propagates (after cancelling the running nodes) when the walk itself is
    cancelled, e.g. by a timeout.
    """
    remaining = {n: len([r for r in reqs if r in graph.requires]) for n, reqs in graph.requires.items()}
    dependents = graph.required_by()
    running: dict[asyncio.Task, Hashable] = {}
    failures: dict = {}
    all_done = asyncio.get_running_loop().create_future()  # cancelled with the walk, too

    def start(node: Hashable) -> None:
        task = asyncio.ensure_future(run(node))
        running[task] = node
        task.add_done_callback(finished)

    def finished(task: asyncio.Task) -> None:
        # Each end costs O(1), even with 10,000 nodes in flight, and the nodes it
        # frees start from here: a chain pays no extra pass of the event loop per step.
        node = running.pop(task)
        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if error is not None:
            failures[node] = error
        elif not failures and not all_done.done() and not should_stop():
            try:
                for child in dependents[node]:
                    remaining[child] -= 1
                    if remaining[child] == 0:
                        start(child)
            except BaseException as exc:  # noqa: BLE001 - the walk raises it, as its own
                all_done.set_exception(exc)
                return
        if not running and not all_done.done():
            all_done.set_result(None)

    for node, count in remaining.items():
        if count == 0:
            start(node)
    if not running:
        all_done.set_result(None)
    try:
        await all_done
    except BaseException:  # cancelled (a timeout, a cancel), or a node could not start
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    if failures:
        raise WalkFailed(failures)
