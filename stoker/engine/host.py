"""What a running stack asks of the engine that holds it, and what a dispatcher asks: typed ports.

``Stack``, its resources, the action walks and the previews see ``StackHost``, never the
``Engine`` class, so none of them imports ``engine.py`` (which builds them); a ``Dispatcher``
(``dispatch.inprocess``, ``dispatch.distributed``) runs actions through ``ActionHost``'s public
calls.  ``S`` is the stack type, left open here so this module needs no import of ``stack.py``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, ContextManager, Protocol, TypeVar

from stoker.errors import Problems
from stoker.template.environment import Environment
from stoker.template.template import Template

S = TypeVar("S")


class StackHost(Protocol[S]):
    """Store, type lookup, validation and dispatch: all a stack and its resources call."""

    #: the database the stack's rows live in
    store: Any
    #: where actions run: here or on workers (``stoker.dispatch``)
    dispatch: "Dispatcher"
    #: Heat's max_nested_stack_depth
    max_nested_depth: int
    #: set when nobody waits for the action any more: it stops at its next template check
    given_up: threading.Event
    #: who watches this process's actions (events published per committed batch)
    progress: Any

    def resource_class(self, type_name: str) -> type:
        """The plug-in class of a resource type (may raise for an unknown one)."""

    def validate_resources(self, stack: S, definition: Any, problems: Problems) -> None:
        """Checks that need resource types, added to ``problems``."""

    async def watch(self, stack: S, task: asyncio.Future) -> None:
        """Keep the stack's lease while ``task`` runs; cancel it on request."""

    def new_stack(self, name: str, parent: S | None = None, timeout_mins: int | None = None) -> S:
        """A new, unsaved stack (a nested one under ``parent``)."""

    def runtime(self, record: Any, parent: S | None = None, facade: dict | None = None,
                strict: bool = False, provider_template: str | None = None) -> S:
        """The live stack of a stored record."""

    def check_tree_size(self, child: S) -> None:
        """Refuse a nested stack that makes the tree too big."""

    async def save_nested_stack(self, stack: S) -> None:
        """Store a new nested stack."""

    def prepare_child_update(self, child: S, template: Template, environment: Environment,
                             params: dict) -> tuple[S, S]:
        """The updated nested stack and the stored one it replaces."""

    async def run_create(self, stack: S, timeout_mins: int | None, disable_rollback: bool,
                         action: str = "CREATE", resume: bool = False) -> None:
        """Create (or adopt, or resume creating) ``stack``."""

    async def run_update(self, stack: S, old: S, rollback: bool, action: str = "UPDATE") -> None:
        """Update ``old`` into ``stack``."""

    async def run_delete(self, stack: S, action: str) -> bool:
        """Delete ``stack``; False when it failed."""

    async def run_simple(self, stack: S, action: str) -> None:
        """Suspend, resume or check ``stack``."""


class ActionHost(StackHost[S], Protocol[S]):
    """The engine as a dispatcher drives it: the stack's lease, the walks, the stored stacks."""

    #: who holds the leases this engine takes
    engine_id: str
    project_id: str
    #: set when the server stops: running actions are handed back
    stopping: threading.Event

    def get_record(self, name_or_id: str, show_deleted: bool = False) -> Any:
        """The stored stack of this project (NotFound if there is none)."""

    def defined(self, record: Any, parent: S | None = None, facade: dict | None = None,
                strict: bool = False, provider_template: str | None = None, lazy: bool = False) -> S:
        """The stack of a stored record with its definition, its resources not loaded."""

    def for_project(self, project_id: str) -> "ActionHost[S]":
        """The same engine acting for another project."""

    def run(self, coroutine: Awaitable[Any]) -> None:
        """Run an action's walk here, on an event loop of its own."""

    def locked(self, record: Any, action: str) -> ContextManager[None]:
        """Hold the stack's lease around an action run here."""

    def holding(self, stack_id: str) -> ContextManager[None]:
        """Around work that holds the stack's lease: released, or handed back when the server stops."""

    def stop_running_action(self, record: Any) -> Any:
        """Cancel the action another live engine runs on the stack; the record once it let go."""


class Dispatcher(Protocol):
    """Where stack actions and workflow executions run: here, or on workers."""

    #: actions run in this process (their events can be pushed to a display here)
    runs_here: bool

    def create(self, engine: ActionHost, stack: Any, timeout_mins: int | None, disable_rollback: bool,
               action: str = "CREATE") -> None:
        """Create (or adopt) a stored new stack's resources."""

    def delete(self, engine: ActionHost, record: Any) -> None:
        """Delete the stack (an action running on it cancelled first)."""

    def update(self, engine: ActionHost, record: Any, prepare: Callable[[], tuple[Any, Any]],
               rollback: bool, action: str = "UPDATE", given: dict | None = None) -> Any:
        """Update the stack (``prepare`` stores the new definition once the lease is held); the new stack.
        ``action``: UPDATE, or RESTORE to a snapshot (``given`` names it)."""

    def simple(self, engine: ActionHost, record: Any, action: str) -> None:
        """Suspend, resume, check or snapshot the stack."""

    def signal(self, engine: ActionHost, record: Any, resource_name: str, details: Any) -> None:
        """Act on a signal whose handler acts."""

    def execute(self, executions: Any, row: dict, deployment_row: dict, model: Any, graph: Any,
                done: frozenset, memo: dict, resumed: bool) -> dict:
        """Walk a workflow execution's graph; the execution as it is then."""

    async def nested_action(self, here: Callable[[], Awaitable[Any]], apart: Callable[[], Awaitable[Any]]) -> Any:
        """A nested stack's action: ``here`` run to its end, or ``apart`` started where the
        stack's actions run (what its owner's check polls)."""
