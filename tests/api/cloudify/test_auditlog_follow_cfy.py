"""``cfy auditlog list --follow`` against ``stoker api``: the real cfy (its async client on ``/audit/stream``)
prints each change made after it started following, until interrupted; with ``--since`` the earlier ones first.
Followers are bounded: one more than a server serves is refused (503), and one that went away frees its place."""

from __future__ import annotations

import queue
import subprocess
import threading

import pytest
import requests

from stoker.api.cloudify.audit_stream import FOLLOWERS

from ..helpers import BIN, child_env
from .conftest import PASSWORD, admin_server, cfy_on, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

#: a bound on how long a line that is due may take, not a measurement
DUE = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from admin_server(tmp_path_factory, "audit-follow")


class Follower:
    """``cfy auditlog list --follow ARGS...`` running; ``lines`` gets what it prints, line by line."""

    def __init__(self, tmp_path, *args: str):
        env = {**child_env(tmp_path), "CFY_WORKDIR": str(tmp_path / "cfy")}
        self.process = subprocess.Popen([str(BIN / "cfy"), "auditlog", "list", "--follow", *args], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)

    def printed(self, wanted: str, change=None) -> list[str]:
        """What it printed up to a line holding ``wanted`` (``change()`` made again until one does: the stream
        starts after cfy's first line)."""
        seen = []
        for _ in range(DUE * 2):
            if change is not None:
                change()
            try:
                while True:
                    seen.append(self.lines.get(timeout=0.5))
                    if wanted in seen[-1]:
                        return seen
            except queue.Empty:
                if self.process.poll() is not None:
                    break
        raise AssertionError(f"no line with {wanted!r} in {seen}")

    def interrupt(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=DUE)


def test_cfy_follows_new_audit_entries_until_interrupted(server, tmp_path):
    cfy_on(server, tmp_path)  # its profile
    client = rest_client(server)
    client.secrets.create("earlier", "value")
    follower = Follower(tmp_path)
    try:
        count = iter(range(1000))
        printed = follower.printed("CREATED secrets", lambda: client.secrets.create(f"later{next(count)}", "v"))
        assert printed[0].startswith("Streaming audit log entries")
        assert any("user admin CREATED secrets" in line for line in printed)
        client.secrets.delete("earlier")
        assert "user admin DELETED secrets" in follower.printed("DELETED secrets")[-1]
    finally:
        follower.interrupt()
    assert not any("earlier" in line for line in printed)  # no backlog without --since

    since = Follower(tmp_path, "--since", "1h")
    try:
        backlog = since.printed("DELETED secrets")  # the earlier entries first
        assert sum("CREATED secrets" in line for line in backlog) >= 2
    finally:
        since.interrupt()


def _stream(server) -> requests.Response:
    """A follower from the start of the log (its first line is due at once)."""
    return requests.get(f"{server.url}/api/v3.1/audit/stream", params={"since": "2000-01-01"},
                        auth=("admin", PASSWORD), headers={"Tenant": "default_tenant"}, stream=True, timeout=DUE)


def test_one_follower_more_than_a_server_serves_is_refused_until_one_goes(server):
    rest_client(server).secrets.create("logged", "v")
    followers = [_stream(server) for _ in range(FOLLOWERS)]
    try:
        assert {f.status_code for f in followers} == {200}
        # each one's stream under way (its body started), its reader kept (a reader dropped closes its connection)
        readers = [follower.iter_lines(chunk_size=1) for follower in followers]
        assert {next(reader)[:1] for reader in readers} == {b"{"}
        refused = _stream(server)
        assert refused.status_code == 503 and "follow the audit log already" in refused.json()["message"]
        followers.pop().close()
        for _attempt in range(DUE * 10):  # the server sees its client gone once it notices the disconnect
            again = _stream(server)
            if again.status_code == 200:
                again.close()
                break
            again.close()
        assert again.status_code == 200
    finally:
        for follower in followers:
            follower.close()
