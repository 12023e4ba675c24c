"""The order a parallel run hands tests out in (tests/slow_first.py): the slow ones at the heads of
the slices xdist's worksteal scheduler gives its workers, a module's slow ones together."""

from __future__ import annotations

from slow_first import slice_sizes, slow_first


def test_slices_are_cut_as_worksteal_cuts_them():
    assert slice_sizes(10, 4) == [2, 2, 3, 3]
    assert slice_sizes(3, 4) == [0, 1, 1, 1]
    assert sum(slice_sizes(3228, 4)) == 3228


def _order(items: list[str], workers: int) -> list[str]:
    return slow_first(items, lambda name: name.endswith("!"), lambda name: name.split(":")[0], workers)


def test_slow_groups_head_the_slices_and_the_rest_keep_their_order():
    items = [f"a:{i}" for i in range(6)] + ["b:1!", "b:2!", "b:3"] + [f"c:{i}" for i in range(6)] + ["d:1!"]
    ordered = _order(items, 2)
    assert sorted(ordered) == sorted(items)  # nothing lost, nothing twice
    first, second = ordered[:8], ordered[8:]  # slice_sizes(16, 2)
    assert first[:2] == ["b:1!", "b:2!"] and second[0] == "d:1!"  # each slice starts with its slow group
    rest = [name for name in ordered if not name.endswith("!")]
    assert rest == [name for name in items if not name.endswith("!")]


def test_one_worker_runs_the_slow_ones_first():
    assert _order(["a:1", "b:1!", "a:2", "c:1!"], 1) == ["b:1!", "c:1!", "a:1", "a:2"]


def test_more_slow_groups_than_workers_are_balanced_by_count():
    items = ["a:1!", "a:2!", "b:1!", "c:1!", "d:1"]
    ordered = _order(items, 2)
    assert ordered[:2] == ["a:1!", "a:2!"] and ordered[2:] == ["b:1!", "c:1!", "d:1"]
