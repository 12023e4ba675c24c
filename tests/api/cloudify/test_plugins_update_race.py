"""A plugins update and an execution starting at once: the execution runs on one version of the plan.

In process (``create_app``), so each test can put the other request exactly into the gap it would race
through: between the update's check and its rewrite, or between an execution's reading of the deployment
and its start.  Plugin tasks are stood in for by a recorder of the version each would run."""

from __future__ import annotations

import threading
import time

import pytest

from stoker.store.execution_records import ExecutionRecords
from stoker.store.plugins_updates import PluginsUpdates
from stoker.workflows import operations
from stoker.workflows.operation_context import OperationFailed

from .test_isolation_and_hostile import _archive
from .test_plugin_tenants import _zip
from .test_plugins_queue_validate import _wagon

API = "/api/v3.1"
BLUEPRINT = ("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml, 'plugin:my-plugin']\n"
             "node_templates:\n  thing:\n    type: my.Thing\n    interfaces:\n      cloudify.interfaces.lifecycle:\n"
             "        create: mine.my_plugin.tasks.create\n")


@pytest.fixture
def api(tmp_path, monkeypatch, db_url):
    """noauth (on SQLite, and on PostgreSQL, whose deployment rows are locked ``FOR UPDATE``), on a blueprint importing my-plugin 1.0 and a deployment of it; 2.0 uploaded since; ``ran``:
    the plugin version of each task run, ``release``: set to let a task end (it fails: nothing runs it)."""
    from fastapi.testclient import TestClient

    from stoker.api.app import create_app

    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    ran, release, entered = [], threading.Event(), threading.Event()

    def task(plugin: dict, implementation: str, *_args) -> list[str]:
        ran.append(plugin["package_version"])
        entered.set()
        release.wait(30)
        raise OperationFailed("no plugin runs in this test", recoverable=False)

    monkeypatch.setattr(operations, "task_command", task)
    with TestClient(create_app(db_url, allow_local_resources=True)) as client:
        for version in ("1.0", "2.0"):
            folder = tmp_path / version
            folder.mkdir()
            with open(_zip(folder / "up", *_wagon(folder, version)), "rb") as zipped:
                assert client.post(f"{API}/plugins", content=zipped.read()).status_code == 201
            if version == "1.0":
                uploaded = client.put(f"{API}/blueprints/bp", params={"application_file_name": "blueprint.yaml"},
                                      content=_archive({"blueprint.yaml": BLUEPRINT.encode()}))
                assert uploaded.status_code == 201, uploaded.text
                assert client.put(f"{API}/deployments/dep", json={"blueprint_id": "bp"}).status_code == 201
        client.ran, client.release, client.entered = ran, release, entered
        yield client
        release.set()


def _in_thread(call):
    """``call()``'s result, run in a thread of its own (a request made while another is inside the server)."""
    done = []
    thread = threading.Thread(target=lambda: done.append(call()))
    thread.start()
    thread.join(60)
    assert done, "the request did not come back"
    return done[0]


def _ended(client, execution_id: str) -> dict:
    deadline = time.monotonic() + 60
    while (found := client.get(f"{API}/executions/{execution_id}").json())["status"] not in (
            "terminated", "failed", "cancelled"):
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    return found


def _plan_version(client) -> str:
    return client.get(f"{API}/blueprints/bp").json()["plan"]["plugins"]["mine"]["package_version"]


def test_an_execution_started_between_an_updates_check_and_its_rewrite_refuses_the_update(api, monkeypatch):
    started = []
    apply = PluginsUpdates.apply

    def execution_first(self, *args, **kwargs):
        answer = _in_thread(lambda: api.post(f"{API}/executions", json={"deployment_id": "dep",
                                                                         "workflow_id": "install"}))
        assert answer.status_code == 201, answer.text
        started.append(answer.json()["id"])
        assert api.entered.wait(30)  # its task runs: the execution is active
        return apply(self, *args, **kwargs)

    monkeypatch.setattr(PluginsUpdates, "apply", execution_first)
    refused = api.post(f"{API}/plugins-updates/bp/update/initiate", json={})
    assert (refused.status_code, refused.json()["error_code"]) == (400, "plugins_update_failed"), refused.text
    assert f"is running execution {started[0]}" in refused.json()["message"]
    api.release.set()
    assert _ended(api, started[0])["status"] == "failed"
    assert api.ran == ["1.0"] and _plan_version(api) == "1.0"
    assert api.get(f"{API}/plugins-updates").json()["items"] == []  # nothing stored


def test_an_update_between_an_executions_reading_and_its_start_is_run_by_all_of_it(api, monkeypatch):
    updated = []
    start = ExecutionRecords.start_execution

    def update_first(self, *args, **kwargs):
        if not updated:
            updated.append(_in_thread(lambda: api.post(f"{API}/plugins-updates/bp/update/initiate", json={})))
        return start(self, *args, **kwargs)

    monkeypatch.setattr(ExecutionRecords, "start_execution", update_first)
    install = api.post(f"{API}/executions", json={"deployment_id": "dep", "workflow_id": "install"})
    assert install.status_code == 201, install.text
    assert updated[0].status_code == 200 and updated[0].json()["state"] == "successful", updated[0].text
    api.release.set()
    assert _ended(api, install.json()["id"])["status"] == "failed"
    assert api.ran == ["2.0"] and _plan_version(api) == "2.0"  # planned again on the updated deployment
