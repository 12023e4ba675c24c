"""Servers for the API tests, started once per session: ``noauth_server`` (no
authentication, SQLite) and ``token_server`` (tokens of projects alpha and
beta, SQLite).  ``test_postgres.py`` starts its own on a fresh PostgreSQL database.
"""

from __future__ import annotations

import pytest

from .forked_cli import ForkedCli
from .helpers import child_env, create_token, sqlite_server, start_server


@pytest.fixture(scope="session")
def noauth_server(tmp_path_factory):
    yield from sqlite_server(tmp_path_factory, "noauth")


@pytest.fixture(scope="session")
def token_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("token")
    db_url = f"sqlite:///{tmp / 'stoker.db'}"
    tokens = {project: create_token(db_url, project) for project in ("alpha", "beta")}
    server = start_server(tmp, db_url, auth="token")
    server.tokens = tokens
    yield server
    server.stop()


@pytest.fixture(scope="module")
def openstack_cli(tmp_path_factory) -> ForkedCli:
    """The real ``openstack``, imported once for the module (each command a fork of that process)."""
    folder = tmp_path_factory.mktemp("openstack")
    return ForkedCli("openstack", child_env(folder), folder)
