"""Helpers of the API tests: run ``stoker api`` servers, make clients, wait for stacks.

Servers are real subprocesses on free local ports (uvicorn, as users run it).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

TEMPLATES = Path(__file__).resolve().parent / "templates"
BIN = Path(sys.executable).parent
#: a bound on a server's start (a loaded machine may take long), not a measurement
START_BOUND = 60
API = "import sys; from stoker.cli.api_cmds import api; api(sys.argv[1:], prog_name='stoker api')"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOKER_", "OS_"))}
    env["STOKER_HOME"] = str(home)
    return env


@dataclass
class Server:
    url: str
    db_url: str
    process: subprocess.Popen
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def endpoint(self, project: str) -> str:
        return f"{self.url}/v1/{project}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.process.kill()
                self.process.wait(5)


def start_server(tmp: Path, db_url: str, *, auth: str = "noauth", workers: int = 1,
                 extra: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Server:
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = tmp / f"server-{port}.log"
    command = [sys.executable, "-c", API, "--host", "127.0.0.1", "--port", str(port), "--auth", auth,
               "--db-url", db_url, "--workers", str(workers), "--log-level", "warning", *extra]
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**child_env(tmp), **(env or {})})
    server = Server(f"http://127.0.0.1:{port}", db_url, process, log)
    deadline = time.monotonic() + START_BOUND
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"stoker api exited:\n{log.read_text()}")
        try:
            if httpx.get(server.url + "/", timeout=1).status_code == 300:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"stoker api did not answer within {START_BOUND} s:\n{log.read_text()}")


def sqlite_server(tmp_path_factory, name: str):
    """A fixture's server (yielded, then stopped), without authentication, on a SQLite database of its own."""
    tmp = tmp_path_factory.mktemp(name)
    server = start_server(tmp, f"sqlite:///{tmp / 'stoker.db'}")
    yield server
    server.stop()


def token_cli(*args: str):
    """``stoker token ...``, in this process (click's runner)."""
    from click.testing import CliRunner

    from stoker.cli.api_cmds import token

    return CliRunner().invoke(token, list(args), catch_exceptions=False)


def create_token(db_url: str, project: str) -> str:
    done = token_cli("create", "--project", project, "--db-url", db_url)
    assert done.exit_code == 0, done.output
    return done.stdout.strip()


def heat(server: Server, project: str, token: str | None = None):
    """python-heatclient, as its users make it."""
    from heatclient import client

    return client.Client("1", endpoint=server.endpoint(project), token=token or "unused")


def template(name: str) -> tuple[dict, dict]:
    """(files, template) as heatclient's template_utils reads a template file."""
    from heatclient.common import template_utils

    files, data = template_utils.get_template_contents(str(TEMPLATES / name))
    return files, data


def wait_for(client: Any, stack: str, timeout: float = 30.0) -> Any:
    """Poll until the stack's action ends; returns the stack."""
    deadline = time.monotonic() + timeout
    while True:
        found = client.stacks.get(stack)
        if not found.stack_status.endswith("IN_PROGRESS"):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"stack {stack} still {found.stack_status} after {timeout} s")
        time.sleep(0.05)


def heat_error(response: httpx.Response, status: int) -> dict:
    """Check a Heat-shaped error body; returns its ``error`` part."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"explanation", "code", "error", "title"}, body
    assert body["code"] == status
    assert {"type", "message", "traceback"} <= set(body["error"]), body
    assert body["error"]["traceback"] is None
    return body["error"]


def openstack_on(cli: Any, server, project: str, ok: bool = True):
    """``run(*args)``: ``openstack ARGS`` on ``project`` of ``server`` without authentication, asserting that it
    succeeded (``ok``), as a ``CompletedProcess``."""
    def run(*args: str) -> subprocess.CompletedProcess:
        done = cli("--os-auth-type", "none", "--os-endpoint", server.endpoint(project), *args, timeout=60)
        assert not ok or done.returncode == 0, f"openstack {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    return run
