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


#: the requirements of every node that has none: one shared object, not an empty set each (an
#: execution of 100,000 no-op instances has 100,000 such nodes)
NOTHING: frozenset = frozenset()


@dataclass
class Graph:
    """``requires[n]`` = the nodes that must finish before ``n`` starts (read-only: change them with ``add``)."""

    requires: dict[Hashable, set | frozenset] = field(default_factory=dict)

    def add(self, node: Hashable, requires: Iterable[Hashable] = ()) -> None:
        current = self.requires.get(node)
        if current is None or current is NOTHING:
            self.requires[node] = set(requires) or NOTHING
        else:
            current.update(requires)

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


#: nodes finished at once (``run_now``) the walker starts before it lets the event loop run again: the
#: writer's timer, the lease's beat and a cancel request are heard between bursts
BURST = 500


async def walk(graph: Graph, run: Callable[[Hashable], Awaitable[Any]],
               should_stop: Callable[[], bool] = lambda: False,
               run_now: Callable[[Hashable], bool] | None = None) -> None:
    """Run ``run(node)`` for every node in dependency order, concurrently.

    ``run_now(node)``, when given, is tried first: True means the node is done
    already (it had nothing to wait for), so it costs no task; False, that
    ``run(node)`` runs it.  Raises ``WalkFailed`` when any node raised;
    ``asyncio.CancelledError`` propagates (after cancelling the running nodes)
    when the walk itself is cancelled, e.g. by a timeout.
    """
    remaining = {n: len([r for r in reqs if r in graph.requires]) for n, reqs in graph.requires.items()}
    dependents = graph.required_by()
    running: dict[asyncio.Task, Hashable] = {}
    failures: dict = {}
    loop = asyncio.get_running_loop()
    all_done = loop.create_future()  # cancelled with the walk, too
    #: nodes whose requirements have all finished, not started yet
    ready = [node for node, count in remaining.items() if count == 0]
    later: list[asyncio.Handle] = []  # the next burst, when one is scheduled

    def going() -> bool:
        return not failures and not all_done.done() and not should_stop()

    def release(node: Hashable) -> None:
        for child in dependents[node]:
            remaining[child] -= 1
            if remaining[child] == 0:
                ready.append(child)

    def start(node: Hashable) -> None:
        if run_now is not None:
            try:
                done_now = run_now(node)
            except Exception as exc:  # noqa: BLE001 - the node failed, as a task of it would have
                failures[node] = exc
                return
            if done_now:
                release(node)
                return
        task = asyncio.ensure_future(run(node))
        running[task] = node
        task.add_done_callback(finished)

    def start_ready() -> None:
        # Each end costs O(1), even with 10,000 nodes in flight, and the nodes it frees start
        # from here: a chain pays no extra pass of the event loop per step.
        budget = BURST
        try:
            while ready and budget and going():
                budget -= 1
                start(ready.pop())
        except BaseException as exc:  # noqa: BLE001 - the walk raises it, as its own
            if not all_done.done():
                all_done.set_exception(exc)
            return
        if ready and not budget and going() and not later:
            later.append(loop.call_soon(next_burst))
        elif not running and not later and not all_done.done():
            all_done.set_result(None)

    def next_burst() -> None:
        later.clear()
        start_ready()

    def finished(task: asyncio.Task) -> None:
        node = running.pop(task)
        error = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if error is not None:
            failures[node] = error
        elif going():
            release(node)
        start_ready()

    try:
        start_ready()
        try:
            await all_done
        except BaseException:  # cancelled (a timeout, a cancel), or a node could not start
            for handle in later:
                handle.cancel()
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
    finally:
        # nothing calls them any more (no task runs, no burst waits); they refer to each other,
        # a cycle that held ``run`` (and so the whole stack) until the cyclic collector's next pass
        del start, start_ready, next_burst, finished
    if failures:
        raise WalkFailed(failures)
