"""Helpers for the engine's end-to-end tests: templates, state snapshots, processes."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "engine"
#: what each resource action and each stack action is called in events
STACK_TYPE = "OS::Heat::Stack"


def template(name: str) -> Path:
    """A template of ``tests/templates/engine``."""
    path = TEMPLATES / name
    assert path.is_file(), path
    return path


def hot(resources: dict, outputs: dict | None = None, parameters: dict | None = None,
        conditions: dict | None = None, version: str = "2018-08-31") -> dict:
    """A HOT template as a dict."""
    data: dict[str, Any] = {"heat_template_version": version}
    if parameters:
        data["parameters"] = parameters
    if conditions:
        data["conditions"] = conditions
    data["resources"] = resources
    if outputs:
        data["outputs"] = outputs
    return data


def write_yaml(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def tres(**props: Any) -> dict:
    return {"type": "OS::Heat::TestResource", "properties": props}


def local_file(path: Path | str, content: Any = "", **extra: Any) -> dict:
    return {"type": "Stoker::Local::File", "properties": {"path": str(path), "content": content}, **extra}


# -- reading a stack's state --------------------------------------------------------------
def resources_by_name(engine, stack: str) -> dict[str, dict]:
    """The stack's current resources (not the replaced ones) by name."""
    rows = engine.resources(stack)
    found = {r["resource_name"]: r for r in rows if not r.get("replaced_by")}
    return found


def statuses(engine, stack: str) -> dict[str, str]:
    return {name: r["resource_status"] for name, r in resources_by_name(engine, stack).items()}


def physical_ids(engine, stack: str) -> dict[str, str]:
    return {name: r["physical_resource_id"] for name, r in resources_by_name(engine, stack).items()}


def resource_events(engine, stack: str) -> list[tuple[str, str]]:
    """``(resource_name, resource_status)`` of every resource event, in order (stack events left out)."""
    return [(e["resource_name"], e["resource_status"]) for e in engine.events(stack)
            if e["resource_type"] != STACK_TYPE]


def stack_events(engine, stack: str) -> list[str]:
    return [e["resource_status"] for e in engine.events(stack) if e["resource_type"] == STACK_TYPE]


def index(events: Sequence[tuple[str, str]], name: str, status: str) -> int:
    """Position of the first ``(name, status)`` event; fails the test when there is none."""
    try:
        return list(events).index((name, status))
    except ValueError:
        raise AssertionError(f"no {status} event for {name} in {events}") from None


def outputs_by_key(outputs: list[dict]) -> dict[str, dict]:
    return {o["output_key"]: o for o in outputs}


def files_under(directory: Path) -> list[str]:
    """Every file (hidden ones too) under ``directory``, relative, sorted."""
    if not directory.exists():
        return []
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02,
               what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except Exception:  # the stack may not exist yet, the database may be busy
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# -- the stoker command ------------------------------------------------------------------
@dataclass
class Run:
    """What one run of ``stoker`` printed, and how it ended."""

    args: Sequence[str]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError as exc:
            raise AssertionError(f"stdout of stoker {' '.join(self.args)} is not JSON ({exc}):\n"
                                 f"{self.stdout}\n--- stderr ---\n{self.stderr}") from None

    def expect(self, code: int) -> "Run":
        assert self.exit_code == code, (
            f"stoker {' '.join(map(str, self.args))} exited {self.exit_code}, expected {code}\n"
            f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}")
        assert "Traceback" not in self.output, self.output
        return self

    @property
    def ok(self) -> "Run":
        return self.expect(0)


def stoker_executable() -> str:
    found = shutil.which("stoker", path=str(Path(sys.executable).parent)) or shutil.which("stoker")
    assert found, "the stoker entry point is not installed"
    return found


def process_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("STOKER_DB_URL", "STOKER_PLUGIN_DIRS", "STOKER_HOME")}
    env.update({"STOKER_HOME": str(home), "COLUMNS": "250", "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def layered_files_template(layers: int = 10, per_layer: int = 20, gate_wait: float = 0.2) -> dict:
    """``layers * per_layer`` ``Stoker::Local::File`` resources under the ``dir`` parameter, in
    layers: a TestResource gate waits ``gate_wait`` seconds before each layer starts, and needs the
    whole layer before it."""
    resources: dict[str, Any] = {}
    previous: list[str] = []
    for layer in range(layers):
        gate = f"gate{layer:02}"
        resources[gate] = {**tres(wait_secs=gate_wait, value=gate), "depends_on": previous}
        previous = []
        for item in range(per_layer):
            name = f"file{layer:02}_{item:02}"
            resources[name] = {
                "type": "Stoker::Local::File",
                "depends_on": gate,
                "properties": {
                    "path": {"list_join": ["/", [{"get_param": "dir"}, f"l{layer:02}", f"{item:02}.txt"]]},
                    "content": f"{layer}/{item}",
                },
            }
            previous.append(name)
    return hot(resources, parameters={"dir": {"type": "string"}},
               outputs={"last": {"value": {"get_attr": [previous[-1], "path"]}}})


def alive(pid: int) -> bool:
    """Is ``pid`` running (a zombie, whose parent has not reaped it yet, is not)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
