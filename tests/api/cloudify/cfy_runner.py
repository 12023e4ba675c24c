"""The real ``cfy`` for the tests, without its start-up on every command.

A cfy process spends most of its second importing; a test module calls it dozens of times.  ``Cfy`` keeps
a process that has imported cfy once (``cfy_zygote.py``) and runs each command in a fork of it: the same
code, exit code and output as ``bin/cfy``, in a process of its own, for a few milliseconds of start-up.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path

ZYGOTE = Path(__file__).with_name("cfy_zygote.py")


class Cfy:
    """``cfy(*args)``: ``cfy ARGS`` in ``env`` (its ``CFY_WORKDIR`` with it), as a ``CompletedProcess``."""

    def __init__(self, env: dict, folder: Path):
        self.env = env
        self.folder = folder
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def __call__(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        out, err = self.folder / "cfy.out", self.folder / "cfy.err"
        with self.lock:
            process = self._zygote()
            process.stdin.write(json.dumps({"args": list(args), "out": str(out), "err": str(err)}) + "\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], timeout)
            if not ready:
                _stop(process)
                self.process = None
                raise subprocess.TimeoutExpired(["cfy", *args], timeout)
            answer = process.stdout.readline()
            if not answer:
                self.process = None
                raise RuntimeError(f"the cfy process ended: {process.wait()}")
            code = json.loads(answer)["code"]
            return subprocess.CompletedProcess(["cfy", *args], code, out.read_text(), err.read_text())

    def _zygote(self) -> subprocess.Popen:
        if self.process is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.process = subprocess.Popen([sys.executable, str(ZYGOTE)], env=self.env, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, text=True, start_new_session=True)
            weakref.finalize(self, _stop, self.process)
        return self.process


def _stop(process: subprocess.Popen) -> None:
    """The zygote and any command it runs."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for stream in (process.stdin, process.stdout):
        stream.close()
