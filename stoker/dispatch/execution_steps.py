"""A workflow execution's steps run by ``stoker worker`` processes: one step per task (the
stack actions' task, ``worker.run_nodes``, with batches of one).

The asking process plans the execution as it does in-process
(``Executions.start``: the graph, the execution row, what a scale adds) and
stores a traversal whose nodes are the graph's steps, numbered in the order
of their keys.  A worker builds the same graph again from the execution's
saved start (as a resume does), runs its one step with a ctx server of its
own (the script runs on that worker's host and its ctx calls go to that
worker), and ends the node with the same claim, count and end statements as
a stack's resources.  The worker that ends the last step ends the execution.

An operation to retry (its script failed, or asked for a retry) does not
sleep through its interval on the worker: the step parks with a countdown,
and the task that comes back runs the retry (the node's step counts them).
So does the wait of uninstall's services between two looks at the children
(``workflows/services.py``): a waiting level holds no worker slot.  While a
step is parked its execution's heartbeat is cleared (``StepWorker.parked``):
the task that comes back is in the broker, perhaps held by a worker busy with
a long step, and the start bound must not fail the execution meanwhile.

A traversal whose execution is no longer its own (ended meanwhile: failed by
the start bound, ``execution_gone``, while its first step waited in the
queue; or resumed by another traversal) runs nothing more: it stops, and its
end leaves the record as it is.

What a lost worker leaves: a step whose operation recorded its success
(``task_succeeded``) does not run again; one whose worker died during its
operation runs again from its start on another worker (its script's ctx
calls fail once its worker is gone, so a script that talks to ctx after
acting does not also finish behind the new run's back).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import InterfaceError, OperationalError

from stoker.dispatch import celery_app, traversal
from stoker.dispatch.stack_actions import StartFailed, traversal_owner
from stoker.dispatch.step import STEP_PER_TASK
from stoker.engine.graph import Graph
from stoker.store.blueprint_records import recorded_commands
from stoker.store.execution_records import ExecutionRecords
from stoker.store.models import Execution, utcnow
from stoker.workflows import execution_groups
from stoker.workflows.execution_runner import StepFailed
from stoker.workflows.executions import (ENDED_EVENT, LOCAL_ALLOWED, Executions, ended_event, started_message,
                                         stop_scripts_left)

#: the traversal action of an execution's steps
EXECUTION = "EXECUTION"
#: executions whose graphs a worker process keeps (built once, not per task)
CACHED_GRAPHS = 16
EXECUTIONS = Execution.__table__
LOG = logging.getLogger("stoker.dispatch")


def numbered(graph: Graph) -> tuple[list, Graph]:
    """The steps in the order of their keys, and the graph over their numbers (the nodes)."""
    steps = sorted(graph.requires, key=lambda step: step.key)
    number = {step: index for index, step in enumerate(steps)}
    return steps, Graph({number[step]: {number[r] for r in requires} for step, requires in graph.requires.items()})


def start(executions: Executions, app: Any, queue: str, row: dict, deployment_row: dict, model: Any, graph: Graph,
          resumed: bool) -> None:
    """Hand the execution to the workers: its owner is now the traversal, its ready steps enqueued."""
    records = executions.records
    traversal_id = str(uuid.uuid4())
    records.update_execution(row["pk"], owner=traversal_owner(traversal_id), heartbeat_at=utcnow())
    _event(executions, row, deployment_row, model,
           lambda runner: runner.row("cloudify_event", started_message(row, resumed), event_type="workflow_started"))
    try:
        _steps, nodes = numbered(graph)
        ready = traversal.start(records, traversal_id, None, EXECUTION, nodes, None, True, execution_pk=row["pk"])
        if not nodes.requires:
            end(executions, records, traversal_id, row)
            return
        celery_app.publish(app, queue, traversal_id, ready, batched=False)
    except Exception as exc:  # the broker or the database is down: the execution must not stay "started"
        reason = f"the execution could not be started on the workers: {type(exc).__name__}: {exc}"
        traversal.stop(records, traversal_id, reason, interrupt=True)
        records.update_execution(row["pk"], status="failed", error=reason, ended_at=utcnow(), owner=None)
        raise StartFailed(reason) from exc


def _event(executions: Executions, row: dict, deployment_row: dict, model: Any, make: Any) -> None:
    """One event of the execution itself (its start or end), written at once."""
    runner = executions.runner(row, deployment_row, model, frozenset())
    runner.writer.close()
    executions.records.write_batch(row["pk"], deployment_row["pk"], {}, [make(runner)])


def end(executions: Executions, store: Any, traversal_id: str, row: dict) -> None:
    """The execution's end, from the stored state: cancelled when asked to, failed when a step
    failed (a scale's deployment modification rolled back, after what it added is uninstalled), else
    terminated (and a scale's deployment modification finished: its removed instances go).

    Safe to run again whole, as a task that finds a lost worker's end half
    done does: the ended event is written unless it is there, then the
    status (a watcher that sees the status finds the event), a scale's
    modification is finished once, and the traversal is marked
    ended last.  An execution that is no longer the traversal's (ended
    meanwhile, or resumed by another) keeps its record as it is.
    """
    _action, stopping, _ = traversal.outcome(store, traversal_id)
    records = executions.records
    row = records.get_execution(row["project_id"], row["id"])
    deployment_row = records.get_deployment(row["project_id"], row["deployment_id"])
    status = row["status"]
    if status not in ENDED_EVENT and row["owner"] == traversal_owner(traversal_id):  # not recorded yet, still ours
        status = "cancelled" if row["cancel_request"] else "failed" if stopping else "terminated"
        error = stopping if status == "failed" else ""
        if status == "terminated":  # its end's changes made before its status says so (idempotent: finished once)
            error = executions.succeeded(deployment_row, (row.get("resume_data") or {}).get("memo") or {})
            status = "failed" if error else status
        elif status == "failed":  # a scale's rollback (``rollback_if_failed``) runs here, before the failure shows
            memo = (row.get("resume_data") or {}).get("memo") or {}
            executions.run_beside(row, deployment_row, executions.model_of(deployment_row),
                                  lambda runner: executions.roll_back_failed(row, runner, memo))
        if not records.has_event(row["pk"], ENDED_EVENT[status]):
            _event(executions, row, deployment_row, executions.model_of(deployment_row),
                   lambda runner: ended_event(runner, row, status, error))
        records.update_execution(row["pk"], status=status, error=error, ended_at=utcnow(), owner=None,
                                 cancel_request=None)
    traversal.mark_ended(store, traversal_id)
    executions.start_queued(deployment_row)
    execution_groups.wake(executions, row)


class StepWorker:
    """The execution side of a worker process (``worker`` gives the app and the engine)."""

    def __init__(self, worker: Any):
        self.worker = worker
        self._steps: OrderedDict = OrderedDict()

    @property
    def store(self) -> Any:
        return self.worker.engine.store

    def notice_cancel(self, view: Any) -> bool:
        """The execution's heartbeat; a cancel asked for it stops the traversal (nothing starts any
        more; a forced one stops the rest), as does the execution no longer being this traversal's.
        Whether it stopped it now."""
        executions, row = self._execution(view)
        if row["owner"] != executions.owner:
            if view.interrupt:
                return False
            reason = f"execution {row['id']} is {row['status']} and no longer run by this traversal"
            LOG.warning("traversal %s stops without running its steps: %s", view.traversal_id, reason)
            traversal.stop(self.store, view.traversal_id, reason, interrupt=True)
            return True
        request = executions.records.heartbeat(view.execution_pk, executions.owner)
        if request == "force" and not view.interrupt or request and view.stopping is None:
            traversal.stop(self.store, view.traversal_id, "cancelled", interrupt=request == "force")
            return True
        return False

    def run(self, view: Any, number: int, retry: int, taken_over: bool = False) -> bool:
        """Run the step's operation with the deployment as it is now (the execution's heartbeat going
        on, a forced cancel killing its scripts); False when it failed.  An operation to retry later
        parks the step (``Parked``): the task that comes back goes on at its ``retry``.  A step
        ``taken_over`` (begun by another task, perhaps of a lost worker) first has the scripts that
        dead processes left running for the execution killed, so that it never runs beside them."""
        executions, row = self._execution(view)
        if taken_over:
            stop_scripts_left(row)
        return self._run(view, number, retry, executions, row)

    def parked(self, view: Any) -> None:
        """The step waits for its countdown task, which the broker keeps until a worker runs it: till then
        the execution's heartbeat is not judged (none: ``execution_gone``), so a busy worker holding that
        task past the start bound (while its slot runs a long step, a child's) does not fail it."""
        ExecutionRecords(self.store).update_execution(view.execution_pk, by_owner=traversal_owner(view.traversal_id),
                                                      heartbeat_at=None)

    def end(self, view: Any) -> None:
        executions, row = self._execution(view)
        end(executions, self.store, view.traversal_id, row)

    def _execution(self, view: Any) -> tuple[Executions, dict]:
        execution_pk, owner = view.execution_pk, traversal_owner(view.traversal_id)
        with self.store.engine.connect() as conn:
            project_id, execution_id = conn.execute(select(EXECUTIONS.c.project_id, EXECUTIONS.c.id)
                                                    .where(EXECUTIONS.c.pk == execution_pk)).one()
        executions = Executions(self.store, project_id, owner, self.worker.engine.dispatch)  # queued ones go on
        row = executions.records.get_execution(project_id, execution_id)
        executions.local_allowed = (row.get("resume_data") or {}).get(LOCAL_ALLOWED, True)  # as its starter's
        return executions, row

    def wind_down(self, view: Any, number: int) -> None:
        """A begun step whose traversal was interrupted (a forced cancel, the execution no longer its
        own) runs no more: what it holds between two tasks is let go (``Runner.wind_down``), unless
        another traversal runs the execution now (a resume: what the step held is that one's)."""
        executions, row = self._execution(view)
        if row["owner"] not in (None, executions.owner):
            return
        try:
            step, runner = self._runner(view.traversal_id, number, executions, row)
            try:
                asyncio.run(runner.wind_down(step))
            finally:
                runner.writer.close()
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task is retried
        except Exception:  # the step ends stopped whatever its letting go met
            LOG.exception("traversal %s: step %s could not let go of what it held", view.traversal_id, number)

    def _runner(self, traversal_id: str, number: int, executions: Executions, row: dict) -> tuple[Any, Any]:
        """The execution's step ``number`` and a runner of it over the deployment as it is now."""
        records = executions.records
        deployment_row = records.get_deployment(row["project_id"], row["deployment_id"])
        step = self._steps_of(traversal_id, executions, row, deployment_row)[number]
        return step, executions.runner(row, deployment_row, executions.model_of(deployment_row),
                                       frozenset(records.finished_tasks(row["pk"])))

    def _run(self, view: Any, number: int, retry: int, executions: Executions, row: dict) -> bool:
        traversal_id = view.traversal_id
        step, runner = self._runner(traversal_id, number, executions, row)
        runner.retrying, runner.pause = {step.key: retry}, STEP_PER_TASK.pause
        runner.stop_requested = view.stopping is not None  # a graceful cancel: what waits (the services) stops
        runner.marker = self._recorded(executions, row)["marker"]
        try:
            asyncio.run(executions.watched(row, runner, runner.run_one(step)))
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task is retried, the step not failed
        except asyncio.CancelledError:  # a forced cancel killed its scripts
            traversal.stop(self.store, traversal_id, "cancelled", interrupt=True)
            return False
        except Exception as exc:  # a failed operation, or anything a bug raises: the execution fails
            reason = str(exc) if isinstance(exc, StepFailed) else runner.mask(f"{type(exc).__name__}: {exc}")
            traversal.stop(self.store, traversal_id, reason, interrupt=False)
            return False
        finally:
            runner.writer.close()
        return True

    def _recorded(self, executions: Executions, row: dict) -> dict:
        """The record of the scripts this worker process runs for the execution, kept in the execution
        (once) before any of them starts: whoever acts on it after this process died kills them."""
        commands = executions.commands(row, self.worker.engine.engine_id)
        if commands not in recorded_commands(row.get("resume_data")):
            executions.records.add_commands(row["pk"], commands)
        return commands

    def _steps_of(self, traversal_id: str, executions: Executions, row: dict, deployment_row: dict) -> list:
        """The execution's steps by number, built once per worker process."""
        steps = self._steps.pop(traversal_id, None)
        if steps is None:
            steps, _nodes = numbered(executions.graph_as_started(row, deployment_row)[1])
        self._steps[traversal_id] = steps
        while len(self._steps) > CACHED_GRAPHS:
            self._steps.popitem(last=False)
        return steps

