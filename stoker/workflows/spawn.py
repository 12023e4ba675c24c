"""Start a script's process cheaply, in a session of its own, with its output on pipes.

``fork()`` of a big Python process costs milliseconds (its page tables are
copied); 100 scripts starting together would wait for each other.  So on
Linux the process starts with ``posix_spawn`` (glibc: vfork-like, cost
independent of our size) and its exit is watched with a pidfd on the event
loop.  Elsewhere, or when a working directory is asked for (``posix_spawn``
cannot change it), asyncio's subprocess does the same job.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from contextlib import suppress


class Child:
    """A started process: ``pid`` (also its process group), ``stdout``/``stderr`` readers, ``wait()``."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader, stderr: asyncio.StreamReader, exited, close=None):
        self.pid, self.stdout, self.stderr = pid, stdout, stderr
        self._exited = exited
        self._close = close or (lambda: None)

    async def wait(self) -> int:
        """The exit code; ``-N`` when signal N ended it."""
        return await asyncio.shield(self._exited)

    def close(self) -> None:
        """Let go of the output pipes (a daemon the script left may still hold them)."""
        self._close()


async def start(command: list[str], env: dict, cwd: str | None = None) -> Child:
    if cwd or not hasattr(os, "posix_spawn") or not hasattr(os, "pidfd_open"):
        return await _with_asyncio(command, env, cwd)
    path = command[0] if "/" in command[0] else shutil.which(command[0], path=env.get("PATH"))
    if path is None:
        raise FileNotFoundError(f"{command[0]} not found on PATH")
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    # on a thread: the caller waits until the child has exec'd, which takes a while on a busy machine
    spawning = loop.run_in_executor(None, lambda: os.posix_spawn(path, command, env, setsid=True,
                                                                 file_actions=actions))
    try:
        pid = await asyncio.shield(spawning)
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        spawning.add_done_callback(_kill_spawned)  # cancelled while it started: it must not run on
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    try:
        pidfd = os.pidfd_open(pid)
        (stdout, out_t), (stderr, err_t) = await _reader(out_r), await _reader(err_r)
    except BaseException:
        _kill(pid)
        raise
    exited = loop.create_future()

    def reap() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        exited.set_result(os.waitstatus_to_exitcode(status))

    loop.add_reader(pidfd, reap)
    return Child(pid, stdout, stderr, exited, lambda: (out_t.close(), err_t.close()))


def _kill_spawned(spawning: asyncio.Future) -> None:
    if not spawning.cancelled() and spawning.exception() is None:
        _kill(spawning.result())


def _kill(pid: int) -> None:
    """SIGKILL to the new session's group, and reap its leader."""
    with suppress(ProcessLookupError, ChildProcessError):
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


async def _reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2 ** 20)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                os.fdopen(fd, "rb", buffering=0))
    return reader, transport


async def _with_asyncio(command: list[str], env: dict, cwd: str | None) -> Child:
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, start_new_session=True)
    return Child(process.pid, process.stdout, process.stderr, asyncio.ensure_future(process.wait()))
