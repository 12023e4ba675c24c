"""Fixtures of the composition tests: template trees, environments, nested stacks (SQLite only)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

from stoker.cli import main
from stoker.engine.engine import Engine
from stoker.template.files import load_template_tree

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "composition"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STOKER_HOME", str(home))
    for name in ("STOKER_DB_URL", "STOKER_PLUGIN_DIRS", "STOKER_MAX_NESTED_DEPTH", "STOKER_MAX_RESOURCES"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def db_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 's.db'}"


@pytest.fixture
def make_engine(db_url):
    made: list[Engine] = []

    def make(**kwargs) -> Engine:
        engine = Engine(db_url=db_url, **kwargs)
        engine.store  # noqa: B018 - open the database in this thread
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


@pytest.fixture
def engine(make_engine) -> Engine:
    return make_engine()


class Run:
    def __init__(self, code: int, stdout: str, stderr: str):
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def cli(db_url) -> Callable[..., Run]:
    def run(*args: Any) -> Run:
        result = CliRunner().invoke(main, ["--db-url", db_url, *map(str, args)], catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def tree(tmp_path) -> Callable[..., Path]:
    """``tree({"a.yaml": {...} or "text", "sub/b.yaml": ...})`` writes files; returns the folder."""
    root = tmp_path / "tree"

    def write(files: dict[str, Any]) -> Path:
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
        return root

    return write


def load(path: Path | str, *envs: Path | str):
    return load_template_tree(path, list(envs))


def hot(resources: dict, outputs: dict | None = None, parameters: dict | None = None) -> dict:
    data: dict[str, Any] = {"heat_template_version": "2018-08-31"}
    if parameters:
        data["parameters"] = parameters
    data["resources"] = resources
    if outputs:
        data["outputs"] = outputs
    return data


def outputs(result_or_list) -> dict:
    items = result_or_list["outputs"] if isinstance(result_or_list, dict) else result_or_list
    return {o["output_key"]: o.get("output_value") for o in items}


def codes(exc_info) -> list[str]:
    return [p.code for p in exc_info.value.problems]


def messages(exc_info) -> str:
    return "\n".join(f"{p.code}: {'.'.join(map(str, p.path or ()))}: {p.message}" for p in exc_info.value.problems)


def in_thread(fn: Callable[[], Any]):
    """Run ``fn`` in a daemon thread; returns (thread, box) where box holds 'value' or 'error'."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-checked by the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
