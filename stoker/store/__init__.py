"""Persistence: SQLAlchemy models, the repository the engine uses, Alembic migrations.

SQLite by default (``$STOKER_HOME/stoker.db``), PostgreSQL or any other
SQLAlchemy URL through ``STOKER_DB_URL``. ``open_store()`` is the way in.
"""

from stoker.store.db import default_url, open_store
from stoker.store.locks import new_engine_id, owner_is_dead
from stoker.store.models import Event, RawTemplate, Resource, Stack
from stoker.store.repository import DEFAULT_PROJECT, StaleWrite, Store

__all__ = [
    "DEFAULT_PROJECT",
    "Event",
    "RawTemplate",
    "Resource",
    "Stack",
    "StaleWrite",
    "Store",
    "default_url",
    "new_engine_id",
    "open_store",
    "owner_is_dead",
]
