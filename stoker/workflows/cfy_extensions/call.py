"""What one of the manager's own operations sees: its inputs as Cloudify resolves them, the
instance's runtime properties, a logger, and the project's manager (``LocalManager``).

The operation runs in a thread (the manager's calls block on the store); ``update`` stores
the runtime properties changed so far (Cloudify's ``ctx.instance.update()``), and whatever is
left is stored when the operation ends, whether it succeeded or not.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from stoker.workflows.operation_context import InstanceView, OperationContext, OperationFailed
from stoker.workflows.manager import LocalManager


class Refused(OperationFailed):
    """A ``NonRecoverableError`` of the manager's operations: no retry."""

    def __init__(self, message: str):
        super().__init__(message, recoverable=False)


class Call:
    def __init__(self, ctx: OperationContext, manager: LocalManager, loop: asyncio.AbstractEventLoop):
        self.ctx = ctx
        self.manager = manager
        self._loop = loop
        #: the instance whose runtime properties the operation keeps (a relationship's: its target's)
        self.instance: InstanceView = ctx.instance if ctx.instance is not None else ctx.target.instance  # type: ignore[union-attr]
        self._stored = copy.deepcopy(self.instance.runtime_properties)

    @property
    def runtime(self) -> dict:
        return self.instance.runtime_properties

    @property
    def deployment_id(self) -> str:
        return self.ctx.deployment_id

    def input(self, key: str) -> Any:
        """Cloudify's ``get_desired_operation_input``: the operation's input, else the runtime
        property, else the node property of that name (the first that is set)."""
        node = self.ctx.node if self.ctx.node is not None else self.ctx.target.node  # type: ignore[union-attr]
        return self.ctx.operation.inputs.get(key) or self.runtime.get(key) or node.properties.get(key)

    def config(self, key: str = "resource_config") -> dict:
        value = self.input(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise Refused(f"{key} must be a dict, not {type(value).__name__}")
        return value

    def log(self, message: str, level: str = "info") -> None:
        self._loop.call_soon_threadsafe(self.ctx.log, level, message)

    def update(self) -> None:
        """Store the runtime properties changed since the last store (from the operation's thread)."""
        asyncio.run_coroutine_threadsafe(self.store_changes(), self._loop).result()

    async def store_changes(self) -> None:
        """On the loop: persist each top-level property added, changed or removed since the last store."""
        current = self.runtime
        changed = [key for key in set(current) | set(self._stored) if current.get(key, _GONE) != self._stored.get(key, _GONE)]
        for key in sorted(changed):
            await self.ctx.persist(self.instance, [key])
        self._stored = copy.deepcopy(current)


_GONE = object()
