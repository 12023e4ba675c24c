"""A worker lost while it starts a nested stack's action on the workers, for the tests only.

Off unless ``STOKER_TEST_LOSE_NESTED_START`` is set (``ACTION:MOMENT:FILE``, MOMENT ``before`` or
``after``, ``empty``): then the worker whose process starts the nested stack's ACTION (CREATE,
UPDATE, DELETE, SUSPEND, RESUME) SIGKILLs its whole process group, as a lost machine, just before
that start (its owner resource's intent stored), just after it (its owner's poll not kept yet), or,
for a nested stack with no resources, between storing its traversal and ending it at once.
Once: FILE, made then, says it happened.
"""

import os

from stoker.dispatch import traversal
from stoker.dispatch.distributed import CeleryDispatch

from .losing import lose_once

WHEN = os.environ.get("STOKER_TEST_LOSE_NESTED_START", "")


def _lose(action: str, moment: str) -> None:
    lose_once(WHEN, action, moment)


def _losing(start):
    async def starting(self, engine, stack, action, *args):
        _lose(action, "before")
        await start(self, engine, stack, action, *args)
        _lose(action, "after")
    return starting


def _storing(start):
    def storing(store, traversal_id, stack_id, action, graph, *args, **kwargs):
        ready = start(store, traversal_id, stack_id, action, graph, *args, **kwargs)
        if not graph.requires:
            _lose(action, "empty")
        return ready
    return storing


if WHEN:
    traversal.start = _storing(traversal.start)
    CeleryDispatch.start_nested = _losing(CeleryDispatch.start_nested)
