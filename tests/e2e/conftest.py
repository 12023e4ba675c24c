"""Shared fixtures for the end-to-end tests: run the ``stoker`` command and read its output.

``stoker`` runs the command in-process through click's ``CliRunner`` (fast),
from inside ``tests/templates/`` so that templates are named by short relative
paths (``invalid/dependencies.yaml``) and those same paths come back in the
``file`` of every error.  ``stoker_process`` runs the installed entry point in
a real subprocess, for the few tests that must see the real thing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pytest
from click.testing import CliRunner

from stoker.cli import main

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@dataclass
class Run:
    """What one run of ``stoker`` printed, and how it ended."""

    args: Sequence[str]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError as exc:  # pragma: no cover - shown when a test goes wrong
            raise AssertionError(f"stdout of {' '.join(self.args)} is not JSON ({exc}):\n"
                                 f"{self.stdout}\n--- stderr ---\n{self.stderr}") from None

    @property
    def output(self) -> str:
        """Everything printed, both streams."""
        return self.stdout + self.stderr

    def expect(self, code: int) -> "Run":
        assert self.exit_code == code, (
            f"stoker {' '.join(self.args)} exited {self.exit_code}, expected {code}\n"
            f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}")
        return self

    @property
    def warnings(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("WARNING: ")]


class Stoker:
    """``stoker(...)`` runs any command; the helpers run the template commands with ``-f json``."""

    def __call__(self, *args: str) -> Run:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        return Run(args, result.exit_code, result.stdout, result.stderr)

    @staticmethod
    def _inputs(template: str, environments: Iterable[str] = (), params: Iterable[str] = (),
                extra: Iterable[str] = ()) -> list[str]:
        args = ["-t", str(template)]
        for env in environments:
            args += ["-e", str(env)]
        for param in params:
            args += ["-P", param]
        return args + list(extra)

    def validate(self, template: str, *, env: Iterable[str] = (), params: Iterable[str] = (),
                 extra: Iterable[str] = (), fmt: str = "json") -> Run:
        return self("template", "validate", *self._inputs(template, env, params, extra), "-f", fmt)

    def resolve(self, template: str, *, env: Iterable[str] = (), params: Iterable[str] = (),
                extra: Iterable[str] = (), fmt: str = "json") -> Run:
        return self("template", "resolve", *self._inputs(template, env, params, extra), "-f", fmt)

    # -- the common cases, with their exit codes checked -----------------------------
    def valid(self, template: str, **kwargs: Any) -> dict:
        """``template validate`` succeeds; its JSON document."""
        return self.validate(template, **kwargs).expect(0).json

    def resolved(self, template: str, **kwargs: Any) -> dict:
        """``template resolve`` succeeds; its JSON document."""
        return self.resolve(template, **kwargs).expect(0).json

    def validate_errors(self, template: str, **kwargs: Any) -> list[dict]:
        """``template validate`` fails; its list of errors."""
        errors = self.validate(template, **kwargs).expect(1).json
        assert isinstance(errors, list)
        return errors

    def validate_warnings(self, template: str, **kwargs: Any) -> list[dict]:
        """``template validate`` succeeds (Heat's verdict) with warnings; the list of them."""
        return self.valid(template, **kwargs).get("Warnings", [])

    def resolve_errors(self, template: str, **kwargs: Any) -> list[dict]:
        """``template resolve`` fails; its list of errors (unwrapped from ``{"errors": ...}``)."""
        document = self.resolve(template, **kwargs).expect(1).json
        assert list(document) == ["errors"], document
        return document["errors"]


@pytest.fixture
def stoker(monkeypatch: pytest.MonkeyPatch) -> Stoker:
    """Run ``stoker`` in-process, from inside ``tests/templates/``."""
    monkeypatch.chdir(TEMPLATES)
    return Stoker()


def _stoker_executable() -> str:
    found = shutil.which("stoker", path=str(Path(sys.executable).parent)) or shutil.which("stoker")
    # the install is part of what is tested: a missing entry point is a failure, not a skip
    assert found, "the stoker entry point is not installed"
    return found


@pytest.fixture
def stoker_process():
    """Run the installed ``stoker`` entry point in a subprocess (cwd: ``tests/templates/``)."""
    executable = _stoker_executable()

    def run(*args: str, timeout: float = 60) -> Run:
        env = dict(os.environ, COLUMNS="200")
        done = subprocess.run([executable, *args], cwd=TEMPLATES, capture_output=True, text=True,
                              timeout=timeout, env=env)
        return Run(args, done.returncode, done.stdout, done.stderr)

    return run


def places(errors: list[dict]) -> list[tuple]:
    """Errors as ``(path, code, line, column)``, for exact comparison."""
    return [(e["path"], e["code"], e["line"], e["column"]) for e in errors]


def assert_errors(errors: list[dict], expected: list[tuple], file: str | None = None) -> None:
    """``errors`` are exactly ``expected``: a list of ``(path, code, line, column, message_part)``,
    in order; every error names ``file`` when it is given."""
    assert places(errors) == [tuple(e[:4]) for e in expected], errors
    for error, (*_, part) in zip(errors, expected):
        assert part in error["message"], (part, error)
        assert set(error) == {"path", "file", "line", "column", "code", "message"}
        if file is not None:
            assert error["file"] == file, error


Stoker.assert_errors = staticmethod(assert_errors)
Stoker.places = staticmethod(places)
