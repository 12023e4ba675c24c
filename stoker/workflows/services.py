"""Uninstall's ``recursive``: the deployment's service deployments (those labelled ``csys-obj-parent`` with
its id) uninstalled before its own instances, as cloudify-common's ``uninstall`` does it through the manager.

A deployment group ``<id>_services_uninstall`` gathers the children by that label; an execution group runs
the same workflow on them with the parent's parameters and ``recursive`` (so theirs go first too); the
parent waits until none of those executions waits or runs (or it is asked to stop), then deletes the
deployment group and goes on with its own instances however the children's ended, as Cloudify's does.

The wait passes as the runner's ``pause`` does: in-process a sleep between two looks; on ``stoker worker``s
each look is a task of its own, the step parked between them (a waiting level holds no worker slot that
its children need).  So a look may be the step run again: the execution group's id is kept in the
parent's record before the group is stored, and a later look (or a task redelivered after its worker was
lost) finds the children's executions there instead of starting them again.  The group is deleted (and
its id forgotten) once, at the wait's end, or by ``wind_down`` when the execution stops while parked.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import uuid
from typing import Any

from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.blueprint.environments import PARENT_LABEL
from stoker.engine.graph import Graph
from stoker.errors import NotFound
from stoker.resources.stepper import Parked
from stoker.workflows import execution_groups
from stoker.workflows.execution_groups import ExecutionGroups
from stoker.workflows.lifecycle import Chains, Step, then

#: the phase of the step that uninstalls the services (one per execution, of the deployment, not an instance)
PHASE = "services"
#: seconds between two looks at the children's executions (cloudify-common looks every second)
INTERVAL = 1.0
#: the parent's ``resume_data`` key keeping the id of its children's execution group while they run
GROUP_KEY = "services_execution_group"


def first(chains: Chains) -> Graph:
    """``chains``' graph, every step of it after the services' uninstall."""
    services = Chains()
    services.chain("", [[Step(PHASE, "", "uninstall")]])
    return then(services, chains)


class ServiceDeployments:
    """The children's uninstall over the project's manager (``LocalManager``); each call blocks (the store)."""

    def __init__(self, manager: Any, deployment_id: str, execution_id: str):
        self.deployment_id = deployment_id
        self.group_id = f"{deployment_id}_services_uninstall"
        executions = copy.copy(manager.executions)
        #: the groups are the parent execution's user's, as the manager makes them with its token
        self.creator = manager.user
        self.groups = DeploymentGroups(manager.deployments, self.creator)
        # each child's execution in a thread of its own: a pool the parent holds a thread of could run out
        # down a chain of environments, every level waiting for the next
        executions.submit = execution_groups.in_kept_thread
        self.executions = ExecutionGroups(executions)
        self.records = executions.records
        self.parent_pk = self.records.get_execution(manager.project_id, execution_id, light=True)["pk"]

    def started(self, workflow_id: str, parameters: dict) -> list[str]:
        """The ids of the children's executions (none: no child), started by the first call (a group of
        them): its id is kept first, so that a call again finds them (the group is stored at once)."""
        group_id = self.records.kept_value(self.parent_pk, GROUP_KEY, str(uuid.uuid4()))
        try:
            return self.executions.execution_ids(group_id)
        except NotFound:
            return self._start(group_id, workflow_id, parameters)

    def _start(self, group_id: str, workflow_id: str, parameters: dict) -> list[str]:
        group = self.groups.put(self.group_id, {"filter_rules": [
            {"key": PARENT_LABEL, "values": [self.deployment_id], "operator": "any_of", "type": "label"}]})
        if not group["deployment_ids"]:
            return []
        started = self.executions.start(self.group_id, workflow_id, {**parameters, "recursive": True},
                                        created_by=self.creator, group_id=group_id)
        return list(started["execution_ids"])

    def unended(self, execution_ids: list[str]) -> int:
        """How many of the executions still wait or run."""
        service = self.executions.executions
        return sum(service.get(execution_id)["status"] not in execution_groups.ENDED for execution_id in execution_ids)

    def end(self) -> None:
        """The deployment group deleted, and the execution group forgotten (a resume starts anew)."""
        with contextlib.suppress(NotFound):  # (its put failed)
            self.groups.delete(self.group_id)
        self.records.forget_value(self.parent_pk, GROUP_KEY)


async def uninstall(runner: Any, looks: int = 0) -> None:
    """The services' uninstall, by the execution ``runner`` runs, after ``looks`` looks at the children
    (a worker's task coming back to the parked step); in a dry run only said (Cloudify's would run them for
    real: its REST calls are no tasks a dry run skips)."""
    def log(message: str) -> None:
        runner.writer.event(runner.row("cloudify_log", message, level="info"))

    if not looks:
        log("Uninstalling service deployments recursively")
    if runner.dry_run:
        log("Dry run: the service deployments are not uninstalled")
        return
    services = ServiceDeployments(runner.manager, runner.deployment.id, runner.execution_id)
    try:
        execution_ids = await asyncio.to_thread(services.started, runner.workflow_id, runner.workflow_parameters)
        while not runner.stop_requested and await asyncio.to_thread(services.unended, execution_ids):
            await runner.pause(INTERVAL)
    except Parked:
        raise  # the next look is a task of its own (a worker's): the children go on meanwhile
    except BaseException:
        await asyncio.to_thread(services.end)
        raise
    await asyncio.to_thread(services.end)
    log("Service deployments uninstalled")


async def wind_down(runner: Any) -> None:
    """The end of a wait its execution stopped while it was parked (a worker's forced cancel: no look
    comes back): the deployment group deleted, as the wait's own end does; the children go on."""
    if not runner.dry_run:
        await asyncio.to_thread(ServiceDeployments(runner.manager, runner.deployment.id, runner.execution_id).end)
