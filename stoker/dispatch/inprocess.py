"""Where a stack action runs by default: here, in this process, to its end (today's path)."""

from __future__ import annotations

from typing import Any, Callable


class InProcess:
    """Walks the stack's graph on this process's event loop, holding the stack lock meanwhile."""

    #: actions run in this process (their events can be pushed to a display here)
    runs_here = True

    def create(self, engine: Any, stack: Any, timeout_mins: int | None, disable_rollback: bool,
               action: str = "CREATE") -> None:
        """``action`` is CREATE, or ADOPT for a stack adopting existing resources."""
        engine.store.acquire_lock(stack.id, engine.engine_id, action)
        with engine.holding(stack.id):
            engine._run(engine.run_create(stack, timeout_mins, disable_rollback, action))

    def delete(self, engine: Any, record: Any) -> None:
        record = engine._stop_running_action(record)  # a running create is cancelled first, as in Heat
        with engine._locked(record, "DELETE"):
            engine._run(engine.run_delete(engine.runtime(record), "DELETE"))

    def update(self, engine: Any, record: Any, prepare: Callable[[], tuple[Any, Any]], rollback: bool,
               action: str = "UPDATE", given: dict | None = None) -> Any:
        """``prepare`` checks and stores the new definition once the lock is held; returns the new stack.
        ``action``: UPDATE, or RESTORE (to a snapshot: ``given`` names it, for the workers' end)."""
        with engine._locked(record, action):
            stack, old = prepare()
            engine._run(engine.run_update(stack, old, rollback, action))
        return stack

    def execute(self, executions: Any, row: dict, deployment_row: dict, model: Any, graph: Any, done: frozenset,
                memo: dict, resumed: bool) -> dict:
        """A workflow execution's graph, walked here to its end; the execution as it ended."""
        return executions.run_here(row, deployment_row, model, graph, done, memo, resumed)

    def signal(self, engine: Any, record: Any, resource_name: str, details: Any) -> None:
        """A signal whose handler acts (a scaling policy's): here, to its end."""
        from stoker.engine import signals

        signals.act(engine, record, resource_name, details)

    def simple(self, engine: Any, record: Any, action: str) -> None:
        """SUSPEND, RESUME, CHECK or SNAPSHOT."""
        with engine._locked(record, action):
            engine._run(engine.run_simple(engine.runtime(record), action))
