"""The order a parallel run hands tests out in: the long ones first, spread over the workers.

pytest-xdist's ``worksteal`` scheduler gives worker i the i-th of as many equal, contiguous slices
of the collected tests as there are workers; an idle worker then takes the back half of the longest
queue.  A test that runs for a minute and sits deep in a slice may start when the others are nearly
done and run alone at the end, with cores idle.  So the tests marked ``slow`` are dealt over the
slices' heads (a module's slow tests stay together: they may share a module-scoped server), and the
rest keep their order behind them.  Without xdist (one slice) the slow tests simply come first.
"""

from __future__ import annotations

from itertools import islice
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")


def slice_sizes(count: int, workers: int) -> list[int]:
    """How xdist's ``worksteal`` first splits ``count`` tests over ``workers`` idle workers."""
    sizes = []
    for done in range(workers):
        sizes.append((count - sum(sizes)) // (workers - done))
    return sizes


def slow_first(items: Sequence[Item], is_slow: Callable[[Item], bool], group_of: Callable[[Item], str],
               workers: int) -> list[Item]:
    """``items`` reordered: each group of slow ones (by ``group_of``, in the order first seen) at the
    head of the slice with the fewest slow ones so far, then the others in their order."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        if is_slow(item):
            groups.setdefault(group_of(item), []).append(item)
    slices: list[list[Item]] = [[] for _ in range(max(workers, 1))]
    for group in groups.values():
        min(slices, key=len).extend(group)
    others = (item for item in items if not is_slow(item))
    ordered: list[Item] = []
    for head, size in zip(slices, slice_sizes(len(items), len(slices))):
        ordered += head
        ordered += islice(others, max(size - len(head), 0))
    ordered += list(others)
    return ordered
