"""Runs one execution's graph of steps on the engine's walker, with ``ctx`` for its scripts.

The runner owns the execution's live view of the deployment: it sets
instance states, hands each operation a context whose runtime properties are
the instance's own (shared by every operation touching that instance), and
reports events and logs.  A step whose key is in ``done`` (it finished
before the execution was interrupted) runs no operation again.
"""

from __future__ import annotations

import asyncio
import copy
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from stoker import secretbox
from stoker.blueprint.secrets import shows_any
from stoker.blueprint.nodes import SCRIPT_PLUGIN
from stoker.engine.graph import Graph, WalkFailed, walk
from stoker.workflows import acting, dotted, health, services
from stoker.workflows.operation_context import InstanceView, NodeView, OperationContext, OperationFailed, OperationInfo, Side
from stoker.workflows.ctx_server import CtxServer
from stoker.workflows.lifecycle import Step
from stoker.workflows.model import Deployment, Instance, has_implementation
from stoker.workflows.operations import OperationSpec, RetryPolicy, run_operation
from stoker.workflows.plugin_envs import plugin_view
from stoker.workflows.writer import BatchWriter


#: the phases of steps of the deployment, not of an instance: a custom workflow's script, uninstall's services
DEPLOYMENT_PHASES = ("workflow", services.PHASE)
#: after the messages of a dry run's start, success and each operation reported as if it ran (Cloudify's)
DRY_RUN_MARK = " (dry run)"


class Evaluator(Protocol):
    """Functions in node properties and operation inputs, evaluated when an operation runs."""

    def node_properties(self, instance: Instance) -> dict: ...

    def operation_inputs(self, inputs: dict, instance: Instance, target: Instance | None) -> dict: ...


class StepFailed(Exception):
    def __init__(self, step: Step, message: str, stderr_tail: str = ""):
        detail = f"{step.operation} on {step.instance or 'the deployment'}" + (f" ({step.side} side of its relationship "
                                                          f"#{step.relationship})" if step.side else "")
        text = f"{detail} failed: {message}"
        if stderr_tail:
            text += f"\nstderr (last lines):\n{stderr_tail}"
        super().__init__(text)
        self.step = step
        #: what the operation said (a status or drift check's failed result, as Cloudify keeps it)
        self.reason = message


class Runner:
    def __init__(self, deployment: Deployment, writer: BatchWriter, evaluator: Evaluator, execution_id: str,
                 workflow_id: str, policy: RetryPolicy = RetryPolicy(), done: frozenset = frozenset(),
                 mask: Callable[[str], str] = lambda text: text, operation_kwargs: dict[str, dict] | None = None,
                 tenant_name: str = "default_tenant"):
        self.deployment = deployment
        self.writer = writer
        self.evaluator = evaluator
        self.execution_id = execution_id
        self.workflow_id = workflow_id
        self.policy = policy
        self.done = done
        self.mask = mask
        #: per phase (``Step.phase``), what the workflow passes to operations over their inputs
        self.operation_kwargs = dict(operation_kwargs or {})
        self.tenant_name = tenant_name
        self.stop_requested = False
        self.finished = 0
        self.server: CtxServer | None = None
        #: in each script's environment (``processes.MARKER_VARIABLE``): what the execution's record names
        self.marker: str | None = None
        #: by step key, the retry its operation goes on at (a worker that parked a retry: ``pause``; the
        #: services' uninstall: how often it looked at its children before)
        self.retrying: dict[str, int] = {}
        #: how the interval before an operation's retry (or the services' next look) passes (a worker parks
        #: the step instead)
        self.pause: Callable[[float], Awaitable[Any]] = asyncio.sleep
        #: the project's manager, for the manager's own operations (Component, SharedResource, ...)
        self.manager: Any = None
        #: the execution's parameters, as operations see them (``ctx.workflow_parameters``)
        self.workflow_parameters: dict = {}
        #: what the execution's planning decided (its ``resume_data`` memo), for the steps that act on it
        self.memo: dict = {}
        #: a dry run (Cloudify's ``--dry-run``): each operation is reported as if it ran (``operate``), none
        #: does, and no instance state changes (``set_state``)
        self.dry_run = False
        #: the phases (``Step.phase``) whose failed operations are reported and passed over (a workflow's
        #: ``ignore_failure``): the step ends as if its operation had succeeded
        self.ignore_failure: frozenset[str] = frozenset()
        #: the phases whose keyword arguments may not redefine an operation's inputs (execute_operation
        #: without ``allow_kwargs_override``): such a step fails as Cloudify's task does
        self.kwargs_override_refused: frozenset[str] = frozenset()

    async def run(self, graph: Graph) -> bool:
        """Walk ``graph``; False when a graceful cancel left steps unstarted.  Raises ``WalkFailed``."""
        async with self._serving():
            await walk(graph, self.run_step, lambda: self.stop_requested, self.step_now)
        return self.finished == len(graph.requires)

    async def run_one(self, step: Step) -> None:
        """One step of the graph (a worker's task), its changes on disk when this returns."""
        async with self._serving():
            await self.run_step(step)

    @asynccontextmanager
    async def _serving(self) -> AsyncIterator[None]:
        """A ctx server for the operations run meanwhile (on this host); the writer flushed after."""
        async with CtxServer(self.marker) as server:
            self.server = server
            try:
                yield
            finally:
                await self.writer.flush()

    def step_now(self, step: Step) -> bool:
        """Take a step that runs no operation (a no-op's states, or one finished before an
        interruption) at once, without a task of its own; False when it has an operation to run."""
        if step.phase in DEPLOYMENT_PHASES:
            return False
        if step.when is not None and not self.dry_run and not acting.GUARDS[step.when](self, step):
            self.finished += 1  # not chosen by what the execution's checks found
            return True
        if step.act is not None:
            if not self.dry_run:
                acting.ACTIONS[step.act](self, step)
            self.finished += 1
            return True
        instance = self.deployment.instances[step.instance]
        runs = step.operation is not None and self._spec(step, instance) is not None
        if runs and step.key not in self.done:
            return False
        if runs:  # finished before an interruption: only its end state
            if step.after and instance.state != step.after:
                self.set_state(instance, step.after)
        else:  # as Cloudify, a no-op operation's states are skipped unless the step is ``sure``
            if step.before and step.sure and instance.state != step.before:
                self.set_state(instance, step.before)
            if step.after and (step.sure or step.operation is None) and instance.state != step.after:
                self.set_state(instance, step.after)
        self.finished += 1
        return True

    async def wind_down(self, step: Step) -> None:
        """What ``step``, parked between two tasks of a worker, holds, let go once its execution stops
        meanwhile (no task runs it again): the services' deployment group.  An operation's retry holds
        nothing."""
        if step.phase == services.PHASE:
            await services.wind_down(self)

    async def run_step(self, step: Step) -> None:
        if step.phase in DEPLOYMENT_PHASES:
            await (self.run_workflow_script(step) if step.phase == "workflow"
                   else services.uninstall(self, self.retrying.get(step.key, 0)))
            self.finished += 1
            return
        if self.step_now(step):
            return
        instance = self.deployment.instances[step.instance]
        if step.before and instance.state != step.before:
            self.set_state(instance, step.before)
            await self.writer.flush()  # on disk before the operation acts (a crash then shows where it was)
        try:
            result = await self.operate(step, instance)
        except StepFailed as failure:
            self.keep(step, instance, False, failure.reason)
            acting.failed(self, step)
            if step.phase not in self.ignore_failure:
                raise
            self.writer.event(self.row("cloudify_event", f"Ignoring task {step.operation} failure", instance,
                                       step.operation, "workflow_node_event"))
        else:
            self.keep(step, instance, True, result)
        if step.after and instance.state != step.after:
            self.set_state(instance, step.after)  # committed with the next batch, before any later operation
        self.finished += 1

    def set_state(self, instance: Instance, state: str) -> None:
        if self.dry_run:  # as Cloudify's: a dry run leaves every instance as it found it
            return
        instance.state = state
        fields: dict = {"state": state}
        changes = health.on_state(instance, state)
        for _id, keys, value in changes:
            health.apply(instance.system_properties, keys, value)
        if changes and instance.system_stored:
            # its top level only: its entries are replaced, not changed, while it waits for the writer
            fields["system_properties"] = dict(instance.system_properties)
        elif state == "started":  # nothing stored, so the state implies what it holds (``implied``): the flag alone
            fields["is_status_check_ok"] = True
        self.writer.queue(instance.id, fields, self.row(
            "cloudify_event", f"Node instance {instance.id} is {state}", instance,
            event_type="workflow_node_event", context={"state": state}))

    def keep(self, step: Step, instance: Instance, ok: bool, result: Any) -> None:
        """A status or drift check's result kept, as Cloudify's workflow keeps it (``health.KEPT``: which
        phases)."""
        how = health.KEPT.get(step.phase)
        if how is None or self.dry_run:
            return
        record = health.checked(ok, health.task_name(self._spec(step, instance) or {}), result)
        if how == health.STATUS:
            self.change_system(health.status_kept(instance, record))
        else:
            target = None if step.relationship is None else \
                self.deployment.instances.get(instance.relationships[step.relationship]["target_id"])
            self.change_system(health.drift_kept(instance, target, step.side, record))

    def change_system(self, changes: list) -> None:
        """``health`` changes of instances' system properties: made in the model, stored as edits."""
        for instance_id, keys, value in changes:
            instance = self.deployment.instances.get(instance_id)
            state = None
            if instance is not None:
                health.apply(instance.system_properties, keys, value)
                instance.system_stored, state = True, instance.state
            kept = value if value is health.GONE else copy.deepcopy(value)
            self.writer.edit(instance_id, "system_properties",
                             lambda stored, keys=keys, value=kept, state=state: health.apply_stored(
                                 stored, state, keys, value))

    def row(self, kind: str, message: str, instance: Instance | None = None, operation: str | None = None,
            event_type: str | None = None, level: str | None = None, context: dict | None = None) -> dict:
        return {"execution_id": self.execution_id, "type": kind, "event_type": event_type, "level": level,
                "node_id": instance.node_id if instance else None, "node_instance_id": instance.id if instance else None,
                "operation": operation, "message": self.mask(message), "context": context or {},
                "timestamp": datetime.now(timezone.utc)}

    def _spec(self, step: Step, instance: Instance) -> dict | None:
        return step_operation(self.deployment, step, instance)

    async def operate(self, step: Step, instance: Instance) -> Any:
        """Run the step's operation (script, plugin task or the manager's own), retried as its policy says,
        with its events; in a dry run none runs (nor its inputs evaluated): only its success is reported,
        marked, as Cloudify reports it."""
        task = {"task": step.key}
        if self.dry_run:
            self.writer.event(self.row("cloudify_event", f"Task succeeded '{step.operation}'{DRY_RUN_MARK}", instance,
                                       step.operation, "task_succeeded", context=task))
            return None
        found = self._spec(step, instance)
        kwargs = self.operation_kwargs.get(step.phase, {})
        if step.phase in self.kwargs_override_refused:
            for key in sorted(set(kwargs) & set(found.get("inputs") or {}))[:1]:
                raise StepFailed(step, f"Duplicate definition of {key} in operation properties and in kwargs. To "
                                       'allow redefinition, pass "allow_kwargs_override" to "execute_operation"')
        root, implementation, inputs = self.deployment.script_home(
            found["implementation"], {**(found.get("inputs") or {}), **kwargs})
        spec = OperationSpec(step.operation, implementation, inputs, found.get("max_retries"),
                             found.get("retry_interval"), found.get("timeout"), bool(found.get("timeout_recoverable")),
                             self._plugin(found), root)
        self.writer.event(self.row("cloudify_event", f"Task started '{step.operation}'", instance, step.operation,
                                   "task_started", context=task))

        def on_retry(attempt: int, why: str, wait: float) -> None:
            self.writer.event(self.row("cloudify_event", f"Task rescheduled '{step.operation}' -> {why} "
                                       f"[retry {attempt}, in {wait:g} s]", instance, step.operation,
                                       "task_rescheduled", context={**task, "retry": attempt}))

        try:
            result = await run_operation(self.server, spec, lambda number: self._context(step, instance, spec, number),
                                         self.policy, on_retry, self.retrying.get(step.key, 0), self.pause)
        except OperationFailed as failure:
            self.writer.event(self.row("cloudify_event", f"Task failed '{step.operation}' -> {failure}", instance,
                                       step.operation, "task_failed",
                                       context={**task, "stderr": self.mask(failure.stderr_tail)}))
            raise StepFailed(step, self.mask(str(failure)), self.mask(failure.stderr_tail)) from None
        stored = secretbox.seal(result) if shows_any(result, self.mask) else result  # as hidden HOT values are
        self.writer.event(self.row("cloudify_event", f"Task succeeded '{step.operation}'", instance, step.operation,
                                   "task_succeeded", context={**task, "result": stored}))
        return result

    async def run_workflow_script(self, step: Step) -> None:
        """A custom workflow mapped to a script: one deployment-level operation, parameters as its inputs."""
        parameters = self.operation_kwargs.get("workflow", {})
        spec = OperationSpec(self.workflow_id, step.operation, parameters)

        def log(level: str, message: str) -> None:
            self.writer.event(self.row("cloudify_log", message, operation=self.workflow_id, level=level))

        def context(retry_number: int) -> OperationContext:
            return OperationContext(
                deployment_id=self.deployment.id, blueprint_id=self.deployment.blueprint_id,
                operation=OperationInfo(self.workflow_id, dict(parameters), retry_number, 0),
                resource_root=self.deployment.resource_root, log=log, persist=self._persist,
                execution_id=self.execution_id, workflow_id=self.workflow_id, tenant_name=self.tenant_name)

        try:
            await run_operation(self.server, spec, context, RetryPolicy(0, 0))
        except OperationFailed as failure:
            raise StepFailed(step, self.mask(str(failure)), self.mask(failure.stderr_tail)) from None

    def _plugin(self, operation: dict) -> dict | None:
        """The plugin a plugin operation runs from (scripts have none)."""
        name = operation.get("plugin")
        if not name or name == SCRIPT_PLUGIN or name not in self.deployment.plugins:
            return None
        return plugin_view(name, self.deployment.plugins[name], self.deployment.id)

    def _plugin_values(self, plugin: dict | None, instance: Instance, target: Instance | None) -> dict | None:
        """The plugin with its properties' values evaluated, as Cloudify evaluates them for each task
        (``{get_secret: ...}`` set on import)."""
        properties = (plugin or {}).get("properties") or {}
        values = {key: definition["value"] for key, definition in properties.items() if "value" in definition}
        if not values:
            return plugin
        try:
            values = self.evaluator.operation_inputs(values, instance, target)
        except Exception as exc:  # as an input's: the operation fails, naming it
            raise OperationFailed(f"cannot evaluate the plugin's properties: {exc}", recoverable=False) from None
        return {**plugin, "properties": {key: {**definition, **({"value": values[key]} if key in values else {})}
                                         for key, definition in properties.items()}}

    def _context(self, step: Step, instance: Instance, spec: OperationSpec, retry_number: int) -> OperationContext:
        target = None
        if step.relationship is not None:
            target = self.deployment.instances.get(instance.relationships[step.relationship]["target_id"])
        try:
            inputs = self.evaluator.operation_inputs(spec.inputs, instance, target)
        except Exception as exc:  # a function that cannot be evaluated fails the operation, naming itself
            raise OperationFailed(f"cannot evaluate the operation's inputs: {exc}", recoverable=False) from None
        plugin = self._plugin_values(spec.plugin, instance, target)

        def log(level: str, message: str) -> None:
            self.writer.event(self.row("cloudify_log", message, instance, step.operation, level=level,
                                       context={"task": step.key}))

        ctx = OperationContext(
            deployment_id=self.deployment.id, blueprint_id=self.deployment.blueprint_id,
            operation=OperationInfo(step.operation, inputs, retry_number,
                                    self.policy.task_retries if spec.max_retries is None else spec.max_retries),
            resource_root=spec.root or self.deployment.resource_root, log=log, persist=self._persist,
            execution_id=self.execution_id, workflow_id=self.workflow_id, tenant_name=self.tenant_name,
            plugin=plugin, manager=self.manager, acting_side=step.side or "source",
            workflow_parameters=self.workflow_parameters)
        if target is None:
            ctx.node, ctx.instance = self._node_view(instance), self._instance_view(instance)
        else:
            ctx.source = Side(self._node_view(instance), self._instance_view(instance))
            ctx.target = Side(self._node_view(target), self._instance_view(target))
        return ctx

    def _node_view(self, instance: Instance) -> NodeView:
        node = self.deployment.node_of(instance)
        return NodeView(instance.node_id, node.get("type", ""), lambda: self.evaluator.node_properties(instance),
                        node.get("type_hierarchy"))

    @staticmethod
    def _instance_view(instance: Instance) -> InstanceView:
        # the very dict of the instance: every operation on it sees every change at once
        return InstanceView(instance.id, instance.index, instance.runtime_properties, instance.host_id)

    async def _persist(self, view: InstanceView, path: str | list) -> None:
        """Store the property at ``path`` (set in the view already) as an edit of the stored ones."""
        await self.writer.edit_runtime_properties(view.id, setting(view.runtime_properties, path))


def step_operation(deployment: Deployment, step: Step, instance: Instance) -> dict | None:
    """The operation ``step`` runs on ``instance`` (its side of a relationship's), None when it has no implementation."""
    if step.relationship is not None:
        found = deployment.relationship_operation(instance, step.relationship, step.side, step.operation)
    else:
        found = deployment.operation(instance, step.operation)
    return found if has_implementation(found) else None


def setting(properties: dict, path: str | list) -> Callable[[dict], None]:
    """An edit setting ``path`` in stored properties to its value in ``properties``; where the
    stored ones have another shape on the way (another operation changed it meanwhile), the
    whole top-level property as this operation sees it; a top-level key gone from ``properties`` is
    removed."""
    keys = dotted.steps(path)
    if keys[0] not in properties:
        return lambda stored: stored.pop(keys[0], None)
    value, top = copy.deepcopy(dotted.get(properties, keys)), copy.deepcopy(properties[keys[0]])

    def edit(stored: dict) -> None:
        try:
            dotted.set(stored, keys, value)
        except dotted.PathError:
            stored[keys[0]] = top
    return edit


def first_failure(error: WalkFailed) -> str:
    """The failure users read first: a failed operation over a cancelled sibling."""
    failures = list(error.failures.values())
    failures.sort(key=lambda e: not isinstance(e, StepFailed))
    return str(failures[0]) if failures else str(error)
