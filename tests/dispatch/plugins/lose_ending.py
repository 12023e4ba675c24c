"""A worker lost while it ends a traversal (records its stack's end), for the tests only.

Off unless ``STOKER_TEST_LOSE_ENDING`` is set (``MOMENT:ACTION:FILE``): then the worker ending a
traversal of ACTION (CREATE, UPDATE_CLEANUP, ROLLBACK...) SIGKILLs its whole process group, as a
lost machine: at MOMENT ``end``, when its end is about to be recorded (the traversal ENDING); at
``failed``, just after the failure that rolls it back is an event of the stack; at ``before`` or
``after``, just before or just after the traversal of ACTION that follows another starts (the one
before not marked ended yet).  Once: FILE, made then, says it happened.
"""

import os

from stoker.dispatch import lifecycle, traversal
from stoker.engine.stack import STACK_RESOURCE_TYPE
from stoker.store.repository import Store

from .losing import lose_once

WHEN = os.environ.get("STOKER_TEST_LOSE_ENDING", "")


def _lose(moment: str, action: str) -> None:
    lose_once(WHEN, moment, action)


def _losing_end(end):
    def ending(engine, app, queue, traversal_id, record):
        _lose("end", traversal.outcome(engine.store, traversal_id)[0])
        end(engine, app, queue, traversal_id, record)
    return ending


def _losing_begin(begin):
    def beginning(engine, app, queue, traversal_id, stack_id, action, *args):
        _lose("before", action)
        begin(engine, app, queue, traversal_id, stack_id, action, *args)
        _lose("after", action)
    return beginning


def _losing_event(add_event):
    def adding(store, stack_id, **fields):
        added = add_event(store, stack_id, **fields)
        if (fields.get("resource_type"), fields.get("status")) == (STACK_RESOURCE_TYPE, "FAILED"):
            _lose("failed", fields["action"])
        return added
    return adding


if WHEN:
    Store.add_event = _losing_event(Store.add_event)
    lifecycle.end_traversal = _losing_end(lifecycle.end_traversal)
    lifecycle.begin = _losing_begin(lifecycle.begin)
