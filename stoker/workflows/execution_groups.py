"""Execution groups (Cloudify's ``/execution-groups``): one workflow on every deployment of a deployment
group, at most ``concurrency`` of its executions running at once.

The executions are ordinary ones, stored ``queued`` with their group when it starts; the group's start
and the end of each of its executions (``wake``, called where an execution's end starts its deployment's
queue: ``Executions._run`` here, ``execution_steps.end`` on the workers) start as many of the waiting
ones as the concurrency leaves room for (``GroupRecords.take_next``), each run as a queued execution
taken from its deployment's queue is (``Executions.run_taken``).
"""

from __future__ import annotations

import copy
import threading
from typing import Any, Callable

from stoker import secretbox
from stoker.errors import StokerError
from stoker.store.execution_records import ACTIVE
from stoker.store.group_records import GroupRecords
from stoker.store.locks import execution_gone
from stoker.workflows.parameters import workflow_parameters

#: Cloudify's default: how many of a group's executions run at once
DEFAULT_CONCURRENCY = 5
#: the statuses an execution ends in
ENDED = ("terminated", "failed", "cancelled")
#: statuses of an execution that waits to start
WAITING = ("queued", "scheduled", "pending")


class MissingWorkflow(StokerError):
    """No deployment of the group has the workflow (Cloudify's ``nonexistent_workflow_error``)."""


def status(statuses: list[str]) -> str | None:
    """The group's status from its executions', as Cloudify's manager computes it: ``pending`` while all
    are, ``queued`` while all wait, ``failed`` or ``terminated`` once all ended, ``started`` between."""
    if not statuses:
        return None
    if all(s == "pending" for s in statuses):
        return "pending"
    if all(s in WAITING for s in statuses):
        return "queued"
    if all(s in ENDED for s in statuses):
        return "failed" if "failed" in statuses else "terminated"
    return "started"


def in_kept_thread(work: Callable[[], Any]) -> None:
    """``work()`` in a thread the process waits for before it exits (a command that ended one execution
    runs to their end the group's executions it started then, as it runs its deployment's queued ones)."""
    threading.Thread(target=work, name="stoker-execution-group", daemon=False).start()  # not its starter's


def wake(executions: Any, row: dict) -> None:
    """Execution ``row`` ended: its deployment joins its group's target group for how it ended; start what
    its group, and the groups waiting for its deployment, have room for."""
    records = GroupRecords(executions.store)
    records.file_by_outcome(row["pk"])
    for group_pk in records.groups_to_wake(row["pk"], row["deployment_pk"]):
        start_next(executions, records, group_pk)


def start_next(executions: Any, records: GroupRecords, group_pk: int) -> int:
    """Take the group's next executions and hand each to a thread (``executions.submit``); how many."""
    taken = records.take_next(group_pk, executions.owner, execution_gone)
    for row in taken:
        service = copy.copy(executions)
        executions.submit(lambda service=service, row=row: service.run_taken(row))
    return len(taken)


class ExecutionGroups:
    """A tenant's execution groups, over its ``Executions`` (whose process runs what a group starts)."""

    def __init__(self, executions: Any):
        self.executions = executions
        self.project_id = executions.project_id
        self.records = GroupRecords(executions.store)

    def start(self, deployment_group_id: str, workflow_id: str, default_parameters: dict | None = None,
              parameters: dict | None = None, concurrency: int = DEFAULT_CONCURRENCY, force: bool = False,
              created_by: str = "admin", group_id: str | None = None) -> dict:
        """An execution of ``workflow_id`` on each deployment of the group having it (parameters: the
        defaults, then the deployment's own of ``parameters``), all stored before the first starts;
        ``group_id``: the new group's, chosen by its starter (which may have kept it before)."""
        group = self.records.deployment_group(self.project_id, deployment_group_id)
        planned, logs = [], []
        for deployment_id in group["deployment_ids"]:
            row = self.records.get_deployment(self.project_id, deployment_id)
            declaration = (secretbox.unseal(row["plan"]).get("workflows") or {}).get(workflow_id)
            if declaration is None:
                logs.append(f"Workflow {workflow_id} does not exist in the deployment {deployment_id}")
                continue
            given = {**(default_parameters or {}), **((parameters or {}).get(deployment_id) or {})}
            planned.append((row["pk"], workflow_parameters(workflow_id, declaration, given)))
        if not planned:
            raise MissingWorkflow(logs[0] if logs else f"Deployment group {deployment_group_id} has no deployments "
                                  f"to run {workflow_id} on")
        group_id = self.records.add_execution_group(self.project_id, {
            "deployment_group_id": deployment_group_id, "workflow_id": workflow_id, "concurrency": concurrency,
            "force": force, "logs": logs, "created_by": created_by}, planned, group_id)
        start_next(self.executions, self.records, self.records.execution_group(self.project_id, group_id)["pk"])
        return self.get(group_id)

    def get(self, group_id: str) -> dict:
        return self._view(self._fresh(self.records.execution_group(self.project_id, group_id)))

    def list(self) -> list[dict]:
        return [self._view(self._fresh(row)) for row in self.records.execution_groups(self.project_id)]

    def _fresh(self, group: dict) -> dict:
        """The group, its executions whose process died marked interrupted (and the room they left used)."""
        gone = [e for e in group["executions"] if e["status"] in ACTIVE and execution_gone(e)]
        if not gone:
            return group
        for member in gone:
            self.records.mark_interrupted(member)
        start_next(self.executions, self.records, group["pk"])
        return self.records.execution_group(self.project_id, group["id"])

    def cancel(self, group_id: str, force: bool = False) -> dict:
        """Cancel the waiting executions at once, then ask the running ones to stop (``force``: now)."""
        group = self.records.execution_group(self.project_id, group_id)
        members = group["executions"]
        # a waiting one no longer waiting was started meanwhile (a running one ended): it is cancelled too
        started = [m for m in members if m["status"] == "queued" and not self.records.cancel_queued(m["pk"])]
        for member in [m for m in members if m["status"] in ACTIVE] + started:
            self.records.request_cancel(member["pk"], force)
        return self.get(group_id)

    def resume(self, group_id: str) -> dict:
        """Queue the failed and cancelled executions again; each, when the group starts it, resumes where
        it stopped (its finished operations do not run again)."""
        group = self.records.execution_group(self.project_id, group_id)
        self.records.requeue([e["pk"] for e in group["executions"] if e["status"] in ("failed", "cancelled")])
        start_next(self.executions, self.records, group["pk"])
        return self.get(group_id)

    def set_concurrency(self, group_id: str, concurrency: int) -> dict:
        group = self.records.execution_group(self.project_id, group_id)
        self.records.set_concurrency(group["pk"], concurrency)
        start_next(self.executions, self.records, group["pk"])
        return self.get(group_id)

    def set_targets(self, group_id: str, success_group_id: str | None = None,
                    failure_group_id: str | None = None) -> dict:
        """``cfy executions groups set-success-group`` / ``set-failure-group``: deployments whose execution
        in the group succeeds (fails) join that deployment group, those that did already at once."""
        group = self.records.execution_group(self.project_id, group_id)
        success, failed = (self.records.deployment_group(self.project_id, target)["pk"] if target else None
                           for target in (success_group_id, failure_group_id))
        self.records.set_targets(group["pk"], success, failed)
        return self.get(group_id)

    def execution_ids(self, group_id: str) -> list[str]:
        return [e["id"] for e in self.records.execution_group(self.project_id, group_id)["executions"]]

    def logs(self, group_id: str) -> list[dict]:
        """What the group's start said of the deployments it skipped, as logs of the group (``cfy events list
        --execution-group-id`` shows them before its executions' events)."""
        group = self.records.execution_group(self.project_id, group_id)
        return [{"timestamp": group["created_at"], "type": "cloudify_log", "event_type": None, "level": "info",
                 "message": message, "node_name": None, "node_instance_id": None, "operation": None,
                 "execution_id": None, "workflow_id": group["workflow_id"], "deployment_id": None,
                 "error_causes": None} for message in group["logs"] or []]

    @staticmethod
    def _view(group: dict) -> dict:
        members = group["executions"]
        return {"id": group["id"], "deployment_group_id": group["deployment_group_id"],
                "workflow_id": group["workflow_id"], "concurrency": group["concurrency"],
                "created_at": group["created_at"].isoformat(), "created_by": group["created_by"],
                "execution_ids": [e["id"] for e in members], "status": status([e["status"] for e in members]),
                "success_group_id": group["success_group_id"], "failed_group_id": group["failed_group_id"]}
