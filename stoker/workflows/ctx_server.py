"""The execution's end of ``ctx``: a Unix socket in a private folder, and the ``ctx`` command.

One server per execution serves every operation running in it; each
operation gets its own random token, and a request is answered against the
context that token names (an unknown token is refused).  The folder (mode
0700) also holds the ``ctx`` launcher, a two-line shell script that runs
``ctx_client.py`` with this very Python interpreter.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from stoker.resources import processes
from stoker.workflows import ctx_client, workdirs
from stoker.workflows.operation_context import OperationContext
from stoker.workflows.ctx_verbs import CtxRequestError, StopOperation, handle

#: the longest request a script may send (a runtime property of a few megabytes is fine)
MAX_REQUEST = 16 * 1024 * 1024
#: first on a script's PYTHONPATH: ``from cloudify import ctx`` works there
SHIM = str(Path(__file__).with_name("shim"))
#: AF_UNIX paths are limited to 107 bytes; beyond that the folder goes under /tmp
_MAX_SOCKET_PATH = 100


class CtxServer:
    def __init__(self, marker: str | None = None) -> None:
        #: put in every script's environment, so that a dead owner's scripts can be found and killed
        self.marker = marker
        self._contexts: dict[str, OperationContext] = {}
        self._server: asyncio.AbstractServer | None = None
        self.folder: Path | None = None

    @property
    def socket_path(self) -> Path:
        return self.folder / "ctx.sock"

    @property
    def bin_dir(self) -> Path:
        return self.folder / "bin"

    async def __aenter__(self) -> "CtxServer":
        self.folder = Path(tempfile.mkdtemp(prefix="stoker-ctx-"))
        if len(str(self.socket_path)) > _MAX_SOCKET_PATH:
            shutil.rmtree(self.folder)
            self.folder = Path(tempfile.mkdtemp(prefix="stoker-ctx-", dir="/tmp"))
        self.bin_dir.mkdir()
        launcher = self.bin_dir / "ctx"
        launcher.write_text("#!/bin/sh\nexec " + shlex.join([sys.executable, "-S", ctx_client.__file__])
                            + ' "$@"\n')
        launcher.chmod(0o755)
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path), limit=MAX_REQUEST)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        shutil.rmtree(self.folder, ignore_errors=True)

    def register(self, ctx: OperationContext) -> str:
        token = secrets.token_hex(16)
        self._contexts[token] = ctx
        return token

    def unregister(self, token: str) -> None:
        self._contexts.pop(token, None)

    def environment(self, token: str, base: dict, shim: bool = True) -> dict:
        """``base`` with what a script needs to reach its context: the socket, its token, ``ctx`` first
        on PATH, Stoker's ``cloudify`` module first on PYTHONPATH (``shim``; a plugin task's virtualenv has
        the real one, and no PYTHONPATH of ours)."""
        env = dict(base)
        env[ctx_client.SOCKET_VARIABLE] = f"unix://{self.socket_path}"
        env[ctx_client.TOKEN_VARIABLE] = token
        env["PATH"] = os.pathsep.join([str(self.bin_dir)] + ([env["PATH"]] if env.get("PATH") else []))
        if shim:
            env["PYTHONPATH"] = os.pathsep.join([SHIM] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        else:
            env.pop("PYTHONPATH", None)
            env.pop("PYTHONHOME", None)
        env.setdefault(workdirs.RESOURCES_ROOT_VARIABLE, str(workdirs.resources_root()))
        if self.marker:
            env[processes.MARKER_VARIABLE] = self.marker
        return env

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                answer = _error(f"request longer than {MAX_REQUEST} bytes")
            else:
                answer = await self.answer(line)
            writer.write(json.dumps(answer, default=str).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the script went away before its answer; nothing to tell it
        finally:
            writer.close()

    async def answer(self, line: bytes) -> dict:
        try:
            message = json.loads(line)
            token, args = message["token"], message["args"]
            if not isinstance(args, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _error("malformed request: expected one JSON object with token and args")
        ctx = self._contexts.get(token) if isinstance(token, str) else None
        if ctx is None:
            return _error("this operation has ended (or the token is unknown)")
        try:
            return {"type": "result", "payload": await handle(ctx, args)}
        except StopOperation as stop:
            return {"type": "stop_operation", "payload": {"message": str(stop)}}
        except (CtxRequestError, RuntimeError) as exc:
            return _error(str(exc))
        except Exception as exc:  # e.g. the store failed: the script must hear of it, not hang
            return _error(f"{type(exc).__name__}: {exc}")


def _error(message: str) -> dict:
    return {"type": "error", "payload": {"message": message}}
