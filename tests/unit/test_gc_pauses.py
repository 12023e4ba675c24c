"""The collector during big builds and actions: paused, frozen, and back to normal after."""

from __future__ import annotations

import gc
import weakref

import pytest

from stoker.template import loader
from stoker.template.loader import frozen_gc, paused_gc


@pytest.fixture
def no_collection_due(monkeypatch):
    """Earlier tests in this process may have left a full collection due: start from none (and
    from no floor: the test's first freeze counts what it froze)."""
    monkeypatch.setattr(loader, "_due", False)
    monkeypatch.setattr(loader, "_moved", 0)
    monkeypatch.setattr(loader, "_kept", 0)
    gc.unfreeze()


def test_an_action_keeps_what_existed_frozen_until_the_last_one_ends(no_collection_due):
    assert gc.get_freeze_count() == 0
    with frozen_gc():
        with frozen_gc():  # another thread's action, ending first
            pass
        assert gc.get_freeze_count() > 0
        with paused_gc():  # a nested stack loaded during the action
            built = [[] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    assert len(built) == 1000


def test_a_small_build_during_an_action_is_not_frozen_its_cycles_go_with_a_young_collection(no_collection_due):
    """A one-resource create builds a few hundred objects: the young collections take them, so
    its cyclic garbage needs no full collection (and a server's frozen startup stays frozen)."""
    with frozen_gc():
        with paused_gc():
            gone = _dropped_cycle()
        gc.collect(0)
        assert gone() is None


def test_a_server_keeps_its_startup_frozen_across_actions_small_and_big(no_collection_due):
    """``kept_frozen``: what the server held once started stays frozen when no action runs, after
    small actions and after a big build; the big build's cyclic garbage is still collected once
    enough went by, and the floor is frozen again after that collection."""
    with loader.kept_frozen():
        floor = gc.get_freeze_count()
        assert floor > 0
        with frozen_gc():
            with paused_gc():
                small = [[] for _ in range(100)]
        assert gc.get_freeze_count() == floor
        with frozen_gc():
            with paused_gc():
                gone = _dropped_cycle()
                big = _enough_for_a_full_collection()
        with frozen_gc():  # the next action runs the collection its end made due
            assert gone() is None
        assert gc.get_freeze_count() >= floor + len(big)
    assert gc.get_freeze_count() == 0 and gc.isenabled() and len(small) == 100


def test_outside_an_action_a_pause_leaves_nothing_frozen(no_collection_due):
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0


class Node:
    """An object that can refer to itself (cyclic garbage once dropped)."""


def _dropped_cycle() -> weakref.ref:
    """A weak reference to cyclic garbage just made (alive until a collection takes it)."""
    cycle = Node()
    cycle.me = cycle
    return weakref.ref(cycle)


def _enough_for_a_full_collection() -> list:
    """Objects built past the young generations enough to call for a full collection (with room
    for what the process frees meanwhile)."""
    return [[] for _ in range(max(loader.FULL_COLLECTION_AFTER, loader._kept // 4) + loader.SMALL_BUILD)]


def test_cyclic_garbage_built_while_actions_overlap_is_collected_before_they_all_end(no_collection_due):
    """A server's actions overlap without pause: what they froze or built paused must still be
    collected once enough of it went by the young generations, not only at a quiet moment --
    when the next action begins (an action's end only marks it due)."""
    with frozen_gc():  # an action running throughout
        with frozen_gc():  # another one, ending first
            with paused_gc():
                gone = _dropped_cycle()
                built = _enough_for_a_full_collection()
        assert gone() is not None and loader._due  # not at that action's end
        with frozen_gc():  # the next action
            assert gone() is None
            assert gc.get_freeze_count() > 0  # the running actions' objects are frozen again
        assert gc.isenabled()
    assert not loader._due and len(built) > loader.FULL_COLLECTION_AFTER


def test_a_process_whose_last_action_ends_skips_the_collection_due(no_collection_due):
    """A command ends after its one action: the garbage it left waits frozen, uncollected, for a
    next action that never comes (a big update's full collection was a fifth of its CPU)."""
    with frozen_gc():
        with paused_gc():  # its stack loaded
            gone = _dropped_cycle()
            built = _enough_for_a_full_collection()
    assert loader._due and gone() is not None and gc.get_freeze_count() > 0
    with paused_gc():  # loading a template is not an action: still frozen, still due
        loaded = [[] for _ in range(loader.SMALL_BUILD)]
    assert loader._due and gc.get_freeze_count() > 0
    with frozen_gc():
        assert gone() is None and not loader._due
    assert gc.get_freeze_count() == 0 and len(built) > loader.FULL_COLLECTION_AFTER and loaded


def test_a_big_build_freed_by_reference_counting_leaves_no_collection_due(no_collection_due):
    """An action's stacks are freed by reference counting at its end (``Stack.drop``): however
    many objects went by frozen, none stayed, so the next action starts without a full collection
    over everything the process holds."""
    with frozen_gc():
        with paused_gc():
            built = _enough_for_a_full_collection()
        assert loader._moved > loader.FULL_COLLECTION_AFTER
        del built
    assert not loader._due and loader._moved == 0 and gc.get_freeze_count() == 0
    with frozen_gc():
        with paused_gc():
            gone = _dropped_cycle()
            kept = _enough_for_a_full_collection()
    assert loader._due and gone() is not None  # what stayed frozen grew: a collection is due
    with frozen_gc():
        assert gone() is None
    assert len(kept) > loader.FULL_COLLECTION_AFTER
