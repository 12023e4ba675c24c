"""Private PostgreSQL and Redis servers a test may restart (the shared ones must never be).

Each runs on a port of its own in a temporary folder and is stopped at the
end; when one cannot be started here (no binaries, no ``postgres`` user to
run ``initdb`` as root) the test skips, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def _worker_number() -> int:
    """Which pytest-xdist worker runs this (``gw3`` is 3; 0 when not under xdist)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


#: the configured ports are worker 0's; worker n adds 2n, so parallel workers never share a server
#: (and the default pair, adjacent, never overlaps across workers)
PG_PORT = int(os.environ.get("STOKER_TEST_PRIVATE_PG_PORT", "18852")) + 2 * _worker_number()
REDIS_PORT = int(os.environ.get("STOKER_TEST_PRIVATE_REDIS_PORT", "18853")) + 2 * _worker_number()
#: how long a server may take to start (a bound, not a measurement)
START_LIMIT = 60


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"cannot start a private server: {name} not found")
    return found


class PrivatePostgres:
    """A PostgreSQL cluster in a folder of its own, trust authentication, on ``PG_PORT``."""

    def __init__(self) -> None:
        # not under pytest's tmp folder: as root, that one is closed to the postgres user
        self.folder = Path(tempfile.mkdtemp(prefix="stoker-test-pg-"))
        self.data = self.folder / "data"
        self.user = "postgres" if os.geteuid() == 0 else None  # initdb refuses to run as root
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{PG_PORT}/postgres"
        if self.user:
            shutil.chown(self.folder, self.user)
        done = self._run([_tool("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        if done.returncode:
            pytest.skip(f"cannot start a private PostgreSQL: initdb failed: {done.stderr.strip()[-300:]}")
        self.start()

    def _run(self, command: list) -> subprocess.CompletedProcess:
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=START_LIMIT)

    def start(self) -> None:
        done = self._run([_tool("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                          "-o", f"-p {PG_PORT} -k {self.folder} -c listen_addresses=127.0.0.1", "start"])
        if done.returncode:
            pytest.skip(f"cannot start a private PostgreSQL on port {PG_PORT}: {done.stdout.strip()[-300:]}")

    def stop(self) -> None:
        self._run([_tool("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """A redis-server on ``REDIS_PORT`` keeping its data in an append-only file, so a restart loses no message."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.url = f"redis://127.0.0.1:{REDIS_PORT}/0"
        folder.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [_tool("redis-server"), "--port", str(REDIS_PORT), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--save", "", "--appendonly", "yes", "--appendfsync", "always"],
            stdout=open(self.folder / "server.log", "a"), stderr=subprocess.STDOUT, start_new_session=True)
        limit = time.monotonic() + START_LIMIT
        import redis

        while time.monotonic() < limit:
            if self.process.poll() is not None:
                pytest.skip(f"cannot start a private redis-server on port {REDIS_PORT} (see {self.folder})")
            try:
                redis.Redis(port=REDIS_PORT).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        pytest.skip(f"private redis-server on port {REDIS_PORT} did not answer")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: redis writes its append-only file and exits
            self.process.wait(timeout=START_LIMIT)
