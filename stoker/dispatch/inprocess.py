"""Where a stack action runs by default: here, in this process, to its end (today's path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:  # pragma: no cover
    from stoker.engine.host import ActionHost
    from stoker.engine.stack import Stack
    from stoker.store.models import Stack as StackRecord


class InProcess:
    """Walks the stack's graph on this process's event loop, holding the stack lock meanwhile."""

    #: actions run in this process (their events can be pushed to a display here)
    runs_here = True

    def create(self, engine: ActionHost, stack: Stack, timeout_mins: int | None, disable_rollback: bool,
               action: str = "CREATE") -> None:
        """``action`` is CREATE, or ADOPT for a stack adopting existing resources."""
        if stack.record.lock_owner != engine.engine_id:  # taken with the row (``Engine.save_new_stack``)
            engine.store.acquire_lock(stack.id, engine.engine_id, action)
        with engine.holding(stack.id):
            engine.run(engine.run_create(stack, timeout_mins, disable_rollback, action))

    def delete(self, engine: ActionHost, record: StackRecord) -> None:
        record = engine.stop_running_action(record)  # a running create is cancelled first, as in Heat
        with engine.locked(record, "DELETE"):
            engine.run(engine.run_delete(engine.runtime(record), "DELETE"))

    def update(self, engine: ActionHost, record: StackRecord, prepare: Callable[[], tuple[Stack, Stack]],
               rollback: bool) -> Stack:
        """``prepare`` checks and stores the new definition once the lock is held; returns the new stack."""
        with engine.locked(record, "UPDATE"):
            stack, old = prepare()
            engine.run(engine.run_update(stack, old, rollback))
        return stack

    async def nested_action(self, here: Callable[[], Awaitable[Any]], apart: Callable[[], Awaitable[Any]]) -> Any:
        """A nested stack's action, its owner resource offering both ways (as an httpx client hands
        its request to whichever transport it holds): here, run to its end, nothing to poll (None)."""
        return await here()

    def execute(self, executions: Any, row: dict, deployment_row: dict, model: Any, graph: Any, done: frozenset,
                memo: dict, resumed: bool) -> dict:
        """A workflow execution's graph, walked here to its end; the execution as it ended."""
        return executions.run_here(row, deployment_row, model, graph, done, memo, resumed)

    def signal(self, engine: ActionHost, record: StackRecord, resource_name: str, details: Any) -> None:
        """A signal whose handler acts (a scaling policy's): here, to its end."""
        from stoker.engine import signals

        signals.act(engine, record, resource_name, details)

    def simple(self, engine: ActionHost, record: StackRecord, action: str) -> None:
        """SUSPEND, RESUME or CHECK."""
        with engine.locked(record, action):
            engine.run(engine.run_simple(engine.runtime(record), action))
