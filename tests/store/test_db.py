"""Connecting, default locations and schema migrations."""

from __future__ import annotations

import multiprocessing
import os
import queue
import stat
import time
from contextlib import contextmanager
from importlib import resources

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, inspect, text

from stoker.store import default_url, open_store
from stoker.store import db
from stoker.store.db import MIGRATIONS, head_revision, make_engine, migrate, upgrade
from stoker.store.models import metadata


def test_default_url_is_sqlite_under_stoker_home(monkeypatch, tmp_path):
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    assert default_url() == f"sqlite:///{tmp_path / 'home' / 'stoker.db'}"
    assert (tmp_path / "home").is_dir()


def test_default_home_is_under_local_share(monkeypatch, tmp_path):
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    monkeypatch.delenv("STOKER_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path}/.local/share/stoker/stoker.db"


def test_db_url_overrides(monkeypatch):
    monkeypatch.setenv("STOKER_DB_URL", "postgresql+psycopg://u@h/db")
    assert default_url() == "postgresql+psycopg://u@h/db"


def test_migrations_ship_with_the_package():
    migrations = resources.files("stoker.store") / "migrations"
    for name in ("env.py", "script.py.mako", "versions/0001_initial.py"):
        assert (migrations / name).is_file(), name


def test_head_from_file_names_matches_alembic():
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_heads() == [head_revision()]


def _all_tables() -> MetaData:
    """The engine's models and the REST API's tables: what a database must hold (``db.create_schema``'s)."""
    db.register_tables()
    return metadata


def _assert_schema_is_the_models(engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, _all_tables()) == []
        assert context.get_current_revision() == head_revision()


def test_new_database_is_built_from_the_models_without_migrations(db_url, monkeypatch):
    def refuse(conn):
        raise AssertionError("a new database was migrated instead of created")

    monkeypatch.setattr("stoker.store.db.migrate", refuse)
    store = open_store(db_url)
    tables = set(inspect(store.engine).get_table_names())
    assert {"raw_template", "stack", "resource", "event", "api_token", "alembic_version"} <= tables
    _assert_schema_is_the_models(store.engine)
    store.close()


def test_migrations_from_scratch_build_the_models_schema(db_url):
    """Upgrading an old database must end where creating a new one does."""
    engine = make_engine(db_url)
    with engine.connect().execution_options(stoker_write=True) as conn, conn.begin():
        migrate(conn)
    _assert_schema_is_the_models(engine)
    engine.dispose()


def test_sqlite_settings(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'x.db'}")
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    store.close()


def _write_after_ready(db_url, results):
    store = open_store(db_url)  # at its head already: nothing written
    results.put("ready")
    store.store_template({"b": 2})
    results.put("written")
    store.close()


def test_processes_queue_their_sqlite_writes_on_a_file_lock(tmp_path):
    """Worker processes of one server (or a CLI beside it) wait for another's write transaction on
    an flock of a file beside the database, and go on once it is dropped."""
    path = tmp_path / "x.db"
    store = open_store(f"sqlite:///{path}")
    lock = db._WRITE_LOCKS[str(path)]
    context = multiprocessing.get_context("spawn")  # a forked child would inherit the held lock
    results = context.Queue()
    writer = context.Process(target=_write_after_ready, args=(f"sqlite:///{path}", results))
    lock.acquire()
    try:
        writer.start()
        assert results.get(timeout=60) == "ready"
        with pytest.raises(queue.Empty):
            results.get(timeout=1)  # its write waits for this process's writer
    finally:
        lock.release()
    assert results.get(timeout=60) == "written"
    writer.join(60)
    assert stat.S_IMODE(os.stat(f"{path}-writer").st_mode) == 0o600
    store.close()


def test_in_memory_sqlite_keeps_one_database():
    store = open_store("sqlite://")
    template_id = store.store_template({"a": 1})
    assert store.get_template(template_id).content == {"a": 1}
    store.close()


def test_upgrade_is_idempotent_and_skips_alembic_at_head(db_url, monkeypatch):
    open_store(db_url).close()

    def refuse(*args, **kwargs):
        raise AssertionError("alembic ran on an up-to-date database")

    monkeypatch.setattr("alembic.command.upgrade", refuse)
    started = time.perf_counter()
    store = open_store(db_url)
    elapsed = time.perf_counter() - started
    print(f"\nopening an up-to-date store: {elapsed * 1000:.1f} ms")
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    store.close()


def test_upgrade_runs_pending_migrations(db_url):
    engine = make_engine(db_url)
    upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM alembic_version"))
        for table in reversed(_all_tables().sorted_tables):  # dependents first
            conn.execute(text(f"DROP TABLE {table.name}"))
    upgrade(engine)
    assert "stack" in inspect(engine).get_table_names()
    engine.dispose()


def _open(url, results):
    try:
        open_store(url).close()
        results.put("ok")
    except Exception as error:  # reported to the parent
        results.put(repr(error))


def test_concurrent_first_opens_migrate_once(db_url):
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=_open, args=(db_url, results)) for _ in range(4)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join()
    assert outcomes == ["ok"] * 4


@contextmanager
def _upgraded_after(engine, revision: str):
    """A connection to a database migrated to ``revision``, for the test to store rows as they were then;
    the block over, the database is migrated to the head."""
    from alembic import command

    with engine.connect().execution_options(stoker_write=True) as conn, conn.begin():
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        yield conn
        command.upgrade(config, "head")


def test_0009_keeps_each_software_config_text_as_a_json_string(db_url):
    """A config stored as text before 0009 reads back as that same text after it."""
    from stoker.store.software import SoftwareStore

    engine = make_engine(db_url)
    with _upgraded_after(engine, "0008") as conn:
        conn.execute(text("INSERT INTO api_software_config (id, project_id, name, \"group\", config, created_at) "
                          "VALUES ('c1', 'p', 'old', 'script', '#!/bin/sh\necho {\"a\": 1}', CURRENT_TIMESTAMP), "
                          "('c2', 'p', 'none', 'script', NULL, CURRENT_TIMESTAMP)"))
    software = SoftwareStore(engine)
    assert software.get_config("p", "c1")["config"] == '#!/bin/sh\necho {"a": 1}'
    assert software.get_config("p", "c2")["config"] is None
    made = software.create_config("p", "new", "component", {"configs": [{"tool": "script"}]}, [], [], {})
    assert software.get_config("p", made["id"])["config"] == {"configs": [{"tool": "script"}]}
    _assert_schema_is_the_models(engine)
    engine.dispose()


def test_0015_keeps_plugins_stored_before_it_for_every_tenant(db_url):
    """Plugins stored before 0015 were every tenant's: after it they are global, the default project's."""
    from types import SimpleNamespace

    from stoker.store.plugin_packages import Owner, PluginPackages, Viewer

    engine = make_engine(db_url)
    with _upgraded_after(engine, "0014") as conn:
        conn.execute(text("INSERT INTO plugin_package (name, version, sha256, archive, uploaded_at) "
                          "VALUES ('old-plugin', '1.0', 'abc', :archive, CURRENT_TIMESTAMP)"), {"archive": b"tgz"})
    [(key, owner)] = PluginPackages(SimpleNamespace(engine=engine)).owners().items()
    assert (key, owner.project_id, owner.visibility, owner.sha256) == (("default", "old-plugin", "1.0"), "default",
                                                                        "global", "abc")
    assert Viewer("another").sees(owner)
    # the tenant is in the key: another tenant may hold its own plugin of that name and version
    packages = PluginPackages(SimpleNamespace(engine=engine))
    packages.put("old-plugin", "1.0", "def", b"tgz2", Owner("another", "tenant", "bob"))
    assert sorted(packages.owners()) == [("another", "old-plugin", "1.0"), ("default", "old-plugin", "1.0")]
    assert packages.archive("another", "old-plugin", "1.0") == b"tgz2"
    _assert_schema_is_the_models(engine)
    engine.dispose()


def test_0029_moves_passwords_to_accounts_and_keeps_every_tenant(db_url):
    """Users stored before 0029 (a password hash per tenant row) log in with that password after it, and their
    tenants exist on their own."""
    from stoker.api.cloudify.passwords import check_password, hash_password
    from stoker.api.cloudify.users import UserStore

    engine = make_engine(db_url)
    hashed = hash_password("old-Pass-1")
    with _upgraded_after(engine, "0028") as conn:
        conn.execute(text("INSERT INTO api_user (name, tenant, role, password_hash, created_at) VALUES "
                          "('ann', 'default_tenant', 'manager', :h, CURRENT_TIMESTAMP), "
                          "('ann', 'team', 'viewer', :h, CURRENT_TIMESTAMP)"), {"h": hashed})
    users = UserStore(engine)
    assert check_password("old-Pass-1", users.password_hash("ann"))
    assert users.tenants() == ["default_tenant", "team"]
    assert users.accounts("ann")[0]["tenants"] == {"default_tenant": "manager", "team": "viewer"}
    _assert_schema_is_the_models(engine)
    engine.dispose()
