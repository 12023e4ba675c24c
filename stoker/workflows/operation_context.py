"""What an operation can see and change: the context behind ``ctx``.

A workflow builds one ``OperationContext`` per operation run.  It holds plain
data (ids, evaluated node properties, operation inputs) and the one live
thing an operation changes, each instance's runtime properties, whose
``persist`` callback stores them before ``ctx`` answers -- so a script that
set a property and then crashed (or whose executor was killed) loses none.
Node operations have ``node``/``instance``; relationship operations have
``source``/``target`` sides instead, as in Cloudify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

#: ``await persist(instance, path)`` stores the runtime property at ``path`` (set in ``instance`` already)
Persist = Callable[["InstanceView"], Awaitable[None]]
#: ``log(level, message)``; levels are debug, info, warning, error
Log = Callable[[str, str], None]


class NodeView:
    """A node as ``ctx node`` shows it; its properties (functions evaluated) are worked out when first read."""

    def __init__(self, id: str, type: str, properties: dict | Callable[[], dict] | None = None,  # noqa: A002
                 type_hierarchy: list | None = None):
        self.id, self.type = id, type
        self.type_hierarchy = list(type_hierarchy or [])
        self._properties = properties if properties is not None else {}

    @property
    def name(self) -> str:
        return self.id

    @property
    def properties(self) -> dict:
        if callable(self._properties):
            self._properties = self._properties()
        return self._properties


@dataclass
class InstanceView:
    id: str
    index: int = 0
    runtime_properties: dict = field(default_factory=dict)
    host_id: str | None = None


@dataclass
class Side:
    """One end of a relationship: its node and its instance."""

    node: NodeView
    instance: InstanceView


@dataclass
class OperationInfo:
    name: str
    inputs: dict = field(default_factory=dict)
    retry_number: int = 0
    max_retries: int = 0


class OperationOutcome(Exception):
    """Base of what a script may ask for instead of plain success."""


class RetryRequested(OperationOutcome):
    def __init__(self, message: str, interval: float | None = None):
        super().__init__(message or "operation retry requested")
        self.interval = interval


class AbortRequested(OperationOutcome):
    """The script aborted its operation: it fails without retries."""


class OperationFailed(Exception):
    """An operation failed; ``recoverable`` ones are tried again while retries remain."""

    def __init__(self, message: str, recoverable: bool = True, stderr_tail: str = ""):
        super().__init__(message)
        self.recoverable = recoverable
        self.stderr_tail = stderr_tail


@dataclass
class OperationContext:
    deployment_id: str
    blueprint_id: str
    operation: OperationInfo
    resource_root: Path  # the blueprint's folder: scripts and download-resource are read from it
    log: Log
    persist: Persist
    node: NodeView | None = None
    instance: InstanceView | None = None
    source: Side | None = None
    target: Side | None = None
    execution_id: str = ""
    workflow_id: str = ""
    #: the execution's parameters (Cloudify's ``ctx.workflow_parameters``)
    workflow_parameters: dict = field(default_factory=dict)
    tenant_name: str = "default_tenant"
    #: a plugin operation's plugin: name, package_name, package_version, properties, workdir
    plugin: dict | None = None
    #: the project's manager (``workflows.manager.LocalManager``), for the manager's own operations
    manager: Any = None
    #: a plugin task's REST access while it runs (``rest_manager.RestAccess.as_context``); None: none
    rest: dict | None = None
    #: the side a relationship operation runs on: source (``source_interfaces``) or target
    acting_side: str = "source"
    #: what the script reported: ``ctx returns``, a retry or an abort (only one of them, once)
    returned: Any = None
    outcome: OperationOutcome | None = None
    _answered: bool = False

    @property
    def type(self) -> str:
        if self.source is not None:
            return "relationship-instance"
        return "node-instance" if self.instance is not None else "deployment"

    def answer_once(self) -> None:
        """``returns``, ``abort-operation`` and ``retry-operation`` may be used once in all."""
        if self._answered:
            raise RuntimeError("ctx may only abort or return once")
        self._answered = True

    def request_retry(self, message: str, interval: float | None) -> None:
        self.outcome = RetryRequested(message, interval)
