"""The collector during big builds and actions: paused, frozen, and back to normal after."""

from __future__ import annotations

import gc

from stoker.template.loader import frozen_gc, paused_gc


def test_an_action_keeps_what_existed_frozen_until_the_last_one_ends():
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


def test_outside_an_action_a_pause_leaves_nothing_frozen():
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0
