"""The real ``cfy`` and ``openstack`` for the tests, without their start-up on every command.

A cfy process spends most of its second importing, an openstack process most of one and a half; a test module
calls them dozens of times.  ``ForkedCli`` keeps a process that has imported the client once
(``cli_zygote.py``) and runs each command in a fork of it: the same code, exit code and output as the client's
script in ``bin``, in a process of its own, for a few milliseconds of start-up.
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

ZYGOTE = Path(__file__).with_name("cli_zygote.py")


class ForkedCli:
    """``run(*args)``: ``CLIENT ARGS`` (``cfy`` or ``openstack``) in ``env``, as a ``CompletedProcess``; its
    output is kept in ``folder`` until the next command."""

    def __init__(self, client: str, env: dict, folder: Path):
        self.client = client
        self.env = env
        self.folder = folder
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def __call__(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        out, err = self.folder / f"{self.client}.out", self.folder / f"{self.client}.err"
        with self.lock:
            process = self._zygote()
            process.stdin.write(json.dumps({"args": list(args), "out": str(out), "err": str(err)}) + "\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], timeout)
            if not ready:
                _stop(process)
                self.process = None
                raise subprocess.TimeoutExpired([self.client, *args], timeout)
            answer = process.stdout.readline()
            if not answer:
                self.process = None
                raise RuntimeError(f"the {self.client} process ended: {process.wait()}")
            code = json.loads(answer)["code"]
            return subprocess.CompletedProcess([self.client, *args], code, out.read_text(), err.read_text())

    def _zygote(self) -> subprocess.Popen:
        if self.process is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # -P: the script's folder (tests/api, holding the tests' package "cloudify") is not on its path
            self.process = subprocess.Popen([sys.executable, "-P", str(ZYGOTE), self.client], env=self.env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                            start_new_session=True)
            weakref.finalize(self, _stop, self.process)
        return self.process


def _stop(process: subprocess.Popen) -> None:
    """The zygote and any command it runs."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for stream in (process.stdin, process.stdout):
        stream.close()
