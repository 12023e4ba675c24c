"""What Cloudify's manager REST client gives its own operations (Component, SharedResource,
PasswordSecret), answered in process by this project's blueprints, deployments, executions
and secrets.

The standard types' operations talk to "the manager"; in Stoker the manager is the
project's store, so they run here, on the same services the CLI and the REST API use.
Every call is blocking (the store): the operations run in a thread of their own.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from stoker.blueprint.blueprints import BlueprintService
from stoker.errors import NotFound, StokerError
from stoker.resources.policy import LOCAL_SETTINGS
from stoker.store.execution_records import ACTIVE
from stoker.workflows.model import runs_on_host


class ExecutionTimedOut(Exception):
    """A child execution did not end within the operation's ``timeout``."""


class LocalManager:
    """The project's manager, as the manager's own operations see it."""

    def __init__(self, store: Any, project_id: str, executions: Any, user: str = "admin"):
        #: the database and project (a plugin task's REST access is granted over them: ``workflows.rest_manager``)
        self.store, self.project_id = store, project_id
        self.blueprints = BlueprintService(store, project_id)
        self.deployments = self.blueprints.deployments
        self.secrets = self.blueprints.secrets
        #: the ``Executions`` of this project (its dispatch: in process or on workers)
        self.executions = executions
        #: the deployments this execution's operations ran workflows on (a cancel reaches them)
        self.children: set[str] = set()
        #: the user of the execution: what it starts is theirs, as the manager's token makes it
        self.user = user

    # -- blueprints -----------------------------------------------------------------------------
    def blueprint_exists(self, blueprint_id: str) -> bool:
        return _exists(lambda: self.blueprints.get(blueprint_id))

    def upload_blueprint(self, blueprint_id: str, source: Path, main_file_name: str) -> None:
        """Store ``source`` (a folder holding ``main_file_name``, or an archive of one) as ``blueprint_id``."""
        if source.is_dir():
            self.blueprints.upload(source / main_file_name, blueprint_id)
        else:
            self.blueprints.upload_archive(source.read_bytes(), blueprint_id, main_file_name)

    def delete_blueprint(self, blueprint_id: str) -> None:
        self.blueprints.delete(blueprint_id)

    # -- deployments ----------------------------------------------------------------------------
    def deployment_exists(self, deployment_id: str) -> bool:
        return _exists(lambda: self.deployments.get(deployment_id))

    def create_deployment(self, deployment_id: str, blueprint_id: str, inputs: dict,
                          labels: list[tuple[str, str]]) -> dict:
        return self.deployments.create(deployment_id, blueprint_id, inputs, labels=labels)

    def delete_deployment(self, deployment_id: str) -> None:
        self.deployments.delete(deployment_id)

    def capabilities(self, deployment_id: str) -> dict:
        """The deployment's capabilities as the REST API shows them (hidden values masked)."""
        return self.deployments.capabilities(deployment_id)

    def labels(self, deployment_id: str) -> list[dict]:
        return self.deployments.labels(deployment_id)

    def add_label(self, deployment_id: str, key: str, value: str) -> None:
        self.deployments.add_labels(deployment_id, [(key, value)])

    def remove_label(self, deployment_id: str, key: str, value: str) -> None:
        with contextlib.suppress(NotFound):  # already gone: removing is idempotent
            self.deployments.delete_label(deployment_id, key, value)

    # -- executions -----------------------------------------------------------------------------
    def busy(self, deployment_id: str) -> bool:
        """Whether an execution of the deployment is still running (or queued)."""
        return any(_running(e) for e in self.executions.list(deployment_id))

    def wait_idle(self, deployment_id: str, timeout: float, interval: float) -> bool:
        """Wait for the deployment's executions to end; False when ``timeout`` (-1: none) passed first."""
        return _poll(lambda: not self.busy(deployment_id), timeout, interval)

    def run_workflow(self, deployment_id: str, workflow_id: str, parameters: dict | None, timeout: float,
                     interval: float, allow_custom_parameters: bool = True, queue: bool = False) -> dict:
        """Start ``workflow_id`` on the deployment and return the execution once it ended; refused when
        it would run processes on this host and the project may not (as the API refuses it)."""
        if not self.executions.local_allowed and runs_on_host(self.deployments.nodes(deployment_id)):
            raise StokerError(f"deployment {deployment_id} has script operations, which run on the server host and "
                            f"are off for this tenant (turn them on with {LOCAL_SETTINGS})")
        self.children.add(deployment_id)
        execution = self.executions.start(workflow_id, deployment_id, parameters or {},
                                          allow_custom_parameters=allow_custom_parameters, queue=queue,
                                          created_by=self.user)
        latest = [execution]  # on workers (or queued) it is still running when start returns

        def ended() -> bool:
            latest[0] = self.executions.get(execution["id"])
            return not _running(latest[0])

        if _running(execution) and not _poll(ended, timeout, interval):
            raise ExecutionTimedOut(f"Execution timed out after: {timeout} seconds.")
        return latest[0]

    def cancel_children(self) -> None:
        """Force-cancel what runs on the deployments this execution started workflows on (its own
        cancel was forced: the child's scripts are killed as its own are)."""
        for deployment_id in sorted(self.children):
            for execution in self.executions.list(deployment_id):
                if execution["status"] in ACTIVE:
                    with contextlib.suppress(StokerError):  # it ended meanwhile: nothing to cancel
                        self.executions.cancel(execution["id"], force=True)

    # -- secrets --------------------------------------------------------------------------------
    def secret_exists(self, key: str) -> bool:
        return _exists(lambda: self.secrets.get(key))

    def create_secret(self, key: str, value: str, hidden: bool) -> None:
        self.secrets.create(key, value, hidden=hidden)

    def delete_secret(self, key: str) -> None:
        """Delete the secret if it is there (an uninstall after a failed install finds none)."""
        with contextlib.suppress(NotFound):
            self.secrets.delete(key)


def _running(execution: dict) -> bool:
    return execution["status"] in ACTIVE or execution["status"] == "queued"


def _exists(read) -> bool:
    try:
        read()
    except NotFound:
        return False
    return True


def _poll(done, timeout: float, interval: float) -> bool:
    """Call ``done`` every ``interval`` seconds until it is true (True) or ``timeout`` passed (False)."""
    deadline = float("inf") if timeout == -1 else time.monotonic() + float(timeout)
    while True:
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(max(0.05, min(float(interval), 5.0)))

