"""A server stopping while an execution runs stops at once: the execution is cancelled (its scripts
killed) and can be resumed later, instead of holding the server until its scripts end."""

from __future__ import annotations

import io
import subprocess
import tarfile
import time

import httpx

from stoker.engine.engine import Engine

from .conftest import cloudify_server

API = "/api/v3.1"
#: a bound on the stop (the script would run for minutes), not a measurement
STOP_BOUND = 15

BLUEPRINT = b"""tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  a:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/slow.sh
"""


def _archive(marker: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in {"bp/blueprint.yaml": BLUEPRINT,
                           "bp/scripts/slow.sh": f"sh -c 'sleep 300' {marker}\n".encode()}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _running(marker: str) -> bool:
    return marker in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_stopping_server_cancels_its_executions(tmp_path, monkeypatch):
    server = cloudify_server(tmp_path, [("admin", "default_tenant", "manager")], extra=("--allow-local-resources",))
    marker = f"stoker-stop-test-{tmp_path.name}"
    try:
        c = httpx.Client(base_url=server.url + API, auth=("admin", "s3cret-Pass"), timeout=30)
        assert c.put("/blueprints/bp", params={"application_file_name": "blueprint.yaml"}, content=_archive(marker),
                     headers={"Content-Type": "application/octet-stream"}).status_code == 201
        assert c.put("/deployments/d", json={"blueprint_id": "bp"}).status_code == 201
        execution = c.post("/executions", json={"deployment_id": "d", "workflow_id": "install"}).json()
        deadline = time.monotonic() + STOP_BOUND
        while not _running(marker):
            assert time.monotonic() < deadline, c.get(f"/executions/{execution['id']}").text
            time.sleep(0.1)
        server.process.terminate()
        server.process.wait(STOP_BOUND)
    finally:
        server.stop()
    assert not _running(marker)
    monkeypatch.setenv("STOKER_HOME", str(tmp_path))
    engine = Engine(db_url=server.db_url)
    try:
        assert engine.executions.get(execution["id"])["status"] == "cancelled"
    finally:
        engine.close()
