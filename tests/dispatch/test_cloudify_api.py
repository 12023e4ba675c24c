"""Cloudify's REST API with a broker: executions started through /api/v3.1 run on ``stoker worker``
processes (where Cloudify runs them, its management workers), and a queued one starts at the end of the
running one on the worker that ends it."""

from __future__ import annotations

import io
import tarfile
import time
from contextlib import contextmanager
from pathlib import Path

from .conftest import PLUGINS, SETTLE_LIMIT
from .test_executions import OPERATION, blueprint

API = "/api/v3.1"


@contextmanager
def cloudify_api(cluster, monkeypatch, allow_local_resources: bool = True):
    """A client of ``stoker api --broker --allow-local-resources`` (noauth: default_tenant)."""
    from fastapi.testclient import TestClient

    from stoker.api.app import create_app

    monkeypatch.setenv("STOKER_QUEUE", cluster.queue)
    monkeypatch.setenv("STOKER_HOME", str(cluster.tmp / "home"))
    app = create_app(cluster.db_url, broker=cluster.broker, plugin_dirs=[str(PLUGINS)],
                     allow_local_resources=allow_local_resources)
    with TestClient(app) as client:
        yield client


def _archive(tmp_path, hold: float) -> bytes:
    """The blueprint folder as ``cfy blueprints upload`` packs it: one top folder in a tar.gz."""
    runs = tmp_path / "runs.log"
    return _packed({"bp/blueprint.yaml": blueprint(runs, hold), "bp/scripts/op.sh": OPERATION})


def _packed(files: dict) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return data.getvalue()


def _ended(client, execution_id: str) -> dict:
    deadline = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < deadline:
        found = client.get(f"{API}/executions/{execution_id}").json()
        if found["status"] in ("terminated", "failed", "cancelled"):
            return found
        time.sleep(0.2)
    raise AssertionError(f"execution {execution_id} did not end within {SETTLE_LIMIT} s")


def test_cloudify_api_executions_run_on_the_workers_and_queued_ones_follow(cluster, monkeypatch, tmp_path):
    for _ in range(2):
        cluster.start_worker(concurrency=2)
    with cloudify_api(cluster, monkeypatch) as client:
        uploaded = client.put(f"{API}/blueprints/bp", params={"application_file_name": "blueprint.yaml"},
                              content=_archive(tmp_path, 0.3))
        assert uploaded.status_code == 201, uploaded.text
        assert client.put(f"{API}/deployments/dep", json={"blueprint_id": "bp", "inputs": {}}).status_code == 201
        install = client.post(f"{API}/executions", json={"deployment_id": "dep", "workflow_id": "install"})
        assert install.status_code == 201, install.text
        queued = client.post(f"{API}/executions", json={"deployment_id": "dep", "workflow_id": "uninstall",
                                                         "queue": "true", "force": "false"})
        assert queued.status_code == 201 and queued.json()["status"] == "queued", queued.text
        assert _ended(client, install.json()["id"])["status"] == "terminated"
        # the worker that ended the install started the queued uninstall on the workers
        assert _ended(client, queued.json()["id"])["status"] == "terminated"
        events = client.get(f"{API}/events", params={"execution_id": queued.json()["id"], "_size": 1000}).json()
        assert events["items"][-1]["event_type"] == "workflow_succeeded"
        instances = client.get(f"{API}/node-instances", params={"deployment_id": "dep"}).json()["items"]
        assert {i["state"] for i in instances} == {"deleted"} and len(instances) == 4
    pids = {line.split()[3] for line in (tmp_path / "runs.log").read_text().splitlines() if line.startswith("start")}
    worker_pids = {str(w.pid) for w in cluster.workers}
    assert pids and pids <= worker_pids  # every operation ran under a worker (its parent), none in the API


HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
PARENT = HEADER + """node_templates:
  shop:
    type: cloudify.nodes.Component
    properties:
      resource_config:
        blueprint: {id: child-bp, blueprint_archive: child}
        deployment: {id: child}
"""
CHILD = HEADER + """node_templates:
  db:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle: {create: scripts/run.sh}
"""


def test_a_components_child_started_on_a_worker_is_held_to_the_api_s_local_resources_policy(cluster, monkeypatch,
                                                                                          tmp_path):
    """The parent's install runs on a worker, which knows nothing of the API's settings: the execution
    carries its starter's policy, so the child's script operations are refused there as the API would."""
    cluster.start_worker(concurrency=1)
    files = {"app/blueprint.yaml": PARENT, "app/child/blueprint.yaml": CHILD,
             "app/child/scripts/run.sh": f"touch {tmp_path / 'ran'}\n"}
    with cloudify_api(cluster, monkeypatch, allow_local_resources=False) as client:
        uploaded = client.put(f"{API}/blueprints/app", params={"application_file_name": "blueprint.yaml"},
                              content=_packed(files))
        assert uploaded.status_code == 201, uploaded.text
        assert client.put(f"{API}/deployments/parent", json={"blueprint_id": "app"}).status_code == 201
        install = client.post(f"{API}/executions", json={"deployment_id": "parent", "workflow_id": "install"})
        assert install.status_code == 201, install.text
        failed = _ended(client, install.json()["id"])
        assert failed["status"] == "failed"
        assert "cannot start install on deployment child: deployment child has script operations, which run on " \
               "the server host and are off for this tenant" in failed["error"]
    assert not (tmp_path / "ran").exists()


GRAPHS_BLUEPRINT = Path(__file__).resolve().parents[1] / "templates" / "blueprints" / "tasks_graphs"


def test_an_install_on_the_workers_lists_its_operations(cluster, monkeypatch):
    """Each step a worker ran, read back as an operation (``cfy executions operations list``)."""
    cluster.start_worker(concurrency=2)
    files = {f"bp/{path.relative_to(GRAPHS_BLUEPRINT)}": path.read_text()
             for path in GRAPHS_BLUEPRINT.rglob("*") if path.is_file()}
    with cloudify_api(cluster, monkeypatch) as client:
        uploaded = client.put(f"{API}/blueprints/bp", params={"application_file_name": "blueprint.yaml"},
                              content=_packed(files))
        assert uploaded.status_code == 201, uploaded.text
        assert client.put(f"{API}/deployments/dep", json={"blueprint_id": "bp"}).status_code == 201
        install = client.post(f"{API}/executions", json={"deployment_id": "dep", "workflow_id": "install"})
        assert _ended(client, install.json()["id"])["status"] == "terminated"
        listed = client.get(f"{API}/operations", params={"execution_id": install.json()["id"]}).json()["items"]
        operations = [op["parameters"]["task_kwargs"]["kwargs"]["__cloudify_context"]["operation"]["name"]
                      for op in listed if op["state"] == "succeeded"]
        assert sorted(operations) == ["cloudify.interfaces.lifecycle.configure", "cloudify.interfaces.lifecycle.create",
                                      "cloudify.interfaces.lifecycle.create",
                                      "cloudify.interfaces.relationship_lifecycle.establish"]
        [graph] = client.get(f"{API}/tasks_graphs", params={"execution_id": install.json()["id"]}).json()["items"]
        assert graph["name"] == "install"
