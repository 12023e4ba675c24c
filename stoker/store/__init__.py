"""Persistence: SQLAlchemy models, the repository the engine uses, Alembic migrations.

SQLite by default (``$STOKER_HOME/stoker.db``), PostgreSQL or any other
SQLAlchemy URL through ``STOKER_DB_URL``. ``open_store()`` is the way in.

Names are imported on first use: SQLAlchemy takes ~0.4 s to import, and
commands that never open the database (``stoker template validate``) should
not pay for it.
"""

import importlib
from typing import Any

_HOMES = {
    "default_url": "db", "open_store": "db",
    "new_engine_id": "locks", "owner_is_dead": "locks",
    "Event": "models", "RawTemplate": "models", "Resource": "models", "Stack": "models",
    "DEFAULT_PROJECT": "repository", "StaleWrite": "repository", "Store": "repository",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'stoker.store' has no attribute {name!r}")
    return getattr(importlib.import_module(f"stoker.store.{_HOMES[name]}"), name)


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
