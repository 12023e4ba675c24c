"""One operation, tried until it succeeds or its retries run out.

Cloudify's rules: a failed script is tried again up to ``max_retries`` times
(the operation's, else the execution's ``task_retries``; -1 means forever),
``retry_interval`` seconds apart; a script's own retry request counts as an
attempt too and may name its own interval; an abort, a refused script path
or a timeout (unless ``timeout_recoverable``) fail at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from stoker.workflows.operation_context import AbortRequested, OperationContext, OperationFailed, RetryRequested
from stoker.workflows.cfy_extensions import PLUGIN as MANAGER_PLUGIN
from stoker.workflows.cfy_extensions.table import run_manager_operation
from stoker.workflows.ctx_server import CtxServer
from stoker.workflows.plugin_envs import task_command, task_viewer
from stoker.workflows.plugin_task import rest_granted
from stoker.workflows.scripts import Script, run_script, script_for


@dataclass
class OperationSpec:
    name: str  # e.g. cloudify.interfaces.lifecycle.create
    implementation: str = ""
    inputs: dict = field(default_factory=dict)
    max_retries: int | None = None
    retry_interval: float | None = None
    timeout: float | None = None
    timeout_recoverable: bool = False
    #: a plugin operation's plugin (its definition in the plan, with its name); None for scripts
    plugin: dict | None = None
    #: the folder its script is read from (the deployment's, or an imported blueprint's files); None: the deployment's
    root: Path | None = None

    @property
    def is_noop(self) -> bool:
        return not self.implementation


@dataclass
class RetryPolicy:
    """The execution's defaults, for operations that declare none (``cfy local``'s: no retries, 1 s)."""

    task_retries: int = 0
    task_retry_interval: float = 1.0


def _plugin_command(ctx: OperationContext, spec: OperationSpec) -> list[str]:
    """The plugin task's command, its plugin looked up as the deployment's creator sees the catalog."""
    manager = ctx.manager
    if manager is None:
        return task_command(spec.plugin, spec.implementation)
    viewer = task_viewer(manager.store, manager.project_id, ctx.tenant_name, ctx.deployment_id)
    return task_command(spec.plugin, spec.implementation, manager.store, viewer)


async def run_operation(server: CtxServer, spec: OperationSpec, make_ctx: Callable[[int], OperationContext],
                        policy: RetryPolicy = RetryPolicy(),
                        on_retry: Callable[[int, str, float], None] = lambda attempt, why, wait: None,
                        attempt: int = 0, pause: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> Any:
    """``make_ctx(retry_number)`` builds each attempt's context (inputs evaluated afresh).

    ``attempt``: the retry this run starts at (a worker that parked the
    operation's retry goes on with it); ``pause``: how the interval before a
    retry passes (a worker parks the step with a countdown instead of sleeping).
    """
    if spec.is_noop:
        return None
    max_retries = policy.task_retries if spec.max_retries is None else spec.max_retries
    interval = policy.task_retry_interval if spec.retry_interval is None else spec.retry_interval
    while True:
        ctx = make_ctx(attempt)
        try:
            if spec.plugin is not None and spec.plugin.get("name") == MANAGER_PLUGIN:
                return await run_manager_operation(ctx, spec.implementation)
            if spec.plugin is not None:
                command = await asyncio.to_thread(_plugin_command, ctx, spec)
                script = Script(Path(spec.implementation), command=command)  # named by its task in logs
                async with rest_granted(ctx):
                    return await run_script(server, ctx, script, spec.timeout, spec.timeout_recoverable)
            else:
                script = script_for(spec.implementation, ctx.operation.inputs, ctx.resource_root)
            return await run_script(server, ctx, script, spec.timeout, spec.timeout_recoverable)
        except AbortRequested as abort:
            raise OperationFailed(f"aborted: {abort}", recoverable=False) from None
        except RetryRequested as retry:
            why, wait = f"retry requested: {retry}", interval if retry.interval is None else retry.interval
            if not _may_retry(attempt, max_retries):
                raise OperationFailed(f"{spec.name}: {why}; no retries left (max_retries {max_retries})") from None
        except OperationFailed as failure:
            if not failure.recoverable or not _may_retry(attempt, max_retries):
                raise
            why, wait = str(failure), interval
        attempt += 1
        on_retry(attempt, why, wait)
        await pause(wait)


def _may_retry(attempt: int, max_retries: int) -> bool:
    return max_retries < 0 or attempt < max_retries
