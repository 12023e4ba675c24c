"""Alembic environment: migrates the connection ``stoker.store.db`` hands over.

That connection is already inside a transaction holding the migration lock,
so the whole upgrade commits or rolls back as one.
"""

from alembic import context

from stoker.store.models import metadata

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=metadata,
    render_as_batch=True,  # SQLite can only ALTER tables by copying them
)
with context.begin_transaction():
    context.run_migrations()
