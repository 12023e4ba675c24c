"""A long-running ``stoker api``: what one request costs is released once it ends, and what a
client sends is bounded.

Each stack action gets its own group-commit writer (``engine/recorder.py``): its thread ends
with it.  A provider fan-out is counted only up to the limit; an action whose request gave up
stops; a deep ``json`` parameter is a 400; a revoked token is refused at once; slow clients are
cut off, and one address holds a bounded number of connections.
"""

from __future__ import annotations

import socket
import threading
import time
import warnings
from pathlib import Path

import httpx
import pytest

with warnings.catch_warnings():  # starlette's notice about httpx versions
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from stoker.api.app import create_app

from .helpers import Server, heat_error, start_server, token_cli

ONE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}
#: a bound on how long idle threads may linger after the last action, not a measurement
SETTLE_BOUND = 30.0


@pytest.fixture
def server(tmp_path):
    found = start_server(tmp_path, f"sqlite:///{tmp_path / 'stoker.db'}")
    yield found
    found.stop()


@pytest.fixture
def api(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    with TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}")) as client:
        yield client


def threads_of(server: Server) -> int:
    return len(list(Path(f"/proc/{server.process.pid}/task").iterdir()))


def _settled(server: Server, at_most: int) -> int:
    deadline = time.monotonic() + SETTLE_BOUND
    while (count := threads_of(server)) > at_most and time.monotonic() < deadline:
        time.sleep(0.2)
    return count


def _create_and_delete(client: httpx.Client, name: str) -> None:
    made = client.post("/stacks", json={"stack_name": name, "template": ONE})
    assert made.status_code == 201, made.text
    _until_done(client, name, "CREATE_COMPLETE")
    stack_id = made.json()["stack"]["id"]
    assert client.delete(f"/stacks/{name}/{stack_id}").status_code == 204
    _until_done(client, name, None)


def _until_done(client: httpx.Client, name: str, status: str | None) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = client.get(f"/stacks/{name}", follow_redirects=True)
        if status is None and found.status_code == 404:
            return
        if found.status_code == 200 and found.json()["stack"]["stack_status"] == status:
            return
        time.sleep(0.02)
    raise AssertionError(f"{name} did not reach {status}")


def test_stack_actions_leave_no_thread_behind(server):
    with httpx.Client(base_url=server.endpoint("p"), timeout=30, follow_redirects=True) as client:
        _create_and_delete(client, "warm")  # the project's pools start their threads
        start = threads_of(server)
        for number in range(40):
            _create_and_delete(client, f"s{number}")
        assert _settled(server, start) <= start


def test_threads_return_to_their_start_after_a_burst_over_several_projects(server):
    """Concurrent actions in five projects start action, request and endpoint threads; once
    the server is idle they end, so however many projects and bursts, the count goes back."""
    with httpx.Client(base_url=server.endpoint("p0"), timeout=30, follow_redirects=True) as client:
        _create_and_delete(client, "warm")
    start = threads_of(server)

    failures: list[BaseException] = []

    def burst(client_number: int) -> None:
        project = f"p{client_number % 5}"
        try:
            with httpx.Client(base_url=server.endpoint(project), timeout=60, follow_redirects=True) as client:
                for number in range(4):
                    _create_and_delete(client, f"c{client_number}-{number}")
        except BaseException as exc:  # raised below, in the test's thread
            failures.append(exc)

    workers = [threading.Thread(target=burst, args=(i,)) for i in range(10)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not failures, failures[0]
    assert threads_of(server) > start  # the burst did start threads
    assert _settled(server, start) <= start


def test_the_templates_a_server_shows_are_not_all_kept(tmp_path, monkeypatch):
    """Every create stores a template and every show reads it: the engine's cache of them (shared
    by all its per-request copies) stays bounded, so a server's memory does not grow with them."""
    import stoker.engine.stored_stacks as stored_stacks
    from stoker.engine.engine import Engine

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(stored_stacks, "TEMPLATE_CACHE_SIZE", 3)
    engine = Engine(db_url=f"sqlite:///{tmp_path / 's.db'}")
    for number in range(10):
        request = engine.for_project("p")
        request.create_stack(f"s{number}", {**ONE, "description": f"stack {number}"})
        assert request.show_stack(f"s{number}")["description"] == f"stack {number}"
        assert len(engine.templates_read) <= 3


JSON_PARAM = {"heat_template_version": "2018-08-31", "parameters": {"j": {"type": "json"}},
              "outputs": {"o": {"value": {"get_param": "j"}}}}


@pytest.mark.parametrize("path", ["/stacks", "/validate", "/stacks/preview"])
def test_a_json_parameter_nested_10000_deep_is_a_400(api, path):
    body = {"stack_name": "deep", "template": JSON_PARAM, "parameters": {"j": "[" * 10000 + "]" * 10000}}
    error = heat_error(api.post(f"/v1/p{path}", json=body), 400)
    assert "parameters.j: the value is nested more than 100 levels deep (max_nesting)" in error["message"]


def test_a_revoked_token_is_refused_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    db_url = f"sqlite:///{tmp_path / 's.db'}"
    with TestClient(create_app(db_url, "token")) as client:
        tokens = client.app.state.stoker.auth.tokens
        issued = tokens.create("p")
        headers = {"X-Auth-Token": issued.token}
        assert client.get("/v1/p/stacks", headers=headers).status_code == 200
        assert token_cli("revoke", issued.id, "--db-url", db_url).exit_code == 0
        assert heat_error(client.get("/v1/p/stacks", headers=headers), 401)


@pytest.mark.parametrize("days", ["0", "-1", "99999999"])
def test_a_token_lifetime_must_be_positive_and_bounded(tmp_path, days):
    from click.testing import CliRunner

    from stoker.cli.api_cmds import token

    done = CliRunner().invoke(token, ["create", "--project", "p", "--expires-in", days,
                                      "--db-url", f"sqlite:///{tmp_path / 's.db'}"])
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert "--expires-in" in done.output and "1<=x<=36525" in done.output


def provider_bomb(levels: int = 5, width: int = 10) -> dict:
    """A create body: five levels of provider templates, ten of the next level each (111,111
    resources), each given its own property value so no two subtrees count alike."""
    hot = "heat_template_version: 2018-08-31\nparameters:\n  p: {type: string, default: ''}\nresources:\n"
    files = {}
    for level in range(levels, 0, -1):
        member = f"l{level + 1}.yaml" if level < levels else "OS::Heat::None"
        props = "    properties: {p: '%d'}\n" if level < levels else ""
        files[f"l{level}.yaml"] = hot + "".join(f"  r{i}:\n    type: {member}\n" + (props % i if props else "")
                                                for i in range(width))
    return {"stack_name": "bomb", "template": hot + "  top:\n    type: l1.yaml\n", "files": files}


def test_a_provider_fan_out_bomb_is_refused_by_counting_only_to_the_limit(api):
    error = heat_error(api.post("/v1/p/stacks", json=provider_bomb()), 400)
    assert "more than the limit of 1000 (max_resources_per_stack)" in error["message"]
    assert api.get("/v1/p/stacks").json()["stacks"] == []


def test_an_action_the_request_gave_up_on_stops_and_stores_nothing(tmp_path, monkeypatch):
    from stoker.api.background import Runner
    from stoker.engine.engine import Engine
    from stoker.errors import GivenUp

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    engine = Engine(db_url=f"sqlite:///{tmp_path / 's.db'}")
    runner = Runner()
    body = provider_bomb(levels=3, width=9)  # 1 + 9 + 81 + 729 resources: under the limit, slow to check
    template, files = body["template"], body["files"]
    checked = threading.Event()

    def create(worker):
        checked.wait(10)  # the request gives up first
        from stoker.template.template import Template
        return worker.create_stack("late", Template.from_text(template, files=files))

    started = runner.start(engine, create, timeout=0.01)
    checked.set()
    assert started.id is None
    with pytest.raises(GivenUp):
        started.future.result(timeout=30)
    assert engine.list_stacks() == []
    runner.shutdown()


def test_an_update_the_request_gave_up_on_stops_and_stores_nothing(tmp_path, monkeypatch):
    """The request gives up while the update is checking its new definition (as a slow check of a
    big template would): the update stops before storing it, and the stack is as it was."""
    import stoker.engine.updates as updates
    from stoker.api.background import Runner
    from stoker.engine.engine import Engine
    from stoker.errors import GivenUp

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    engine = Engine(db_url=f"sqlite:///{tmp_path / 's.db'}")
    engine.create_stack("s", ONE)
    checking, gave_up = threading.Event(), threading.Event()
    real_check = updates.check_immutable

    def slow_check(old, new):
        checking.set()
        gave_up.wait(30)
        real_check(old, new)

    monkeypatch.setattr(updates, "check_immutable", slow_check)
    two = {**ONE, "resources": {**ONE["resources"], "r2": {"type": "OS::Heat::None"}}}
    runner = Runner()
    started = runner.start(engine, lambda worker: worker.update_stack("s", two), timeout=3)
    gave_up.set()
    assert checking.is_set() and started.given_up.is_set()
    with pytest.raises(GivenUp):
        started.future.result(timeout=30)
    runner.shutdown()
    shown = engine.show_stack("s")
    assert (shown["stack_status"], [r["resource_name"] for r in engine.resources("s")]) == ("CREATE_COMPLETE", ["r"])
    assert engine.get_record("s").lock_owner is None
    engine.update_stack("s", two)  # nothing was left held: the next update goes ahead
    assert sorted(r["resource_name"] for r in engine.resources("s")) == ["r", "r2"]


def _connect(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=SETTLE_BOUND)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """What the server sends before it closes the connection."""
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_slow_clients_are_cut_off_and_one_address_holds_a_bounded_number_of_connections(tmp_path):
    server = start_server(tmp_path, f"sqlite:///{tmp_path / 'stoker.db'}",
                          extra=("--header-timeout", "1", "--body-timeout", "1",
                                 "--max-connections-per-address", "3"))
    try:
        dribbling = _connect(server)
        dribbling.sendall(b"GET /v1/p/stacks HTTP/1.1\r\nHost: x\r\n")  # never ends its headers
        idle = _connect(server)
        body = _connect(server)
        body.sendall(b"POST /v1/p/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{")  # never ends its body
        refused = _connect(server)
        assert _answer(refused).startswith(b"HTTP/1.1 503 ")
        assert _answer(dribbling).startswith(b"HTTP/1.1 408 ")
        assert _answer(idle) == b""
        assert _answer(body).startswith(b"HTTP/1.1 408 ")
        # the cut-off connections no longer count: the address is served again
        assert httpx.get(server.endpoint("p") + "/stacks", timeout=SETTLE_BOUND).status_code == 200
    finally:
        server.stop()
