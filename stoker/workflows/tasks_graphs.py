"""An execution's tasks graphs and operations, as Cloudify's REST API lists them (``cfy executions graphs list``,
``cfy executions operations list``).

Read back from what an execution keeps already, so that running an operation
writes nothing more: its graph of steps, built again as a worker builds it
(``Executions.graph_as_started``: from the deployment's current plan and the
instance states the execution started from), and its task events, each naming
its step (``context.task``, the step's key).  One graph per phase of steps (install,
uninstall, rollback...: Cloudify's graph names); one operation per step that
runs an operation, in the state its last task event left it in.
"""

from __future__ import annotations

from typing import Any

from stoker.blueprint.state import tenant_of
from stoker.errors import NotFound
from stoker.store.models import iso_time
from stoker.workflows import health
from stoker.workflows.execution_runner import DEPLOYMENT_PHASES, step_operation
from stoker.workflows.lifecycle import Step

#: Cloudify's task state after each task event (no event yet: ``pending``)
STATES = {"task_started": "sent", "task_rescheduled": "rescheduled", "task_succeeded": "succeeded",
          "task_failed": "failed"}
#: an operation run on an agent: what ``cfy executions operations list`` shows unless ``--show-internal``
REMOTE = "RemoteWorkflowTask"
#: the task types Cloudify's ``skip_internal`` keeps
NOT_INTERNAL = ("SubgraphTask", REMOTE)
#: between the execution's id and the phase (a graph's id) or the step's key (an operation's id)
SEPARATOR = ":"


def execution_named(some_id: str) -> str:
    """The execution a graph's or an operation's id belongs to."""
    return some_id.partition(SEPARATOR)[0]


class TasksGraphs:
    """The graphs and operations of the tenant's executions (``executions``: its ``Executions``)."""

    def __init__(self, executions: Any):
        self.executions = executions

    def graphs(self, execution_id: str) -> list[dict]:
        row, phases, _operations = self._read(execution_id)
        return [{**_owned(row), "id": _id(row, phase), "name": phase, "execution_id": row["id"],
                 "created_at": iso_time(row["created_at"])} for phase in phases]

    def operations(self, execution_id: str) -> list[dict]:
        return self._read(execution_id)[2]

    def graph_operations(self, graph_id: str) -> list[dict]:
        row, phases, operations = self._read(execution_named(graph_id))
        if graph_id not in {_id(row, phase) for phase in phases}:
            raise NotFound(f"Requested `TasksGraph` with ID `{graph_id}` was not found")
        return [op for op in operations if op["tasks_graph_id"] == graph_id]

    def operation(self, operation_id: str) -> dict:
        for found in self._read(execution_named(operation_id))[2]:
            if found["id"] == operation_id:
                return found
        raise NotFound(f"Requested `Operation` with ID `{operation_id}` was not found")

    def _read(self, execution_id: str) -> tuple[dict, list[str], list[dict]]:
        """The execution's row, its graphs' phases, its operations."""
        records = self.executions.records
        row = records.get_execution(self.executions.project_id, execution_id)
        deployment_row = records.get_deployment(row["project_id"], row["deployment_id"])
        model, graph, _memo = self.executions.graph_as_started(row, deployment_row)
        tasks = _task_events(records.events(row["pk"], columns=("event_type", "context", "message")))
        requires = graph.requires
        steps = [step for step in requires if _runs(model, step)]
        ids = {step: _id(row, step.key) for step in steps}
        nearest = _nearest(requires, set(ids))
        phases = dict.fromkeys(step.phase for step in requires if step.phase not in DEPLOYMENT_PHASES)
        return row, list(phases), [_operation(row, model, step, ids[step], sorted(ids[d] for d in nearest(step)),
                                tasks.get(step.key)) for step in steps]


def _owned(row: dict) -> dict:
    return {"tenant_name": tenant_of(row["project_id"]), "visibility": "tenant", "private_resource": False,
            "resource_availability": "tenant", "created_by": row.get("created_by") or "admin"}


def _id(row: dict, key: str) -> str:
    return f"{row['id']}{SEPARATOR}{key}"


def _runs(model: Any, step: Step) -> bool:
    """Whether ``step`` runs an operation of an instance (not a state change, nor a workflow's own step)."""
    instance = model.instances.get(step.instance)
    return step.operation is not None and step.act is None and instance is not None \
        and step_operation(model, step, instance) is not None


def _task_events(events: list[dict]) -> dict[str, dict]:
    """By step key, what its task events say: its state, retries so far, failure."""
    tasks: dict[str, dict] = {}
    for event in events:
        state = STATES.get(event["event_type"])
        context = event["context"] or {}
        key = context.get("task")
        if state is None or not key:
            continue
        task = tasks.setdefault(key, {"retries": 0, "error": None})
        task["state"] = state
        task["retries"] = max(task["retries"], int(context.get("retry") or 0))
        task["error"] = event["message"] if state == "failed" else None
    return tasks


def _nearest(requires: dict, kept: set) -> Any:
    """``nearest(step)``: the ``kept`` steps ``step`` waits for, through the steps left out (state changes)."""
    found: dict = {}

    def nearest(step: Any) -> set:
        if step not in found:
            found[step] = set()
            reached = set()
            for earlier in requires.get(step, ()):
                reached |= {earlier} if earlier in kept else nearest(earlier)
            found[step] = reached
        return found[step]

    return nearest


def _operation(row: dict, model: Any, step: Step, operation_id: str, dependencies: list[str],
               task: dict | None) -> dict:
    instance = model.instances[step.instance]
    spec = step_operation(model, step, instance) or {}
    params = row["parameters"] or {}
    task = task or {"state": "pending", "retries": 0, "error": None}
    total = spec.get("max_retries")
    interval = spec.get("retry_interval")
    context = {"task_name": health.task_name(spec), "node_id": instance.id, "node_name": instance.node_id,
               "operation": {"name": step.operation, "retry_number": task["retries"],
                             "max_retries": int(params.get("task_retries", 0)) if total is None else total},
               "plugin": {"name": spec.get("plugin")}, "execution_id": row["id"], "workflow_id": row["workflow_id"],
               "tenant": {"name": _owned(row)["tenant_name"]}}
    if step.relationship is not None:
        target = instance.relationships[step.relationship].get("target_id")
        context.update(related={"node_id": target, "is_target": step.side == "target"},
                       source_id=instance.id, target_id=target)
    return {**_owned(row), "id": operation_id, "name": context["task_name"], "state": task["state"],
            "type": REMOTE, "dependencies": dependencies, "tasks_graph_id": _id(row, step.phase),
            "created_at": iso_time(row["created_at"]), "manager_name": None, "agent_name": None,
            "parameters": {"current_retries": task["retries"], "total_retries": context["operation"]["max_retries"],
                           "retry_interval": float(params.get("task_retry_interval", 1)) if interval is None
                           else interval,
                           "send_task_events": True, "info": step.operation, "error": task["error"],
                           "containing_subgraph": None, "task_kwargs": {"kwargs": {"__cloudify_context": context}}}}
