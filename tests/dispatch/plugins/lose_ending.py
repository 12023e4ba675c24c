"""A worker lost while it ends a traversal (records its stack's or execution's end), for the tests only.

Off unless ``STOKER_TEST_LOSE_ENDING`` is set (``MOMENT:ACTION:FILE``): then the worker ending a
traversal of ACTION (CREATE, UPDATE_CLEANUP, ROLLBACK..., EXECUTION) SIGKILLs its whole process
group, as a lost machine: at MOMENT ``end``, when its end is about to be recorded (the traversal
ENDING); at ``failed``, just after the failure that rolls it back is an event of the stack; at
``before`` or ``after``, just before or just after the traversal of ACTION that follows another
starts (the one before not marked ended yet); at ``ended``, just after an execution's ended event
is written (its status not yet).  Once: FILE, made then, says it happened.
"""

import os

from stoker.dispatch import execution_steps, stack_actions, traversal
from stoker.engine.stack import STACK_RESOURCE_TYPE
from stoker.store.execution_records import ExecutionRecords
from stoker.store.repository import Store
from stoker.workflows.executions import ENDED_EVENT

from .losing import lose_once

WHEN = os.environ.get("STOKER_TEST_LOSE_ENDING", "")


def _lose(moment: str, action: str) -> None:
    lose_once(WHEN, moment, action)


def _losing_end(end):
    def ending(engine, app, queue, traversal_id, record):
        _lose("end", traversal.outcome(engine.store, traversal_id)[0])
        end(engine, app, queue, traversal_id, record)
    return ending


def _losing_execution_end(end):
    def ending(executions, store, traversal_id, row):
        _lose("end", traversal.outcome(store, traversal_id)[0])
        end(executions, store, traversal_id, row)
    return ending


def _losing_ended_event(write_batch):
    def writing(records, execution_pk, deployment_pk, changes, events, *args, **kwargs):
        write_batch(records, execution_pk, deployment_pk, changes, events, *args, **kwargs)
        if any(event.get("event_type") in ENDED_EVENT.values() for event in events):
            _lose("ended", execution_steps.EXECUTION)
    return writing


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
    stack_actions.end_traversal = _losing_end(stack_actions.end_traversal)
    stack_actions.begin = _losing_begin(stack_actions.begin)
    execution_steps.end = _losing_execution_end(execution_steps.end)
    ExecutionRecords.write_batch = _losing_ended_event(ExecutionRecords.write_batch)
