"""Stopping ``stoker api`` with actions in flight: it exits at once, and the next server
finishes them.

SIGTERM (or SIGINT) stops taking requests and hands every running action back:
the stack stays ``*_IN_PROGRESS``, its resources' polls are kept, and the next
``stoker api`` on the same database picks each action up where it stood, so no
resource is created twice.  A SIGKILLed server hands nothing back: the next one
sees its process is gone and takes its actions over at once (not after the lock's
heartbeat timeout), from the polls kept as each resource began to wait.
"""

from __future__ import annotations

import signal
import time
from collections import Counter

import httpx
import pytest

from stoker.resources.resource import POLL_KEY
from stoker.store import open_store
from stoker.store.models import Resource

from deadlines import deadline_passed, edit_resources

from .helpers import Server, start_server

pytestmark = pytest.mark.slow  # servers started, stopped and started again

#: bounds, not measurements: a stopped server exits well within this
EXIT_BOUND = 30.0
FINISH_BOUND = 90.0

NESTED = """
heat_template_version: 2016-10-14
resources:
  inner:
    type: OS::Heat::TestResource
    properties: {value: inner, wait_secs: 45}
outputs:
  out: {value: {get_attr: [inner, output]}}
"""

SLOW = """
heat_template_version: 2016-10-14
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one}
  slow:
    type: OS::Heat::TestResource
    depends_on: first
    properties: {value: two, wait_secs: 45}
  nested:
    type: OS::Heat::Stack
    properties:
      template: {get_file: nested.yaml}
  after:
    type: OS::Heat::TestResource
    properties:
      value: {list_join: ['+', [{get_attr: [slow, output]}, {get_attr: [nested, outputs, out]}]]}
outputs:
  out: {value: {get_attr: [after, output]}}
"""

SLOW_DELETE = """
heat_template_version: 2016-10-14
resources:
  lasting:
    type: OS::Heat::TestResource
    properties: {action_wait_secs: {delete: 20}}
"""

PROJECTS = ("north", "south", "east")
#: every resource of a SLOW stack and of its nested stack: each is created once
MADE = ("first", "slow", "nested", "inner", "after")


def _call(server: Server, method: str, path: str, **kwargs) -> httpx.Response:
    response = httpx.request(method, f"{server.url}/v1{path}", timeout=30, follow_redirects=True, **kwargs)
    assert response.status_code < 400, (response.status_code, response.text)
    return response


def _resources(server: Server, project: str, stack: str) -> dict[str, str]:
    rows = _call(server, "GET", f"/{project}/stacks/{stack}/resources?nested_depth=2").json()["resources"]
    return {row["resource_name"]: row["resource_status"] for row in rows}


def _status(server: Server, project: str, stack: str) -> str:
    return _call(server, "GET", f"/{project}/stacks/{stack}").json()["stack"]["stack_status"]


def _until(condition, bound: float, what: str) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {bound:g} s")
        time.sleep(0.2)


def _stop(server: Server, signum: int) -> None:
    server.process.send_signal(signum)
    try:
        server.process.wait(EXIT_BOUND)
    except Exception:  # pragma: no cover - the failure this test is about
        server.process.kill()
        raise AssertionError(f"stoker api did not exit within {EXIT_BOUND:g} s of signal {signum}:\n"
                             f"{server.log.read_text()}")


def _deadlines_passed(db_url: str) -> None:
    """End the waits the stopped server left now, rather than wait them out (45 s): the next
    server ends each at its first look, from the poll kept, so the pick-up is still what is tested."""
    store = open_store(db_url)
    try:
        assert edit_resources(store.engine, deadline_passed)
    finally:
        store.close()


def _stop_mid_actions_and_restart(tmp_path, db_url: str, workers: int, signum: int) -> None:
    server = start_server(tmp_path / "first", db_url, workers=workers)
    try:
        going = _call(server, "POST", "/north/stacks",
                      json={"stack_name": "going", "template": SLOW_DELETE}).json()["stack"]["id"]
        _until(lambda: _status(server, "north", "going") == "CREATE_COMPLETE", FINISH_BOUND, "created")
        _call(server, "DELETE", f"/north/stacks/going/{going}")
        body = {"template": SLOW, "files": {"nested.yaml": NESTED}}
        for project in PROJECTS:
            for n in range(2):
                _call(server, "POST", f"/{project}/stacks", json={**body, "stack_name": f"slow{n}"})
        _until(lambda: all(_resources(server, p, f"slow{n}").get("slow") == "CREATE_IN_PROGRESS"
                           and _resources(server, p, f"slow{n}").get("inner") == "CREATE_IN_PROGRESS"
                           for p in PROJECTS for n in range(2))
               and _resources(server, "north", "going") == {"lasting": "DELETE_IN_PROGRESS"},
               FINISH_BOUND, "all in progress")
        _stop(server, signum)
    finally:
        server.stop()
    _deadlines_passed(db_url)

    again = start_server(tmp_path / "second", db_url, workers=workers)
    try:
        for project in PROJECTS:
            for n in range(2):
                stack = f"slow{n}"
                _until(lambda: not _status(again, project, stack).endswith("IN_PROGRESS"), FINISH_BOUND,
                       f"{project}/{stack} finished")
                shown = _call(again, "GET", f"/{project}/stacks/{stack}").json()["stack"]
                assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
                assert shown["outputs"][0]["output_value"] == "two+inner"
                events = _call(again, "GET", f"/{project}/stacks/{stack}/events?nested_depth=2").json()["events"]
                starts = Counter(e["resource_name"] for e in events
                                 if e["resource_status"] == "CREATE_IN_PROGRESS" and e["resource_name"] in MADE)
                assert starts == {name: 1 for name in MADE}, events
                assert any(e["resource_status_reason"] == "Stack CREATE resumed" for e in events)
        _until(lambda: _status(again, "north", going) == "DELETE_COMPLETE", FINISH_BOUND, "deleted")
    finally:
        again.stop()


def test_sigterm_hands_actions_back_and_restart_finishes_them_sqlite(tmp_path):
    _stop_mid_actions_and_restart(tmp_path, f"sqlite:///{tmp_path / 'stoker.db'}", 1, signal.SIGTERM)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_stop_with_several_workers_on_postgresql(tmp_path, new_pg_database, signum):
    with new_pg_database("server_shutdown") as database:
        _stop_mid_actions_and_restart(tmp_path, database.url.render_as_string(hide_password=False), 2, signum)


def test_an_update_cut_by_a_stop_ends_failed_as_interrupted(tmp_path):
    """An update cannot be picked up halfway: the next server marks it (and its resource) FAILED."""
    template = ("heat_template_version: 2016-10-14\nresources:\n"
                "  r: {type: OS::Heat::TestResource, properties: {value: %s, action_wait_secs: {update: 30}}}\n")
    db_url = f"sqlite:///{tmp_path / 'stoker.db'}"
    server = start_server(tmp_path / "first", db_url)
    try:
        stack_id = _call(server, "POST", "/p/stacks", json={"stack_name": "up", "template": template % "one"}
                         ).json()["stack"]["id"]
        _until(lambda: _status(server, "p", "up") == "CREATE_COMPLETE", FINISH_BOUND, "created")
        _call(server, "PUT", f"/p/stacks/up/{stack_id}", json={"template": template % "two"})
        _until(lambda: _resources(server, "p", "up") == {"r": "UPDATE_IN_PROGRESS"}, FINISH_BOUND, "updating")
        _stop(server, signal.SIGTERM)
    finally:
        server.stop()
    again = start_server(tmp_path / "second", db_url)
    try:
        _until(lambda: _status(again, "p", "up") == "UPDATE_FAILED", FINISH_BOUND, "marked failed")
        shown = _call(again, "GET", f"/p/stacks/up/{stack_id}").json()["stack"]
        assert shown["stack_status_reason"] == "Stack UPDATE interrupted: the server stopped while it ran"
        assert _resources(again, "p", "up") == {"r": "UPDATE_FAILED"}
    finally:
        again.stop()


def _polls_kept(db_url: str, names: tuple[str, ...]) -> bool:
    """Have the waiting resources' polls reached the database (a batch after their start)?"""
    store = open_store(db_url)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(Resource.__table__.select().where(Resource.name.in_(names))).all()
    finally:
        store.close()
    return len(rows) == len(names) and all(POLL_KEY in (row.data or {}) for row in rows)


@pytest.mark.parametrize("peer", [False, True], ids=["next-server", "running-peer"])
def test_sigkill_leaves_actions_another_server_takes_over_at_once(tmp_path, peer):
    """The lock's heartbeat timeout is an hour here: only knowing the dead server's process
    is gone lets another server resume the create -- the next one at its start, or one
    already serving on its next beat -- each resource still created once."""
    db_url = f"sqlite:///{tmp_path / 'stoker.db'}"
    patient = {"STOKER_LOCK_TIMEOUT": "3600"}
    server = start_server(tmp_path / "first", db_url, env=patient)
    again = None
    try:
        _call(server, "POST", "/north/stacks",
              json={"stack_name": "killed", "template": SLOW, "files": {"nested.yaml": NESTED}})
        _until(lambda: _resources(server, "north", "killed").get("slow") == "CREATE_IN_PROGRESS"
               and _resources(server, "north", "killed").get("inner") == "CREATE_IN_PROGRESS",
               FINISH_BOUND, "in progress")
        _until(lambda: _polls_kept(db_url, ("slow", "inner")), FINISH_BOUND, "polls kept")
        _deadlines_passed(db_url)  # a SIGKILLed server writes nothing more: the kept polls stay so
        if peer:
            again = start_server(tmp_path / "second", db_url, env=patient)
            assert _status(again, "north", "killed") == "CREATE_IN_PROGRESS"  # its holder lives
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(EXIT_BOUND)
    finally:
        server.stop()

    again = again or start_server(tmp_path / "second", db_url, env=patient)
    try:
        _until(lambda: not _status(again, "north", "killed").endswith("IN_PROGRESS"), FINISH_BOUND, "finished")
        shown = _call(again, "GET", "/north/stacks/killed").json()["stack"]
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        assert shown["outputs"][0]["output_value"] == "two+inner"
        events = _call(again, "GET", "/north/stacks/killed/events?nested_depth=2").json()["events"]
        starts = Counter(e["resource_name"] for e in events
                         if e["resource_status"] == "CREATE_IN_PROGRESS" and e["resource_name"] in MADE)
        assert starts == {name: 1 for name in MADE}, events
        assert any(e["resource_status_reason"] == "Stack CREATE resumed" for e in events)
    finally:
        again.stop()
