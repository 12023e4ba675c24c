"""An engine on a fresh database, and blueprints written into a folder of their own."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from stoker.engine.engine import Engine


@pytest.fixture
def engine(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    engine = Engine(db_url=f"sqlite:///{tmp_path / 'stoker.db'}")
    yield engine
    engine.close()


@pytest.fixture
def any_engine(db_url, tmp_path, monkeypatch):
    """``engine`` on SQLite and on PostgreSQL."""
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    engine = Engine(db_url=db_url)
    yield engine
    engine.close()


#: what every test blueprint starts with (``write_blueprint`` adds it)
HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"


def write_blueprint(folder: Path, text: str, scripts: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in (scripts or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    path = folder / "blueprint.yaml"
    path.write_text(HEADER + textwrap.dedent(text).lstrip("\n"))
    return path


def deploy(engine: Engine, folder: Path, text: str, scripts: dict[str, str] | None = None,
           name: str = "dep", inputs: dict | None = None, **options) -> str:
    """Upload the blueprint as ``NAME-bp`` and create deployment NAME (``options``: labels, ...)."""
    service = engine.blueprints
    service.upload(write_blueprint(folder, text, scripts), f"{name}-bp")
    service.deployments.create(name, f"{name}-bp", inputs or {}, **options)
    return name


def states(engine: Engine, deployment: str) -> dict[str, str]:
    return {i["node_id"] + ("" if i["index"] == 1 else str(i["index"])): i["state"]
            for i in engine.blueprints.deployments.node_instances(deployment)}


def runtime(engine: Engine, deployment: str, node: str) -> dict:
    [found] = [i for i in engine.blueprints.deployments.node_instances(deployment) if i["node_id"] == node]
    return found["runtime_properties"]
