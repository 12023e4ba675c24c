"""Script operations: run a blueprint's script as a local process that talks back through ``ctx``.

As Cloudify's script plug-in: a Python script (``.py``, or ``process.eval_python``)
reads its inputs as ``cloudify.state.ctx_parameters`` (and ``ctx``), any other
script as environment variables (dicts, lists and booleans as JSON, anything
else as ``str``); ``process`` may give ``env`` (for both), ``cwd``, ``args`` and
``command_prefix``.  The script is a file beside the blueprint (``script_path``)
or written in place (``script_source``: Python if it parses as Python).  The
script runs in its own process group, so a timeout or a forced cancel kills
it and everything it started that is still in the group; it may leave a
daemon behind on purpose (started in the background, output redirected).
Every output line goes to the operation's log, stderr's last lines also into
the error when the script fails.
"""

from __future__ import annotations

import ast
import asyncio
import collections
import json
import os
import shlex
import signal
import sys
import tempfile
import textwrap
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stoker.workflows import spawn
from stoker.workflows.operation_context import AbortRequested, OperationContext, OperationFailed, RetryRequested
from stoker.workflows.ctx_server import CtxServer
from stoker.workflows.resources import ResourceRefused, resource_path

SCRIPT_RUNNER_TASKS = frozenset({"script.script_runner.tasks.run", "script_runner.tasks.run"})
#: inputs the script runner itself consumes: they are not passed on as environment variables
RUNNER_INPUTS = ("script_path", "script_source", "process")
STDERR_TAIL_LINES = 20
MAX_LINE = 64 * 1024
MAX_LOGGED_LINES = 10_000
#: after the script exits, how long its output may still take to arrive (a daemon it left may hold the pipe)
DRAIN_GRACE = 1.0
#: between SIGTERM and SIGKILL when a script is stopped
KILL_GRACE = 2.0


@dataclass
class Script:
    path: Path
    inputs: dict = field(default_factory=dict)  # what becomes environment variables
    process: dict = field(default_factory=dict)
    #: the whole command, when it is not the script's own (a plugin task run in its virtualenv)
    command: list[str] | None = None
    #: the script itself (``script_source``), written to ``path``'s name in a folder of its own when it runs
    source: str | None = None

    @property
    def is_python(self) -> bool:
        """Run as Cloudify evaluates Python scripts: inputs through ``ctx_parameters``, not the environment."""
        eval_python = self.process.get("eval_python")
        return self.command is None and (eval_python is True or (self.path.suffix.lower() == ".py"
                                                                  and eval_python is not False))


def script_for(implementation: str, inputs: dict, root: Path) -> Script:
    """The script an operation runs: a path in the blueprint's folder, or the script runner with
    ``script_path`` or ``script_source``."""
    inputs = dict(inputs or {})
    process = inputs.get("process") or {}
    if not isinstance(process, dict):
        raise OperationFailed("the input process must be a dict (env, cwd, args, command_prefix)",
                              recoverable=False)
    given = {k: v for k, v in inputs.items() if k not in RUNNER_INPUTS}
    if implementation in SCRIPT_RUNNER_TASKS:
        relative, source = inputs.get("script_path"), inputs.get("script_source")
        if relative and source:
            raise OperationFailed("Only provide script_path or script_source, not both", recoverable=False)
        if source:
            return _inline(source, given, process)
        if not relative:
            raise OperationFailed(f"{implementation} needs the input script_path or script_source",
                                  recoverable=False)
    else:
        relative = implementation
    try:
        path = resource_path(root, relative)
    except ResourceRefused as exc:
        if _looks_like_a_task(relative):
            raise OperationFailed(f"{relative} is neither a script in the blueprint's folder nor the script "
                                  "runner: plug-in operations (plugin.module.task) cannot run in Stoker",
                                  recoverable=False) from None
        raise OperationFailed(f"script {relative}: {exc}", recoverable=False) from None
    return Script(path, given, process)


def _inline(source: object, inputs: dict, process: dict) -> Script:
    """``script_source``: Python when ``eval_python`` says so or it parses as Python, else a shell script."""
    if not isinstance(source, str):
        raise OperationFailed("the input script_source must be a string (the script)", recoverable=False)
    source = textwrap.dedent(source)
    python = process.get("eval_python") is True
    if not python and process.get("eval_python") is not False:
        try:
            ast.parse(source)
            python = True
        except (SyntaxError, ValueError):
            python = False
    return Script(Path("script.py" if python else "script.sh"), inputs, process, source=source)


def _looks_like_a_task(implementation: str) -> bool:
    return "/" not in implementation and "." in implementation and not implementation.endswith(
        (".sh", ".py", ".bash", ".ps1", ".pl", ".rb"))


def environment_values(values: dict) -> dict[str, str]:
    """Inputs as environment variables, spelt as Cloudify's script plug-in spells them."""
    out = {}
    for key, value in values.items():
        key = str(key)
        text = json.dumps(value) if isinstance(value, (dict, list, bool)) else str(value)
        if not key or "=" in key or "\0" in key or "\0" in text:
            raise OperationFailed(f"input {key!r} cannot be passed as an environment variable", recoverable=False)
        out[key] = text
    return out


def command_for(script: Script) -> list[str]:
    if script.command:
        return list(script.command)
    path, process = script.path, script.process
    prefix = process.get("command_prefix")
    if prefix:
        command = shlex.split(str(prefix)) + [str(path)]
    elif script.is_python:
        command = [sys.executable, str(path)]
    elif path.suffix.lower() == ".sh":
        command = ["bash", str(path)]
    elif os.access(path, os.X_OK):
        command = [str(path)]
    else:
        command = _shebang(path) + [str(path)]
    args = process.get("args") or []
    if not isinstance(args, list):
        raise OperationFailed("process.args must be a list", recoverable=False)
    return command + [str(a) for a in args]


def _shebang(path: Path) -> list[str]:
    with open(path, "rb") as handle:
        first = handle.readline(1024)
    if first.startswith(b"#!"):
        return shlex.split(first[2:].decode(errors="replace").strip())
    return ["sh"]


async def run_script(server: CtxServer, ctx: OperationContext, script: Script, timeout: float | None = None,
                     timeout_recoverable: bool = False) -> Any:
    """Run ``script`` for ``ctx``; what it ``ctx returns``.  Raises ``OperationFailed`` or ``RetryRequested``."""
    if script.source is not None:
        with tempfile.TemporaryDirectory(prefix="stoker-script-") as folder:
            written = Path(folder) / script.path.name
            written.write_text(script.source, encoding="utf-8")
            written.chmod(0o700)
            return await run_script(server, ctx, replace(script, path=written, source=None), timeout,
                                    timeout_recoverable)
    env = dict(os.environ)
    if not script.is_python:
        env.update(environment_values(script.inputs))
    env.update(environment_values(script.process.get("env") or {}))
    command = command_for(script)
    token = server.register(ctx)
    tail: collections.deque = collections.deque(maxlen=STDERR_TAIL_LINES)
    try:
        try:
            process = await spawn.start(command, server.environment(token, env, shim=script.command is None),
                                        script.process.get("cwd") or None)
        except OSError as exc:
            raise OperationFailed(f"cannot run {shlex.join(command)}: {exc}", recoverable=False) from None
        ctx.log("info", f"Executing: {shlex.join(command)} (pid {process.pid})")
        budget = [MAX_LOGGED_LINES]
        readers = [asyncio.ensure_future(_log_lines(process.stdout, ctx, "info", None, budget)),
                   asyncio.ensure_future(_log_lines(process.stderr, ctx, "warning", tail, budget))]
        try:
            code = await asyncio.wait_for(process.wait(), timeout)
        except asyncio.TimeoutError:
            await _stop(process)
            raise OperationFailed(f"script {script.path.name} timed out after {timeout:g} s (killed)",
                                  recoverable=timeout_recoverable, stderr_tail="\n".join(tail)) from None
        except asyncio.CancelledError:
            await _stop(process)
            raise
        finally:
            await _drain(readers)
            process.close()
    finally:
        server.unregister(token)
    ctx.log("info", f"Execution done (return_code={code}): {script.path.name}")
    if isinstance(ctx.outcome, (AbortRequested, RetryRequested)):
        raise ctx.outcome
    if code != 0:
        raise OperationFailed(f"script {script.path.name} exited with code {code}", stderr_tail="\n".join(tail))
    return ctx.returned


async def _log_lines(stream: asyncio.StreamReader, ctx: OperationContext, level: str,
                     tail: collections.deque | None, budget: list) -> None:
    pending = b""
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        while len(pending) > MAX_LINE:
            lines.append(pending[:MAX_LINE])
            pending = pending[MAX_LINE:]
        for line in lines:
            _emit(line, ctx, level, tail, budget)
    if pending:
        _emit(pending, ctx, level, tail, budget)


def _emit(raw: bytes, ctx: OperationContext, level: str, tail: collections.deque | None, budget: list) -> None:
    line = raw.decode(errors="replace").rstrip("\r")
    if tail is not None:
        tail.append(line)
    budget[0] -= 1
    if budget[0] >= 0:
        ctx.log(level, line)
    elif budget[0] == -1:
        ctx.log("warning", f"more than {MAX_LOGGED_LINES} lines of output: the rest is not logged")


async def _drain(readers: list) -> None:
    _done, pending = await asyncio.wait(readers, timeout=DRAIN_GRACE)
    for reader in pending:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


async def _stop(process: spawn.Child) -> None:
    """SIGTERM to the script's whole process group; after a grace, SIGKILL to whatever is left of it."""
    _signal_group(process.pid, signal.SIGTERM)
    with suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _signal_group(group: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(group, sig)
