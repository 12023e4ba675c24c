"""Stack actions started here, run by ``stoker worker`` processes through Celery.

Every stack action (create, adopt, delete, update with its rollback,
suspend, resume, check, a snapshot and its restore) and every signal whose handler acts is spread over
the workers, batches of ready resources per task (``stack_actions`` starts
them, ``worker`` runs them); so are the actions of nested stacks that
resources on the workers own (each a traversal of its own, which the owner
resource polls), and workflow executions, one step per task (``execution_steps``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from stoker.dispatch import celery_app, execution_steps, stack_actions
from stoker.dispatch.inprocess import InProcess
from stoker.errors import StokerError

if TYPE_CHECKING:  # pragma: no cover
    from celery import Celery

    from stoker.engine.host import ActionHost
    from stoker.engine.stack import Stack
    from stoker.store.models import Stack as StackRecord


class NeedsServerDatabase(StokerError):
    code = "needs-server-database"


def check_database(engine: ActionHost) -> None:
    """Workers on several machines share one PostgreSQL database; SQLite cannot be shared."""
    check_store(engine.store)


def check_store(store: Any) -> None:
    """``check_database`` of a store (or anything with its SQLAlchemy ``engine``)."""
    url = store.engine.url
    if url.get_backend_name() != "postgresql":
        raise NeedsServerDatabase(
            "running on workers needs a PostgreSQL database (--db-url postgresql+psycopg://...), "
            f"not {url.render_as_string(hide_password=True)}")


class CeleryDispatch(InProcess):
    """Stack actions and workflow executions through workers."""

    runs_here = False

    def __init__(self, broker_url: str, queue: str = celery_app.DEFAULT_QUEUE, app: Celery | None = None):
        self.broker_url = broker_url
        self.queue = queue
        self.app = app or celery_app.make_app(broker_url)

    def create(self, engine: ActionHost, stack: Stack, timeout_mins: int | None, disable_rollback: bool,
               action: str = "CREATE") -> None:
        check_database(engine)
        stack_actions.start_create(engine, self.app, self.queue, stack, timeout_mins, disable_rollback, action)

    async def nested_action(self, here: Callable[[], Awaitable[Any]], apart: Callable[[], Awaitable[Any]]) -> Any:
        """A nested stack's action (``InProcess.nested_action``): started on the workers, returning
        what its owner's check polls, so that the owner holds no worker slot its nested resources need."""
        return await apart()

    async def start_nested(self, engine: ActionHost, stack: Stack, action: str, traversal_id: str,
                           previous: dict | None = None) -> None:
        """Start a nested stack's action on the workers as traversal ``traversal_id`` (its owner
        resource polls it; the id is chosen by the owner first, so that a worker lost meanwhile
        leaves its successor what it started: ``nested_begun``); ``previous``: an update's inputs
        as they were."""
        await stack_actions.start_nested(engine, self.app, self.queue, stack, action, traversal_id, previous)

    def nested_begun(self, engine: ActionHost, traversal_id: str) -> bool:
        """Whether a nested stack's traversal a lost worker was starting was stored (it then runs)."""
        return stack_actions.nested_begun(engine, self.app, self.queue, traversal_id)

    def delete(self, engine: ActionHost, record: StackRecord) -> None:
        """An action running on the stack (on the workers, its nested stacks' too) is cancelled
        first, as in-process; the delete starts once it has let the stack go."""
        check_database(engine)
        record = engine.stop_running_action(record)
        stack_actions.start_on_stored(engine, self.app, self.queue, record, "DELETE")

    def update(self, engine: ActionHost, record: StackRecord, prepare: Callable[[], tuple[Stack, Stack]],
               rollback: bool, action: str = "UPDATE", given: dict | None = None) -> Stack:
        check_database(engine)
        return stack_actions.start_update(engine, self.app, self.queue, record, prepare, rollback, action, given)

    def signal(self, engine: ActionHost, record: StackRecord, resource_name: str, details: Any) -> None:
        """A signal whose handler acts (a scaling policy's): the workers act on it; answered at once."""
        check_database(engine)
        stack_actions.start_signal(engine, self.app, self.queue, record, resource_name, details)

    def simple(self, engine: ActionHost, record: StackRecord, action: str) -> None:
        check_database(engine)
        stack_actions.start_on_stored(engine, self.app, self.queue, record, action)

    def execute(self, executions: Any, row: dict, deployment_row: dict, model: Any, graph: Any, done: frozenset,
                memo: dict, resumed: bool) -> dict:
        """Enqueue the execution's steps; the execution as it started."""
        check_store(executions.records)
        execution_steps.start(executions, self.app, self.queue, row, deployment_row, model, graph, resumed)
        return executions.get(row["id"])
