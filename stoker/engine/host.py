"""What a running stack asks of the engine that holds it: the narrow, typed host.

``Stack``, its resources, the action walks and the previews see this Protocol, never the
``Engine`` class, so none of them imports ``engine.py`` (which builds them). ``S`` is the stack
type, left open here so this module needs no import of ``stack.py`` either.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Protocol, TypeVar

from stoker.errors import Problems
from stoker.template.environment import Environment
from stoker.template.template import Template

S = TypeVar("S")


class StackHost(Protocol[S]):
    """Store, type lookup, validation and dispatch: all a stack and its resources call."""

    #: the database the stack's rows live in
    store: Any
    #: where actions run: here or on workers (``stoker.dispatch``)
    dispatch: Any
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
