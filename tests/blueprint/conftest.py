"""Fixtures for the blueprint tests: a private $STOKER_HOME, an engine and the CLI on one database."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.helpers import Run
from stoker.cli import main
from stoker.engine.engine import Engine

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "blueprint"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STOKER_HOME", str(home))
    for name in ("STOKER_DB_URL", "STOKER_SECRET_KEY", "STOKER_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'stoker.db'}"


@pytest.fixture
def engine(sqlite_url):
    engine = Engine(db_url=sqlite_url)
    yield engine
    engine.close()


def cli_on(db_url: str):
    """``cli("blueprint", "list")`` runs ``stoker --db-url URL blueprint list`` in this process."""

    def run(*args: str) -> Run:
        argv = ["--db-url", db_url, *map(str, args)]
        result = CliRunner().invoke(main, argv, catch_exceptions=False)
        return Run(argv, result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def cli(sqlite_url):
    return cli_on(sqlite_url)


@pytest.fixture
def write(tmp_path):
    """``write("name.yaml", text)``: a blueprint file in the test's folder."""

    def make(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return make
