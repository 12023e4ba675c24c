"""``Engine.executions``: start, watch, cancel and resume workflow executions on deployments.

An execution runs in the process that starts (or resumes) it, on one
asyncio loop: the runner walks the graph while a watcher keeps the
execution's heartbeat fresh and looks for a cancel request.  Another
process sees it through the store; if the running process dies, the next
reader finds the owner gone and marks the execution interrupted, and
``resume`` continues it without repeating finished operations.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Awaitable, Callable

from stoker import secretbox
from stoker.blueprint.blueprints import BlueprintService
from stoker.blueprint.state import tenant_of
from stoker.dispatch.inprocess import InProcess
from stoker.engine.graph import WalkFailed
from stoker.errors import Conflict, NotFound, StokerError
from stoker import lease
from stoker.store.blueprint_records import recorded_commands
from stoker.store.ended_executions import ENDED, EndedExecutions
from stoker.store.execution_records import ACTIVE, ExecutionRecords, DeploymentRowChanges, PlanChanged
from stoker.store.instance_health import implied
from stoker.store.locks import execution_gone
from stoker.store.modification_records import FINISHED, STARTED, ModificationRefused
from stoker.store.models import iso_time, utcnow
from stoker.workflows import execution_groups
from stoker.workflows.deployment_updates import DeploymentUpdates
from stoker.workflows.builtin import (declaration, graph_builder, ignored_failures, kwargs_override_refused,
                                      operation_kwargs)
from stoker.workflows.workflow_error import WorkflowError
from stoker.blueprint.secrets import masker, secret_values
from stoker.resources import processes
from stoker.started import Started, in_thread
from stoker.workflows.live_evaluator import LiveEvaluator, LiveState
from stoker.workflows.manager import LocalManager
from stoker.workflows.modifications import Modifications, scale_context, scale_nodes
from stoker.workflows.model import Deployment, Instance
from stoker.workflows.operations import RetryPolicy
from stoker.workflows.parameters import workflow_parameters
from stoker.workflows.updating import WORKFLOW as UPDATE
from stoker.workflows.schedule_rules import parse_time
from stoker.workflows.schedules import Schedules
from stoker.workflows.execution_runner import DRY_RUN_MARK, Runner, first_failure
from stoker.workflows.writer import BatchWriter

#: an event's fields a followed execution's line shows (``Executions.event_lines``)
LINE_FIELDS = ("timestamp", "type", "event_type", "level", "node_instance_id", "operation", "message")


#: in an execution's ``resume_data``: whether its starter's policy let it run processes on the host (the
#: workers running its steps hold the executions its operations start, a Component's child, to it too)
LOCAL_ALLOWED = "local_allowed"


class Executions:
    def __init__(self, store: Any, project_id: str, owner: str, dispatch: Any = None, local_allowed: bool = True):
        self.records = ExecutionRecords(store)
        self.store = store
        #: whether operations may run as processes on this host (the API's policy for the project): the
        #: executions the manager's own operations start (a Component's child) are held to it too
        self.local_allowed = local_allowed
        self.project_id = project_id
        self.owner = owner
        #: where the steps run: here (``InProcess``) or on workers (``stoker.dispatch``)
        self.dispatch = dispatch or InProcess()
        #: set when the process serving this execution stops (``stoker api``): it is cancelled, its
        #: scripts killed, so the server stops at once; ``resume`` continues it later
        self.stopping: Any = None
        #: told the id of the execution ``start`` or ``resume`` stored (``begin``: it shows then)
        self.announce: Callable[[str], None] = lambda _execution_id: None
        #: how an execution group's next executions are handed to threads (the API: the tenant's action pool)
        self.submit: Callable[[Callable[[], Any]], Any] = execution_groups.in_kept_thread

    @property
    def updates(self) -> DeploymentUpdates:
        """Deployment updates: each runs as an ``update`` execution of this service."""
        return DeploymentUpdates(self)

    @property
    def modifications(self) -> Modifications:
        """Deployment modifications: a scale's, or one a plugin or custom workflow starts."""
        return Modifications(self)

    # -- reading --------------------------------------------------------------------------------
    def get(self, execution_id: str) -> dict:
        return view(self._fresh(self.records.get_execution(self.project_id, execution_id, light=True)))

    def list(self, deployment_id: str | None = None) -> list[dict]:
        pk = self._deployment(deployment_id)["pk"] if deployment_id else None
        return [view(self._fresh(row)) for row in self.records.list_executions(self.project_id, pk, light=True)]

    def events(self, execution_id: str, include_logs: bool = False, since: int = 0,
               limit: int | None = None) -> list[dict]:
        """The execution's events (from the ``since``-th on, at most ``limit``: what a follower has not seen)."""
        row = self._fresh(self.records.get_execution(self.project_id, execution_id, light=True))
        return [event_view(e, row) for e in self.records.events(row["pk"], include_logs, since, limit)]

    def event_lines(self, execution_id: str, since: int = 0, limit: int | None = None) -> list[dict]:
        """What a follower prints of the execution's events and logs (from the ``since``-th on, at most
        ``limit``): a line's fields only, the rest not read, so following costs less than the execution."""
        row = self._fresh(self.records.get_execution(self.project_id, execution_id, light=True))
        lines = self.records.events(row["pk"], True, since, limit, columns=LINE_FIELDS)
        for line in lines:
            line["timestamp"] = iso_time(line["timestamp"])
        return lines

    def count_events(self, execution_id: str, include_logs: bool = False) -> int:
        return self.records.count_events(self.records.get_execution(self.project_id, execution_id, light=True)["pk"],
                                         include_logs)

    def delete_events(self, deployment_id: str, include_logs: bool = False, since: Any = None,
                      until: Any = None) -> int:
        """Delete the events (and logs) of the deployment's executions (``cfy events delete``), stamped in
        ``[since, until]``; how many went.  A running execution's are left, and so are the ``task_succeeded``
        events of one a resume may continue (failed, cancelled): its resume skips the tasks they name."""
        count = 0
        for row in self.records.list_executions(self.project_id, self._deployment(deployment_id)["pk"], light=True):
            row = self._fresh(row)
            if row["status"] not in ACTIVE:
                count += self.records.delete_events(row["pk"], include_logs, since, until, keep=(
                    "task_succeeded",) if row["status"] in ("failed", "cancelled") else ())
        return count

    def _fresh(self, row: dict) -> dict:
        """The row, marked interrupted first when its process is gone."""
        if row["status"] in ACTIVE and execution_gone(row):
            self.records.mark_interrupted(row)
            return self.records.get_execution(self.project_id, row["id"])
        return row

    def _deployment(self, deployment_id: str) -> dict:
        return self.records.get_deployment(self.project_id, deployment_id)

    # -- starting, cancelling, resuming ---------------------------------------------------------
    def begin(self, verb: str, *args: Any, **kwargs: Any) -> Started:
        """``start`` or ``resume`` under way in a thread: the handle once the execution is stored."""
        return self.begun(lambda service: getattr(service, verb)(*args, **kwargs), in_thread)

    def begun(self, action: Callable[["Executions"], dict], submit: Callable, timeout: float | None = None) -> Started:
        """``action(a copy of this service)`` through ``submit``; the handle once the execution it
        starts is stored (``Started.run``: a refusal is raised, ``timeout`` gives up)."""
        started = Started(self.get, lambda execution: execution["status"] in ACTIVE)
        service = copy.copy(self)
        service.announce = started.show
        return started.run(submit, lambda: action(service), timeout)

    def start(self, workflow_id: str, deployment_id: str, parameters: dict | None = None, force: bool = False,
              allow_custom_parameters: bool = False, queue: bool = False, dry_run: bool = False,
              decided: dict | None = None, created_by: str = "admin") -> dict:
        """Run ``workflow_id`` on the deployment to its end, in this process; the execution as it ended
        (asked by user ``created_by``: a scale's deployment modification is made by them too).

        While another execution of the deployment runs: ``force`` runs this one beside it, ``queue``
        stores it ``queued`` (returned at once; the running one's end starts it), otherwise ``Conflict``.
        ``dry_run``: the graph is walked, each operation reported as if it ran (none does) and no instance
        state changes (``Runner.dry_run``), as Cloudify's ``--dry-run``.
        A deployment changed between its reading and the start (a plugins update) is read and planned again,
        so no execution runs on two versions of its plan.  ``decided``: what was decided before (a deployment
        update's plan), the memo the graph's builder starts from.
        """
        while True:
            deployment_row, params, model, graph, memo = self._planned(deployment_id, workflow_id, parameters or {},
                                                                       allow_custom_parameters, decided)
            try:
                row = self.records.start_execution(self.project_id, deployment_row["pk"], workflow_id, params,
                                                   self.owner, execution_gone, concurrent=force, queue=queue,
                                                   planned_on=deployment_row, dry_run=dry_run, created_by=created_by)
                break
            except PlanChanged:
                continue
        self.announce(row["id"])
        if row["status"] == "queued":
            return view(row)
        return self._begin(row, deployment_row, model, graph, memo)

    def _planned(self, deployment_id: str, workflow_id: str, parameters: dict, allow_custom: bool,
                 decided: dict | None = None) -> tuple:
        """(deployment row, parameters, model, graph, memo) of the workflow on the deployment as it is now;
        refused here (unknown workflow, bad parameters, a graph that cannot be built), before any execution
        is stored."""
        deployment_row = self._deployment(deployment_id)
        plan = secretbox.unseal(deployment_row["plan"])
        declared = declaration(plan, workflow_id)
        if declared is None:
            raise NotFound(f"Workflow {workflow_id} not found in deployment {deployment_id} (it has: "
                           f"{', '.join(sorted(plan.get('workflows') or {}))})")
        params = workflow_parameters(workflow_id, declared, parameters, allow_custom)
        build = graph_builder(workflow_id, declared, params)
        processes.stop_orphans(self.records.execution_commands(deployment_row["pk"]))
        if UPDATE in (decided or {}) and decided[UPDATE]["planned_on"] != str(deployment_row["updated_at"]):
            raise Conflict(f"Deployment {deployment_id} changed while its update was planned: update it again")
        model, memo = self.model_of(deployment_row), copy.deepcopy(decided or {})
        return deployment_row, params, model, build(model, params, memo), memo

    def _begin(self, row: dict, deployment_row: dict, model: Deployment, graph, memo: dict) -> dict:
        if memo.get("scale") and row["parameters"].get("abort_started"):
            try:
                if self._abort_started(row, deployment_row, model):  # planned again on what is left
                    model, memo = self.model_of(deployment_row), {}
                    graph = self._build(row, deployment_row, model, memo)
            except WalkFailed as failed:
                return self._failed_at_start(row, deployment_row, first_failure(failed))
            except StokerError as exc:
                return self._failed_at_start(row, deployment_row, str(exc))
        resume_data = {"states": {i.id: i.state for i in model.instances.values()}, "memo": memo,
                       "commands": self.commands(row), LOCAL_ALLOWED: self.local_allowed}
        self.records.update_execution(row["pk"], resume_data=resume_data)
        try:
            self.modify(deployment_row, memo, "before", row)
        except ModificationRefused as exc:  # another modification is started: the execution fails, as Cloudify's
            return self._failed_at_start(row, deployment_row, str(exc))
        if UPDATE in memo:  # the deployment's rows hold the new plan now (its blueprint's files too)
            deployment_row = self._deployment(deployment_row["id"])
            model = self.model_of(deployment_row)
        return self._run(row, deployment_row, model, graph, frozenset(), memo)

    def _abort_started(self, row: dict, deployment_row: dict, model: Deployment) -> bool:
        """A scale's ``abort_started``: the deployment's started modifications rolled back by execution ``row``,
        each after the instances it added are uninstalled; whether there was any."""
        started = [found["id"] for found in self.modifications.list(deployment_row["id"]) if found["status"] == STARTED]
        if not started:
            return False

        async def abort(runner: Runner) -> None:
            for modification_id in started:
                await self.modifications.roll_back_uninstalled(modification_id, runner, strict=True)
        self.run_beside(row, deployment_row, model, abort)
        return True

    def run_beside(self, row: dict, deployment_row: dict, model: Deployment,
                   work: Callable[[Runner], Awaitable[None]]) -> None:
        """``work(a runner of execution row over model)``, to its end in this process, outside the execution's
        graph (what a scale does before it: ``abort_started``, or after it failed on the workers: its rollback)."""
        runner = self.runner(row, deployment_row, model, frozenset())
        try:
            asyncio.run(work(runner))
        finally:
            runner.writer.close()

    async def roll_back_failed(self, row: dict, runner: Runner, memo: dict) -> None:
        """Execution ``row`` failed: a scale's modification, with ``rollback_if_failed`` (Cloudify's default), is
        rolled back after what it added and was cut short is taken back (the execution stays failed)."""
        decided = memo.get("scale")
        if not decided or "modification_id" not in decided or not row["parameters"].get("rollback_if_failed", True):
            return
        if self.modifications.status(decided["modification_id"]) == STARTED:
            await self.modifications.roll_back_uninstalled(decided["modification_id"], runner, strict=False)

    def start_queued(self, deployment_row: dict) -> None:
        """Start the deployment's queued executions, oldest first, now that its running one ended (as
        Cloudify's manager does); each is planned on the deployment as it is now."""
        while (row := self.records.take_queued(deployment_row["pk"], self.owner, execution_gone)) is not None:
            ended = self.run_taken(row)
            if ended is not None and ended["status"] in ACTIVE:
                return  # the workers run it: its end starts the next

    def run_taken(self, row: dict) -> dict | None:
        """Run a queued execution just taken (``row``: started, owned by this process), planned on its
        deployment as it is now; None when that plan fails (the deployment changed since it was queued:
        the execution is failed).  One that ran before (an execution group's, resumed) continues."""
        if (row.get("resume_data") or {}).get("states") is not None:
            stop_scripts_left(row)
            return self._continue(row)
        deployment_row = self.records.get_deployment(self.project_id, row["deployment_id"])
        model, memo = self.model_of(deployment_row), {}
        try:
            graph = self._build(row, deployment_row, model, memo)
        except StokerError as exc:
            self._failed_at_start(row, deployment_row, str(exc))
            return None
        return self._begin(row, deployment_row, model, graph, memo)

    @staticmethod
    def _build(row: dict, deployment_row: dict, model: Deployment, memo: dict) -> Any:
        """Execution ``row``'s graph over ``model`` (what its planning decides goes into ``memo``)."""
        declared = declaration(secretbox.unseal(deployment_row["plan"]), row["workflow_id"])
        return graph_builder(row["workflow_id"], declared, row["parameters"])(model, row["parameters"], memo)

    def _failed_at_start(self, row: dict, deployment_row: dict, error: str) -> dict:
        """Execution ``row`` failed before its first step (``error``); the deployment's next ones start."""
        self.records.update_execution(row["pk"], status="failed", error=error, ended_at=utcnow(), owner=None)
        ended = self.get(row["id"])
        self._run_next(row, deployment_row)
        return ended

    def resume(self, execution_id: str) -> dict:
        """Continue an interrupted, failed or cancelled execution; finished operations do not run again."""
        row = self._fresh(self.records.get_execution(self.project_id, execution_id))
        self._refuse_ended_modification(row)
        stop_scripts_left(row)
        row = self.records.claim_execution(self.project_id, execution_id, self.owner)
        self.announce(row["id"])
        return self._continue(row)

    def _refuse_ended_modification(self, row: dict) -> None:
        """A scale continues only while its deployment modification is started (not rolled back since)."""
        decided = ((row.get("resume_data") or {}).get("memo") or {}).get("scale")
        if not decided or "modification_id" not in decided:  # (one started before scales had modifications)
            return
        try:
            status = self.modifications.status(decided["modification_id"])
        except NotFound:
            status = "never started"
        if status != STARTED:
            raise WorkflowError(f"Execution {row['id']} cannot be resumed: its deployment modification "
                                f"{decided['modification_id']} is {status}")

    def _continue(self, row: dict) -> dict:
        """Run the resumed execution ``row`` (started, owned by this process) from where it stopped."""
        row["resume_data"] = {**(row.get("resume_data") or {}), "commands": self.commands(row)}
        self.records.update_execution(row["pk"], resume_data=row["resume_data"])
        deployment_row = self.records.get_deployment(self.project_id, row["deployment_id"])
        model, graph, memo = self.graph_as_started(row, deployment_row)
        return self._run(row, deployment_row, model, graph, frozenset(self.records.finished_tasks(row["pk"])),
                         memo, resumed=True)

    def graph_as_started(self, row: dict, deployment_row: dict) -> tuple[Deployment, Any, dict]:
        """(the deployment as it is now, the graph the execution started with, what its planning decided):
        the graph is built again from the instance states it started from."""
        plan = secretbox.unseal(deployment_row["plan"])
        build = graph_builder(row["workflow_id"], declaration(plan, row["workflow_id"]), row["parameters"])
        model = self.model_of(deployment_row)
        saved = row.get("resume_data") or {}
        current = {i.id: i.state for i in model.instances.values()}
        for instance_id, state in (saved.get("states") or {}).items():
            if instance_id in model.instances:
                model.instances[instance_id].state = state
        memo = saved.get("memo") or {}
        graph = build(model, row["parameters"], memo)
        for instance_id, state in current.items():
            model.instances[instance_id].state = state
        return model, graph, memo

    def cancel(self, execution_id: str, force: bool = False) -> dict:
        row = self._fresh(self.records.get_execution(self.project_id, execution_id))
        stop_scripts_left(row)
        if row["status"] == "queued" and self.records.cancel_queued(row["pk"]):
            return self.get(execution_id)
        if row["status"] not in ACTIVE or not self.records.request_cancel(row["pk"], force):
            raise WorkflowError(f"Execution {execution_id} is {row['status']}: there is nothing to cancel")
        return self.get(execution_id)

    def schedule(self, workflow_id: str, deployment_id: str, when: str, parameters: dict | None = None,
                 force: bool = False, allow_custom_parameters: bool = False, dry_run: bool = False,
                 created_by: str = "admin") -> dict:
        """``start`` at ``when``, as Cloudify 7's ``--schedule``: a schedule that runs it once (queued behind
        a running execution then), fired by a ``stoker api`` server's scheduler (``schedules.fire_due``)."""
        arguments = {"force": force, "allow_custom_parameters": allow_custom_parameters, "dry_run": dry_run}
        return Schedules(self.store, self.project_id).once(workflow_id, deployment_id, when, parameters, arguments,
                                                           created_by)

    def delete_ended(self, keep_last: int | None = None, to_datetime: str | None = None,
                     deployment_id: str | None = None, workflow_id: str | None = None, status: str | None = None,
                     project_ids: list[str] | None = None) -> int:
        """``cfy executions delete``: the ended executions (of ``project_ids``, this one's by default) deleted
        with their events and logs, but the newest ``keep_last`` or those created at ``to_datetime`` or later,
        and those another row needs (``EndedExecutions``); how many went.  Refused as Cloudify refuses."""
        if keep_last is not None and to_datetime is not None:
            raise WorkflowError("Must provide either a `to_datetime` timestamp or a `keep_last` number of "
                                "executions to keep")
        if keep_last is not None and (not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last <= 0):
            raise WorkflowError(f"`keep_last` must be an integer greater than 0. got {str(keep_last)[:100]} instead.")
        if status is not None and status not in ENDED:
            raise WorkflowError(f"Can't filter by execution status `{str(status)[:100]}`. Allowed statuses are: "
                                f"{list(ENDED)}")
        if deployment_id is not None:
            self._deployment(deployment_id)
        equal = {k: v for k, v in (("deployment_id", deployment_id), ("workflow_id", workflow_id)) if v is not None}
        return EndedExecutions(self.store).delete(
            project_ids or [self.project_id], [status] if status else ENDED, keep_last,
            parse_time(to_datetime, "to_datetime") if to_datetime is not None else None, **equal)

    def commands(self, row: dict, owner: str | None = None) -> dict:
        """The record of the scripts ``owner`` (this process's engine by default) runs for execution
        ``row`` (one for all of them)."""
        owner = owner or self.owner
        return processes.marked_record(owner, f"execution:{row['id']}:{owner}")

    # -- running --------------------------------------------------------------------------------
    def model_of(self, deployment_row: dict) -> Deployment:
        blueprints = BlueprintService(self.store, self.project_id)
        blueprint = self.records.get_blueprint(self.project_id, deployment_row["blueprint_id"])
        nodes = {row["id"]: secretbox.unseal(row["definition"]) for row in self.records.nodes(deployment_row["pk"])}
        made = self.records.made_node_instances(deployment_row["pk"], INSTANCE_COLUMNS, _instance)
        instances = {instance.id: instance for instance in made}
        plan = secretbox.unseal(deployment_row["plan"])
        imported = {namespace: blueprints.folder(self.records.get_blueprint(self.project_id, blueprint_id))
                    for namespace, blueprint_id in (plan.get("namespaces_mapping") or {}).items()}
        return Deployment(deployment_row["id"], deployment_row["blueprint_id"], blueprints.folder(blueprint), nodes,
                          instances, plan.get("scaling_groups") or {}, plan.get("plugins") or {}, imported)

    def modify(self, deployment_row: dict, memo: dict, when: str, execution: dict | None = None) -> None:
        """Apply what a scale decided, by its deployment modification (``modifications``): started before
        it runs (by ``execution``), finished once it ran well; or what a deployment update decided
        (``updating``): its ``before`` and ``after`` changes of the rows."""
        if UPDATE in memo:
            DeploymentRowChanges(self.records).apply(deployment_row["pk"], **memo[UPDATE][when])
            return
        decided = memo.get("scale")
        if not decided:
            return
        if when == "before":
            self.modifications.begin(deployment_row, decided, scale_nodes(decided),
                                     scale_context(execution, deployment_row), execution["created_by"])
        elif "modification_id" not in decided:  # started before scales had modifications: its start added rows
            DeploymentRowChanges(self.records).apply(deployment_row["pk"], added=[], removed=decided["removed"],
                                                     relinked=decided["relinked_after"], counts=decided["counts"])
        elif self.modifications.status(decided["modification_id"]) != FINISHED:  # a worker's end runs twice
            self.modifications.end_well(decided["modification_id"])

    def _run(self, row: dict, deployment_row: dict, model: Deployment, graph, done: frozenset, memo: dict,
             resumed: bool = False) -> dict:
        ended = self.dispatch.execute(self, row, deployment_row, model, graph, done, memo, resumed)
        if ended["status"] not in ACTIVE:  # ran here to its end (workers start the next at theirs)
            self._run_next(row, deployment_row)
        return ended

    def _run_next(self, row: dict, deployment_row: dict) -> None:
        """Execution ``row`` ended: the deployment's queued ones, and its group's next, start."""
        self.start_queued(deployment_row)
        execution_groups.wake(self, row)

    def run_here(self, row: dict, deployment_row: dict, model: Deployment, graph, done: frozenset, memo: dict,
                 resumed: bool = False) -> dict:
        """Walk the graph in this process, to the execution's end."""
        asyncio.run(self._execute(row, deployment_row, graph, self.runner(row, deployment_row, model, done, memo),
                                  resumed, memo))
        return self.get(row["id"])

    def succeeded(self, deployment_row: dict, memo: dict) -> str:
        """The execution's walk ended well: what it decided for its end is made (``modify``), before its status
        says so (who sees it terminated sees its rows); the error when a scale's modification was rolled back
        meanwhile (the execution fails, as Cloudify's does when its ``finish()`` is refused), else ""."""
        try:
            self.modify(deployment_row, memo, "after")
        except ModificationRefused as exc:
            return str(exc)
        return ""

    def runner(self, row: dict, deployment_row: dict, model: Deployment, done: frozenset,
               memo: dict | None = None) -> Runner:
        """The runner of the execution's steps over ``model``, with a writer of its own (closed by the caller);
        ``memo``: what its planning decided (else the one its row keeps)."""
        params = row["parameters"]
        mask = masker(secret_values(self.records, self.project_id, deployment_row))
        state = LiveState(self.records, self.project_id, deployment_row, model)
        policy = RetryPolicy(int(params.get("task_retries", 0)), float(params.get("task_retry_interval", 1)))
        declared = declaration(secretbox.unseal(deployment_row["plan"]), row["workflow_id"])
        writer = BatchWriter(lambda changes, events, edits: self.records.write_batch(
            row["pk"], deployment_row["pk"], changes, events, edits))
        runner = Runner(model, writer, LiveEvaluator(state), row["id"], row["workflow_id"], policy, done, mask,
                        operation_kwargs(declared, params), tenant_of(self.project_id))
        runner.marker = self.commands(row)["marker"]
        runner.manager = LocalManager(self.store, self.project_id, self, row["created_by"])
        runner.workflow_parameters = dict(params)
        runner.memo = memo if memo is not None else (row.get("resume_data") or {}).get("memo") or {}
        runner.dry_run = bool(row.get("is_dry_run"))
        runner.ignore_failure = ignored_failures(declared, params)
        runner.kwargs_override_refused = kwargs_override_refused(declared, params)
        return runner

    async def _execute(self, row: dict, deployment_row: dict, graph, runner: Runner, resumed: bool,
                       memo: dict) -> None:
        writer = runner.writer
        writer.event(runner.row("cloudify_event", started_message(row, resumed), event_type="workflow_started"))
        status, error = "terminated", ""
        try:
            if not await self.watched(row, runner, runner.run(graph)):
                status = "cancelled"
        except asyncio.CancelledError:
            status = "cancelled"
        except WalkFailed as failed:
            status, error = "failed", first_failure(failed)
            try:
                await self.roll_back_failed(row, runner, memo)
            except Exception as exc:  # the store: the execution still ends, failed
                error += runner.mask(f" (and its rollback failed: {type(exc).__name__}: {exc})")
        except Exception as exc:  # the store or a bug: the execution must not stay "started"
            status, error = "failed", runner.mask(f"{type(exc).__name__}: {exc}")
        try:
            if status == "terminated":
                await writer.flush()  # the instances' last states, then the end's changes of the rows
                error = self.succeeded(deployment_row, memo)
                status = "failed" if error else status
            writer.event(ended_event(runner, row, status, error))
            await writer.flush()
        except Exception as exc:  # the last states and events are lost; the execution still ends, failed
            status, error = "failed", runner.mask(f"could not store the execution's last changes: {exc}")
        finally:
            writer.close()
        self.records.update_execution(row["pk"], by_owner=self.owner, status=status, error=error, ended_at=utcnow(),
                                      owner=None, cancel_request=None)

    async def watched(self, row: dict, runner: Runner, work: Awaitable) -> Any:
        """``work``'s result, while the execution's lease is kept and a cancel request reaches it
        (graceful: nothing new starts; force, or the server's stop: ``work`` is cancelled, its
        scripts killed)."""
        async def heard(request: lease.Cancel) -> bool:
            runner.stop_requested = runner.stop_requested or request.graceful
            return not request.graceful

        return await lease.watched(lease.ExecutionLease(self.records, row["pk"]), self.owner, work, heard,
                                   self.stopping)


#: what an execution reads of each node instance (``model_of``), in ``_instance``'s order
#: how Cloudify shows a status (``status_display``), where it differs from the status
STATUS_DISPLAY = {"terminated": "completed"}
INSTANCE_COLUMNS = ("id", "node_id", "index", "state", "runtime_properties", "relationships", "host_id",
                    "scaling_groups", "system_properties")


def _instance(instance_id: str, node_id: str, index: int, state: str, runtime_properties: dict | None,
              relationships: list | None, host_id: str | None, scaling_groups: list | None,
              system_properties: dict | None) -> Instance:
    return Instance(instance_id, node_id, index, state, runtime_properties or {}, list(relationships or []),
                    host_id, list(scaling_groups or []), dict(implied(system_properties, state)),
                    bool(system_properties))


def stop_scripts_left(row: dict) -> None:
    """Kill the scripts execution ``row``'s dead owner left running, before anyone acts on it."""
    processes.stop_orphans(recorded_commands(row.get("resume_data")))


def started_message(row: dict, resumed: bool) -> str:
    return f"{'Resuming' if resumed else 'Starting'} '{row['workflow_id']}' workflow execution{dry_run_mark(row)}"


def dry_run_mark(row: dict) -> str:
    """What Cloudify adds to a dry run's start and success messages."""
    return DRY_RUN_MARK if row.get("is_dry_run") else ""


#: the last event's type, by how the execution ended
ENDED_EVENT = {"terminated": "workflow_succeeded", "cancelled": "workflow_cancelled", "failed": "workflow_failed"}


def ended_event(runner: Runner, row: dict, status: str, error: str) -> dict:
    """The execution's last event: how it ended (``status``) and why (``error``)."""
    message = {"terminated": f"'{row['workflow_id']}' workflow execution succeeded{dry_run_mark(row)}",
               "cancelled": f"'{row['workflow_id']}' workflow execution cancelled",
               "failed": f"'{row['workflow_id']}' workflow execution failed: {error}"}[status]
    return runner.row("cloudify_event", message, event_type=ENDED_EVENT[status])


def view(row: dict) -> dict:
    """An execution as ``cfy executions get --json`` shows it."""
    return {"id": row["id"], "workflow_id": row["workflow_id"], "deployment_id": row["deployment_id"],
            "status": row["status"], "status_display": STATUS_DISPLAY.get(row["status"], row["status"]), "parameters": row["parameters"],
            "error": row["error"] or "", "created_at": iso_time(row["created_at"]),
            "started_at": iso_time(row["started_at"]), "ended_at": iso_time(row["ended_at"]),
            "tenant_name": tenant_of(row["project_id"]), "execution_group_id": row.get("execution_group_id"),
            "is_dry_run": bool(row.get("is_dry_run")), "created_by": row.get("created_by") or "admin"}


def event_view(event: dict, execution: dict) -> dict:
    """An event or log as ``cfy events list --json`` shows it."""
    return {"timestamp": iso_time(event["timestamp"]), "type": event["type"], "event_type": event["event_type"],
            "level": event["level"], "message": event["message"], "node_name": event["node_id"],
            "node_instance_id": event["node_instance_id"], "operation": event["operation"],
            "execution_id": execution["id"], "workflow_id": execution["workflow_id"],
            "deployment_id": execution["deployment_id"],
            "error_causes": ([{"message": event["message"], "traceback": (event["context"] or {}).get("stderr", "")}]
                             if event["event_type"] in ("task_failed", "workflow_failed") else None)}

