"""Every store test runs on SQLite and on PostgreSQL.

PostgreSQL: ``$STOKER_TEST_PG_URL`` (default: the local server, trust auth).
The session gets a fresh database, each test a fresh schema in it; both are
dropped afterwards. If the server is unreachable, the PostgreSQL variants skip.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import sqlalchemy

from stoker.store import open_store

@pytest.fixture
def store(db_url):
    store = open_store(db_url)
    yield store
    store.close()


@pytest.fixture
def statements(store):
    """``with statements() as sent:`` lists the SQL statements (verb first) sent to the database:
    bulk writes are judged by their round trips, never by a stopwatch."""
    @contextmanager
    def record():
        sent: list[str] = []

        def note(_conn, _cursor, statement, *_rest):
            sent.append(statement.lstrip().split(None, 1)[0].upper())

        sqlalchemy.event.listen(store.engine, "before_cursor_execute", note)
        try:
            yield sent
        finally:
            sqlalchemy.event.remove(store.engine, "before_cursor_execute", note)

    return record


@pytest.fixture
def template_id(store):
    return store.store_template({"heat_template_version": "2021-04-16", "resources": {}})


@pytest.fixture
def stack(store, template_id):
    return store.create_stack("mystack", template_id)
