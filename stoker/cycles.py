"""Cycles in a directed graph, each reported once: shared by templates and blueprints."""

from __future__ import annotations

from typing import Iterator


def find_cycles(edges: dict[str, list[str]]) -> Iterator[list[str]]:
    """Each cycle once, as ``[a, b, a]``; an iterative depth-first walk (no recursion limit)."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    reported: set[frozenset] = set()
    for start in edges:
        if state.get(start):
            continue
        stack = [(start, iter(edges[start]))]
        trail = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                trail.pop()
            elif state.get(child) == 1:
                cycle = trail[trail.index(child):] + [child]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    yield cycle
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(edges.get(child, ()))))
                trail.append(child)
