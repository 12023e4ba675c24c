"""Stack actions started here, run by ``stoker worker`` processes through Celery.

Creates and deletes are spread over the workers, one resource action per
task (``lifecycle`` starts them, ``worker`` runs them); so are the creates of
nested stacks that resources on the workers own, and their deletes.  Actions not spread
over workers yet (update, suspend, resume, check) run here, in-process.
"""

from __future__ import annotations

from typing import Any


from stoker.dispatch import celery_app, lifecycle
from stoker.dispatch.inprocess import InProcess
from stoker.errors import StokerError


class NeedsServerDatabase(StokerError):
    code = "needs-server-database"


def check_database(engine: Any) -> None:
    """Workers on several machines share one PostgreSQL database; SQLite cannot be shared."""
    url = engine.store.engine.url
    if url.get_backend_name() != "postgresql":
        raise NeedsServerDatabase(
            "running on workers needs a PostgreSQL database (--db-url postgresql+psycopg://...), "
            f"not {url.render_as_string(hide_password=True)}")


class CeleryDispatch(InProcess):
    """Creates and deletes through workers; the other actions as ``InProcess``."""

    runs_here = False

    def __init__(self, broker_url: str, queue: str = celery_app.DEFAULT_QUEUE, app: Any = None):
        self.broker_url = broker_url
        self.queue = queue
        self.app = app or celery_app.make_app(broker_url)

    def create(self, engine: Any, stack: Any, timeout_mins: int | None, disable_rollback: bool,
               action: str = "CREATE") -> None:
        if action != "CREATE":  # an adopt takes over existing resources: here, as InProcess
            return super().create(engine, stack, timeout_mins, disable_rollback, action)
        check_database(engine)
        lifecycle.start_create(engine, self.app, self.queue, stack, timeout_mins, disable_rollback)

    async def create_nested(self, engine: Any, stack: Any) -> None:
        """Start a nested stack's create on the workers; its owner resource polls it."""
        await lifecycle.start_nested_create(engine, self.app, self.queue, stack)

    async def delete_nested(self, engine: Any, stack: Any) -> None:
        """Start a nested stack's delete on the workers; its owner resource polls it."""
        await lifecycle.start_nested_delete(engine, self.app, self.queue, stack)

    def delete(self, engine: Any, record: Any) -> None:
        check_database(engine)
        lifecycle.start_delete(engine, self.app, self.queue, record, "DELETE")
