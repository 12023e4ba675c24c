"""Fixtures of the engine's end-to-end tests.

Every test taking ``engine``, ``db_url`` or ``cli`` runs twice: on a SQLite
file and on PostgreSQL (tests marked ``sqlite_only`` on SQLite only).
PostgreSQL comes from ``pg_database`` in ``tests/conftest.py``:
``$STOKER_TEST_PG_URL`` (default: the local server, trust auth), a fresh
database for the test session; each test gets a fresh schema in it, dropped
afterwards.  When the server is unreachable the PostgreSQL variants skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker.cli import main
from stoker.engine.engine import Engine

from .helpers import Run, process_env, stoker_executable

def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sqlite_only: run on SQLite only (what the test checks does not depend on the "
        "database, and running it twice only costs time)")


def pytest_collection_modifyitems(config, items):
    """Deselect the PostgreSQL variant of tests marked ``sqlite_only``."""
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (item.get_closest_marker("sqlite_only") is not None and callspec is not None
                and callspec.params.get("db_url") == "postgresql"):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """``$STOKER_HOME`` in the test's own folder; no database or plug-ins from the outside."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STOKER_HOME", str(home))
    for name in ("STOKER_DB_URL", "STOKER_PLUGIN_DIRS"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def make_engine(db_url):
    """Engines on the test's database (each its own engine id, as another process would be)."""
    made: list[Engine] = []

    def make(**kwargs) -> Engine:
        engine = Engine(db_url=db_url, **kwargs)
        # Open the database now, in this thread.  Engines open it lazily, and two engines
        # opening a new SQLite file at once from two threads sometimes fail with "database
        # is locked" (PRAGMA journal_mode=WAL while the other one migrates): a store bug with
        # its own report, which must not make the tests that start actions in threads flaky.
        engine.store  # noqa: B018 - the property opens the store
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


@pytest.fixture
def engine(make_engine) -> Engine:
    return make_engine()


@pytest.fixture
def files(tmp_path) -> Path:
    """Where the stacks' ``Stoker::Local::File`` resources go."""
    folder = tmp_path / "files"
    folder.mkdir()
    return folder


class Cli:
    """``cli("stack", "list", ...)`` runs ``stoker --db-url URL stack list ...`` in this process."""

    def __init__(self, db_url: str, plugin_dirs: tuple[str, ...] = ()):
        self.db_url = db_url
        self.plugin_dirs = plugin_dirs

    def __call__(self, *args: str, input: str | None = None) -> Run:
        argv = ["--db-url", self.db_url]
        for folder in self.plugin_dirs:
            argv += ["--plugin-dir", str(folder)]
        argv += [str(a) for a in args]
        result = CliRunner().invoke(main, argv, input=input, catch_exceptions=False)
        return Run(argv, result.exit_code, result.stdout, result.stderr)

    def with_plugins(self, *folders) -> "Cli":
        return Cli(self.db_url, tuple(str(f) for f in folders))


@pytest.fixture
def cli(db_url) -> Cli:
    return Cli(db_url)


@pytest.fixture
def stoker_process(db_url, home):
    """Run the installed ``stoker`` executable in a real subprocess, on the test's database."""
    import subprocess

    executable = stoker_executable()

    def run(*args: str, timeout: float = 60, cwd: Path | None = None) -> Run:
        argv = ["--db-url", db_url, *map(str, args)]
        done = subprocess.run([executable, *argv], capture_output=True, text=True, timeout=timeout,
                              env=process_env(home), cwd=cwd)
        return Run(argv, done.returncode, done.stdout, done.stderr)

    run.executable = executable
    return run
