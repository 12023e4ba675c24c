"""Fixtures every test folder shares: fresh PostgreSQL databases on the local server.

``$STOKER_TEST_PG_URL`` names the server (default: the local one, trust auth).
Each database is made for its user and dropped afterwards; when the server
cannot be reached, the tests that need it skip, saying why.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import OperationalError
from wheel_cache import PLUGIN_WHEELS

PG_URL = os.environ.get("STOKER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: takes many seconds (processes, servers, package installs): handed out first, spread "
        "over the parallel workers, so that none is left running alone at the end (tests/slow_first.py)")


@pytest.hookimpl(trylast=True)  # after the folders' own hooks have deselected what they drop
def pytest_collection_modifyitems(config, items):
    from slow_first import slow_first

    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    items[:] = slow_first(items, lambda item: item.get_closest_marker("slow") is not None, _slow_group, workers)


def _slow_group(item) -> str:
    """A module marked slow as a whole moves as one (its tests may share a module-scoped server);
    a test marked on its own moves alone."""
    marks = getattr(getattr(item, "module", None), "pytestmark", [])
    whole = any(mark.name == "slow" for mark in (marks if isinstance(marks, list) else [marks]))
    return item.nodeid.split("::")[0] if whole else item.nodeid


def _admin(url: URL):
    return create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})


@contextmanager
def fresh_pg_database(prefix: str):
    """An AUTOCOMMIT engine on a new database, dropped on exit (skips if no server)."""
    server = _admin(make_url(PG_URL))
    try:
        with server.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as error:
        server.dispose()
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}: {error.orig}")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    database = _admin(make_url(PG_URL).set(database=name))
    try:
        yield database
    finally:
        database.dispose()
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        server.dispose()


@pytest.fixture(autouse=True)
def _rest_manager_of_the_test():
    """The REST manager a test's ``stoker`` command provided (``workflows.rest_manager``), with the
    loopback servers its plugin tasks started, ends with the test: the next one starts afresh."""
    yield
    from stoker.workflows import rest_manager

    rest_manager.stop()


@pytest.fixture(scope="session")
def new_pg_database():
    """``fresh_pg_database`` for fixtures of any scope."""
    return fresh_pg_database


@pytest.fixture(scope="session")
def pg_database():
    """An engine on a database made for this test session."""
    with fresh_pg_database("stoker_test") as database:
        yield database


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A URL to an empty database: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'stoker.db'}"
        return
    database = request.getfixturevalue("pg_database")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with database.connect() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    # named after the schema, so that the connections the test left open end with it: an engine made
    # in-process (the CLI's, under CliRunner) is closed only once collected, and parallel workers
    # keeping such idle pools would exhaust the server's connections
    url = database.url.update_query_dict({"options": f"-csearch_path={schema}", "application_name": schema})
    yield url.render_as_string(hide_password=False)
    with database.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name"),
                     {"name": schema})
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))


#: requirements this test process has already seen the wheel cache hold: checking costs a pip resolution
_FILLED: set[str] = set()


@pytest.fixture
def plugin_wheels(monkeypatch):
    """Plugin virtualenvs (with the real cloudify-common) take their wheels from a cache kept between
    runs; ``plugin_wheels(*requirements)`` puts more in it. What the cache lacks is built from the package
    index the first time: the test is skipped, saying why, when the index cannot be reached."""
    from stoker.workflows import plugin_envs
    from stoker.workflows.operation_context import OperationFailed

    monkeypatch.setenv(plugin_envs.WHEELS_VARIABLE, str(PLUGIN_WHEELS))

    def fill(*requirements: str) -> Path:
        missing = [requirement for requirement in requirements if requirement not in _FILLED]
        if not missing:
            return PLUGIN_WHEELS
        try:
            plugin_envs.fill_cache(missing)
        except OperationFailed as exc:
            pytest.skip(f"the package index is unreachable, so {' '.join(requirements)} cannot be installed "
                        f"into a plugin virtualenv: {str(exc)[-300:]}")
        _FILLED.update(missing)
        return PLUGIN_WHEELS

    fill(plugin_envs.CLOUDIFY_COMMON)
    return fill
