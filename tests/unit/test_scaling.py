"""The arithmetic of scaling groups: adjustments, rolling batches, member order, cooldown."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.resources.builtin.scaling import (CHANGE_IN_CAPACITY, EXACT_CAPACITY, PERCENT_CHANGE_IN_CAPACITY,
                                              cooldown_metadata, cooldown_refusal, new_capacity, next_members,
                                              rolling_batches)


@pytest.mark.parametrize("current, adjustment, kind, step, expected", [
    (3, 1, CHANGE_IN_CAPACITY, None, 4),
    (3, -2, CHANGE_IN_CAPACITY, None, 1),
    (3, 5, EXACT_CAPACITY, None, 5),
    (10, 25, PERCENT_CHANGE_IN_CAPACITY, None, 12),   # 2.5 -> 2 (towards zero above one member)
    (10, -25, PERCENT_CHANGE_IN_CAPACITY, None, 8),   # -2.5 -> -2
    (3, 10, PERCENT_CHANGE_IN_CAPACITY, None, 4),     # 0.3 -> 1 (away from zero under one member)
    (3, -10, PERCENT_CHANGE_IN_CAPACITY, None, 2),
    (10, 10, PERCENT_CHANGE_IN_CAPACITY, 3, 13),      # 1 member, but at least 3
    (10, -10, PERCENT_CHANGE_IN_CAPACITY, 3, 7),
    (10, 50, PERCENT_CHANGE_IN_CAPACITY, 3, 15),      # 5 members: more than the step already
])
def test_new_capacity_of_each_adjustment_type(current, adjustment, kind, step, expected):
    assert new_capacity(current, adjustment, kind, step, 0, 100) == expected


@pytest.mark.parametrize("adjustment, kind, expected", [
    (10, CHANGE_IN_CAPACITY, 5), (-10, CHANGE_IN_CAPACITY, 2),
    (9, EXACT_CAPACITY, 5), (0, EXACT_CAPACITY, 2),
    (500, PERCENT_CHANGE_IN_CAPACITY, 5), (-90, PERCENT_CHANGE_IN_CAPACITY, 2),
])
def test_new_capacity_stays_within_the_bounds(adjustment, kind, expected):
    assert new_capacity(3, adjustment, kind, None, 2, 5) == expected


def test_rolling_batches_replace_in_place_when_nothing_must_stay_in_service():
    assert list(rolling_batches(4, 4, 2, 0)) == [(4, 2), (4, 2)]
    assert list(rolling_batches(5, 5, 2, 0)) == [(5, 2), (5, 2), (5, 1)]


def test_rolling_batches_grow_the_group_to_keep_members_in_service():
    # all four must serve: two new members first, then two old ones change, then two old ones go
    assert list(rolling_batches(4, 4, 2, 4)) == [(6, 2), (6, 2), (4, 0)]


def test_rolling_batches_of_an_empty_group():
    assert list(rolling_batches(0, 0, 1, 0)) == []


@given(target=st.integers(0, 12), batch=st.integers(1, 5), in_service=st.integers(0, 12))
def test_rolling_batches_end_with_every_member_updated(target, batch, in_service):
    steps = list(rolling_batches(target, target, batch, in_service))
    assert sum(changes for _, changes in steps) >= target
    assert all(changes <= batch for _, changes in steps)
    assert not steps or steps[-1][0] == target
    # the members serving (not being changed) never drop below what was asked, nor below what exists
    assert all(size - changes >= min(in_service, target) for size, changes in steps)


def _names():
    counter = itertools.count()
    return lambda: f"n{next(counter)}"


def test_next_members_grow_with_new_names_and_keep_the_others():
    members = [("a", "old"), ("b", "old")]
    assert next_members(members, "old", 4, 0, _names()) == [("a", "old"), ("b", "old"), ("n0", "old"), ("n1", "old")]


def test_next_members_shrink_by_removing_the_oldest():
    members = [("a", "d"), ("b", "d"), ("c", "d")]
    assert next_members(members, "d", 1, 0, _names()) == [("c", "d")]


def test_next_members_change_the_oldest_first_and_move_them_to_the_young_end():
    members = [("a", "old"), ("b", "old"), ("c", "old")]
    assert next_members(members, "new", 3, 2, _names()) == [("c", "old"), ("a", "new"), ("b", "new")]
    # members that have the new definition already are not counted as changes
    done = [("a", "new"), ("b", "old"), ("c", "old")]
    assert next_members(done, "new", 3, 1, _names()) == [("a", "new"), ("c", "old"), ("b", "new")]


def test_next_members_count_new_members_as_changes():
    members = [("a", "old")]
    assert next_members(members, "new", 2, 1, _names()) == [("a", "old"), ("n0", "new")]


def test_cooldown_refuses_until_its_end_then_allows():
    now = datetime(2026, 1, 1, 12, 0, 0)
    metadata = cooldown_metadata({"scaling_in_progress": True}, 60, "change_in_capacity : 1", now=now)
    assert metadata == {"cooldown_end": {"2026-01-01T12:01:00": "change_in_capacity : 1"},
                        "scaling_in_progress": False}
    assert cooldown_refusal(metadata, 60, now + timedelta(seconds=59)) == "due to cooldown, cooldown 60"
    assert cooldown_refusal(metadata, 60, now + timedelta(seconds=61)) is None


def test_cooldown_end_never_moves_back_and_an_unchanged_size_sets_none():
    now = datetime(2026, 1, 1, 12, 0, 0)
    long = cooldown_metadata({}, 600, "first", now=now)
    shorter = cooldown_metadata(long, 10, "second", now=now + timedelta(seconds=1))
    assert list(shorter["cooldown_end"]) == list(long["cooldown_end"])
    unchanged = cooldown_metadata({"scaling_in_progress": True}, 60, "x", size_changed=False, now=now)
    assert unchanged == {"scaling_in_progress": False}
    assert cooldown_refusal(unchanged, 60, now) is None

