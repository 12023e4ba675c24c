"""Where the database is, how to connect to it, and keeping its schema current."""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import (Column, Connection, Engine, MetaData, PrimaryKeyConstraint, String, Table, create_engine,
                        event, inspect, text)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from stoker.errors import DatabaseAway, DatabaseUnavailable
from stoker.home import private_file, stoker_home
from stoker.store.models import partial_indexes_for
from stoker.store.repository import Store

MIGRATIONS = Path(__file__).with_name("migrations")


def default_url() -> str:
    """``$STOKER_DB_URL``, else SQLite in ``$STOKER_HOME`` (``~/.local/share/stoker``)."""
    if url := os.environ.get("STOKER_DB_URL"):
        return url
    return f"sqlite:///{private_file(stoker_home(create=True) / 'stoker.db')}"


def open_store(url: str | None = None, lock_timeout: float = 60.0) -> Store:
    """Connect, bring the schema up to date, and return the repository; a database that cannot
    be opened is one ``DatabaseUnavailable`` naming the URL (password hidden) and the cause."""
    url = url or default_url()
    try:
        engine = make_engine(url)
        upgrade(engine)
    except (ArgumentError, NoSuchModuleError, ImportError, DBAPIError, OSError, ValueError) as exc:
        unavailable = DatabaseAway if isinstance(exc, DBAPIError) else DatabaseUnavailable
        raise unavailable(f"cannot open the database {_shown_url(url)}: {_cause(url, exc)}") from None
    return Store(engine, lock_timeout=lock_timeout)


def _shown_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url[:200])  # not a URL at all: shown as given, bounded


def _cause(url: str, exc: Exception) -> str:
    """The first line of what went wrong, in words a user can act on."""
    if isinstance(exc, (ArgumentError, NoSuchModuleError)):
        return "not a SQLAlchemy database URL of a known dialect (e.g. sqlite:///path or postgresql+psycopg://...)"
    if isinstance(exc, ImportError):
        return f"its driver is not installed ({exc.name or exc})"
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and not parsed.database.startswith("file:"):
        folder = Path(parsed.database).parent
        if not folder.is_dir():
            return f"the folder {folder} does not exist"
    cause = getattr(exc, "orig", None) or exc
    return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__


def _json_loads(text: str | bytes):
    """``json.loads``, minus the parser for the empty values most JSON columns hold (text from
    SQLite, bytes from psycopg)."""
    if text in ("{}", b"{}"):
        return {}
    if text in ("[]", b"[]"):
        return []
    return json.loads(text)


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        partial_indexes_for(parsed.get_backend_name())
        return create_engine(parsed, pool_pre_ping=True, json_deserializer=_json_loads)
    in_memory = parsed.database in (None, "", ":memory:") or parsed.database.startswith("file:")
    if not in_memory and Path(parsed.database).parent.is_dir():
        private_file(Path(parsed.database))  # 0600 as the default one: it holds every project's stacks
    engine = create_engine(
        parsed,
        json_deserializer=_json_loads,
        connect_args={"check_same_thread": False},
        # An in-memory database lives in one connection, so share that one.
        poolclass=StaticPool if in_memory else None,
    )
    _tune_sqlite(engine)
    return engine


def _tune_sqlite(engine: Engine) -> None:
    """WAL so readers never block the writer; we issue BEGIN ourselves.

    pysqlite's own transaction handling never begins a transaction before DDL
    and starts writes with a plain BEGIN, which in WAL mode fails at once
    (instead of waiting) when a read turns into a write after another process
    committed. So writers start with BEGIN IMMEDIATE (see ``Store._write``).
    """

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        # switching to WAL needs a moment alone with the file: only the first opener does it
        if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Durable at every checkpoint; an OS crash may lose the last commits, never corrupt.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    database = engine.url.database
    in_memory = database in (None, "", ":memory:") or database.startswith("file:")
    lock = _WRITE_LOCKS.setdefault(str(database), WriterLock(None if in_memory else database + "-writer"))

    @event.listens_for(engine, "begin")
    def on_begin(conn: Connection) -> None:
        if not conn.get_execution_options().get("stoker_write"):
            conn.exec_driver_sql("BEGIN")
            return
        lock.acquire()
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            lock.release()
            raise
        _HOLDING.add(id(conn.connection.dbapi_connection))

    _release_after(engine.dialect, "do_commit", lock)
    _release_after(engine.dialect, "do_rollback", lock)


class WriterLock:
    """One write transaction at a time per SQLite file: this process's threads queue on a lock,
    and processes (``stoker api --workers N``, a CLI beside a server) on an ``flock`` of a file
    beside the database, taken by a process's first writer in line and dropped with its commit.

    SQLite's own busy handler lets a waiting writer sleep 1, 2, 5 ... 100 ms between tries: with
    many threads writing, a free database waited and the last in line waited longest; with two
    worker processes, one process's writers slept while the other's took turns (201 p99 1.7 s).
    A waiter on ``flock`` wakes as the file is released.  The file is opened per transaction
    (closing it drops the lock), so a process keeps no descriptor of a database it is done with.
    """

    def __init__(self, path: str | None):
        self._path = path
        self._lock = threading.RLock()
        self._depth = 0  # (changed by the lock's holder only)
        self._fd: int | None = None

    def acquire(self) -> None:
        self._lock.acquire()
        self._depth += 1
        if self._depth == 1 and self._path is not None:
            try:
                self._fd = _locked_file(self._path)
            except BaseException:
                self._depth -= 1
                self._lock.release()
                raise

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        self._lock.release()


def _locked_file(path: str) -> int | None:
    """A descriptor of ``path`` holding its exclusive ``flock`` (waited for); None where the file
    cannot be made (a read-only folder: SQLite's busy handler is then the only queue)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


#: the writer lock of each SQLite file this process opened
_WRITE_LOCKS: dict[str, WriterLock] = {}
#: the (ids of the) SQLite connections whose write transaction holds its file's lock
_HOLDING: set[int] = set()


def _release_after(dialect: Any, method: str, lock: WriterLock) -> None:
    """Release the write lock once the transaction's COMMIT (or ROLLBACK) is done, not before
    (SQLAlchemy's commit event comes before it)."""
    ends = getattr(dialect, method)

    def ended(dbapi_connection: Any) -> None:
        try:
            ends(dbapi_connection)
        finally:
            held = id(dbapi_connection.dbapi_connection)
            if held in _HOLDING:
                _HOLDING.discard(held)
                lock.release()

    setattr(dialect, method, ended)


def head_revision() -> str:
    """The newest migration, from file names (importing Alembic costs ~0.2 s)."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def current_revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


#: Alembic's own bookkeeping table, as Alembic creates it
VERSION_TABLE = Table("alembic_version", MetaData(),
                      Column("version_num", String(32), nullable=False),
                      PrimaryKeyConstraint("version_num", name="alembic_version_pkc"))


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest revision; cheap when it is there already.

    A new database is built from the models in one step and stamped with
    the newest revision (no Alembic import, no replay of every migration);
    migrations only upgrade databases made by an older Stoker.  Concurrent
    callers are serialised (BEGIN IMMEDIATE on SQLite, an advisory lock on
    PostgreSQL) and re-check, so only one of them creates or migrates.
    """
    head = head_revision()
    with engine.connect() as conn:
        if current_revision(conn) == head:
            return
    with engine.connect().execution_options(stoker_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('stoker-migrations'))"))
        current = current_revision(conn)
        if current == head:
            return
        if current is None and not inspect(conn).get_table_names():
            create_schema(conn, head)
        else:
            migrate(conn)


def register_tables() -> None:
    """Put every table module's tables on the models' metadata (each declares its own there)."""
    from stoker.store import api_tables  # noqa: F401 - the API's tables live in the same database
    from stoker.store import audit_records  # noqa: F401 - the audit log of Cloudify's API
    from stoker.store import deployment_updates  # noqa: F401 - deployment updates
    from stoker.store import filter_records  # noqa: F401 - saved deployment filters
    from stoker.store import group_tables  # noqa: F401 - deployment and execution groups
    from stoker.store import manager_snapshots  # noqa: F401 - whole-server snapshots (cfy snapshots)
    from stoker.store import modification_records  # noqa: F401 - deployment modifications
    from stoker.store import plugin_packages  # noqa: F401 - uploaded plugins
    from stoker.store import plugins_updates  # noqa: F401 - plugins updates
    from stoker.store import provider_records  # noqa: F401 - secrets providers
    from stoker.store import schedule_records  # noqa: F401 - execution schedules
    from stoker.store import site_records  # noqa: F401 - sites
    from stoker.store import snapshots  # noqa: F401 - stack snapshots


def create_schema(conn: Connection, revision: str) -> None:
    """Every table the models declare, stamped as ``revision``."""
    from stoker.store.models import metadata

    register_tables()
    # the caller saw no table, in this transaction: asking again for each of them (a query
    # apiece, SQLAlchemy's default) changes nothing
    metadata.create_all(conn, checkfirst=False)
    VERSION_TABLE.create(conn)
    conn.execute(VERSION_TABLE.insert().values(version_num=revision))


def migrate(conn: Connection) -> None:
    """Run Alembic's migrations up to the newest, inside the caller's transaction."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    command.upgrade(config, "head")
