"""``cfy snapshots`` on ``stoker api``: a whole server made into a snapshot, downloaded, uploaded to a second,
empty server and restored there (blueprint and its scripts, deployment with labels, secrets, executions and
events); refused over a non-empty server, with another secret key, to anyone but the operator, and for
archives that are no snapshot."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import httpx
import pytest
from archives import zipped
from cryptography.fernet import Fernet

from .conftest import PASSWORD, cfy_on, cloudify_server, rest_client
from .test_plugins_queue_validate import _wagon

pytestmark = pytest.mark.slow  # servers, and each `cfy` command is a process of its own

pytest.importorskip("cloudify_rest_client")

KEY = Fernet.generate_key().decode()
USERS = [("admin", "default_tenant", "manager"), ("carol", "default_tenant", "user"), ("bob", "t2", "manager")]

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_4
imports:
  - cloudify/types/types.yaml
inputs:
  folder:
    type: string
node_templates:
  thing:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: scripts/create.sh
          inputs:
            word: { get_secret: word }
        delete:
          implementation: scripts/delete.sh
          inputs:
            folder: { get_input: folder }
            password: { get_secret: pw }
"""
CREATE = """#!/bin/bash
set -euo pipefail
ctx instance runtime-properties made "$word"
ctx logger info "made with $word"
"""
DELETE = """#!/bin/bash
set -euo pipefail
mkdir -p "$folder"
echo "$password" > "$folder/deleted.txt"
"""


def _server(tmp_path_factory, name: str, key: str):
    return cloudify_server(tmp_path_factory.mktemp(name), USERS, extra=("--allow-local-resources",),
                           env={"STOKER_SECRET_KEY": key})


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A server holding an installed deployment, its snapshot s1 made, listed and downloaded with cfy."""
    tmp = tmp_path_factory.mktemp("snapshot-source")
    server = _server(tmp_path_factory, "source", KEY)
    try:
        cfy = cfy_on(server, tmp)
        app = tmp / "app"
        (app / "scripts").mkdir(parents=True)
        (app / "blueprint.yaml").write_text(BLUEPRINT)
        (app / "scripts" / "create.sh").write_text(CREATE)
        (app / "scripts" / "delete.sh").write_text(DELETE)
        wagon, yaml = _wagon(tmp, "1.0")
        cfy("plugins", "upload", str(wagon), "-y", str(yaml))
        cfy("blueprints", "upload", str(app / "blueprint.yaml"), "-b", "app")
        cfy("secrets", "create", "word", "-s", "hello")
        cfy("secrets", "create", "pw", "-s", "topsecret", "--hidden-value")
        cfy("tenants", "create", "acme")  # a tenant without users, holding a secret of its own
        rest_client(server, "admin", "acme").secrets.create("far", "away")
        cfy("deployments", "create", "web", "-b", "app", "-i", json.dumps({"folder": str(tmp / "gone")}),
            "--labels", "env:prod")
        assert "'install' workflow execution succeeded" in cfy("executions", "start", "install", "-d", "web")
        assert "Successfully created snapshot s1" in cfy("snapshots", "create", "s1", "--wait-for-status")
        listed = json.loads(cfy("snapshots", "list", "--json"))
        assert [(s["id"], s["status"], s["created_by"]) for s in listed] == [("s1", "created", "admin")]
        assert rest_client(server).snapshots.get("s1").status == "created"  # cfy 7.0.5 has no `snapshots get`
        cfy("snapshots", "download", "s1", "-o", str(tmp / "f.zip"))
        yield server, tmp / "f.zip", wagon
    finally:
        server.stop()


def test_a_snapshot_restored_on_a_second_server_holds_the_whole_first(made, tmp_path_factory, tmp_path):
    _, archive, wagon = made
    with zipfile.ZipFile(archive) as kept:
        about = json.loads(kept.read("metadata.json"))
    assert about["tables"]["deployment"]["rows"] == 1 and "api_user" not in about["tables"]
    server = _server(tmp_path_factory, "target", KEY)  # a fresh server, the same secret key
    try:
        cfy = cfy_on(server, tmp_path)
        assert "Snapshot uploaded" in cfy("snapshots", "upload", str(archive), "-s", "s1")
        assert rest_client(server).snapshots.get("s1").status == "uploaded"
        out = cfy("snapshots", "restore", "s1")
        restore_id = out.split("execution's id is ")[1].split(".")[0]
        assert rest_client(server).executions.get(restore_id).status == "terminated"
        assert "No snapshot is currently being restored" in cfy("snapshots", "status")

        assert [b["id"] for b in json.loads(cfy("blueprints", "list", "--json"))] == ["app"]
        [plugin] = json.loads(cfy("plugins", "list", "--json"))
        cfy("plugins", "download", plugin["id"], "-o", str(tmp_path / "back.wgn"))
        assert (tmp_path / "back.wgn").read_bytes() == wagon.read_bytes()  # unpacked here from its restored row
        deployment = rest_client(server).deployments.get("web")
        assert [(label["key"], label["value"]) for label in deployment.labels] == [("env", "prod")]
        [instance] = json.loads(cfy("node-instances", "list", "-d", "web", "--json"))
        assert instance["state"] == "started"
        assert rest_client(server).node_instances.get(instance["id"]).runtime_properties["made"] == "hello"
        assert json.loads(cfy("secrets", "get", "word", "--json"))["value"] == "hello"
        assert rest_client(server, "admin", "acme").secrets.get("far").value == "away"  # its tenant came along
        hidden = json.loads(cfy("secrets", "get", "pw", "--json"))
        assert hidden["is_hidden_value"] is True and hidden["value"] != "topsecret"
        [install] = json.loads(cfy("executions", "list", "-d", "web", "--json"))
        assert (install["workflow_id"], install["status"]) == ("install", "completed")
        events = cfy("events", "list", install["id"], "--include-logs")
        assert "made with ******" in events and "Task succeeded 'cloudify.interfaces.lifecycle.create'" in events

        # the blueprint's scripts came along, and the hidden secret opens with the same key
        assert "'uninstall' workflow execution succeeded" in cfy("executions", "start", "uninstall", "-d", "web")
        assert (archive.parent / "gone" / "deleted.txt").read_text().strip() == "topsecret"
        cfy("deployments", "delete", "web")
        cfy("deployments", "create", "web2", "-b", "app", "-i", json.dumps({"folder": str(tmp_path / "x")}))

        # the server holds something now: a second restore is refused, nothing changes
        refused = cfy("snapshots", "restore", "s1", ok=False)
        assert "Snapshot restoration on a non-empty manager is not permitted" in refused
        assert [d["id"] for d in json.loads(cfy("deployments", "list", "--json"))] == ["web2"]
    finally:
        server.stop()


def test_a_snapshot_sealed_with_another_key_is_refused_whole(made, tmp_path_factory, tmp_path):
    server = _server(tmp_path_factory, "other-key", Fernet.generate_key().decode())
    try:
        cfy = cfy_on(server, tmp_path)
        cfy("snapshots", "upload", str(made[1]), "-s", "s1")
        refused = cfy("snapshots", "restore", "s1", ok=False)
        assert "sealed with another secret key" in refused
        assert json.loads(cfy("blueprints", "list", "--json")) == []
        assert json.loads(cfy("secrets", "list", "--json")) == []
    finally:
        server.stop()


def test_only_the_operator_handles_snapshots(made):
    from cloudify_rest_client.exceptions import CloudifyClientError

    server = made[0]
    for user, tenant in (("carol", "default_tenant"), ("bob", "t2")):
        client = rest_client(server, user, tenant)
        for call in (lambda: client.snapshots.list(), lambda: client.snapshots.get("s1"),
                     lambda: client.snapshots.create("s2", True), lambda: client.snapshots.restore("s1")):
            with pytest.raises(CloudifyClientError) as refused:
                call()
            assert refused.value.status_code == 403, (user, refused.value)
    assert [s.id for s in rest_client(server).snapshots.list()] == ["s1"]



def test_archives_that_are_no_snapshot_are_refused_and_not_kept(made, tmp_path):
    from cloudify_rest_client.exceptions import CloudifyClientError

    server, archive, _ = made
    client = rest_client(server)
    with zipfile.ZipFile(archive) as kept:
        real = {name: kept.read(name).decode() for name in kept.namelist()}
    hostile = {"junk": b"this is no zip at all",
               "dotdot": zipped({**real, "../evil.jsonl": "{}"}),
               "nometa": zipped({"tables/secret.jsonl": ""}),
               "badrow": zipped({**real, "tables/secret.jsonl": "not json\n"})}
    for name, data in hostile.items():
        path = tmp_path / f"{name}.zip"
        path.write_bytes(data)
        if name == "badrow":  # reads as a backup: refused at its restore, in one piece
            client.snapshots.upload(str(path), name)
            continue
        with pytest.raises(CloudifyClientError) as refused:
            client.snapshots.upload(str(path), name)
        assert refused.value.status_code == 400 and refused.value.error_code == "snapshot_action_error", name
    assert sorted(s.id for s in client.snapshots.list()) == ["badrow", "s1"]
    with pytest.raises(CloudifyClientError) as refused:
        client.snapshots.restore("badrow", force=True)
    assert refused.value.status_code == 400 and "row 1" in str(refused.value)
    assert [d.id for d in client.deployments.list()] == ["web"]  # the forced restore deleted nothing either
    client.snapshots.delete("badrow")
    with pytest.raises(CloudifyClientError) as unknown:
        client.snapshots.restore("nosuch")
    assert unknown.value.status_code == 404
    answer = httpx.put(f"{server.url}/api/v3.1/snapshots/..%2Fx/archive", content=b"x",
                       auth=("admin", PASSWORD), headers={"Tenant": "default_tenant"})
    assert answer.status_code in (400, 404) and "Traceback" not in answer.text
    assert [s.id for s in client.snapshots.list()] == ["s1"]


def test_snapshot_status_and_executions_read_back(made):
    server = made[0]
    client = rest_client(server)
    assert client.snapshots.get_status() == {"status": "not-running"}
    execution = client.snapshots.create("s3", include_credentials=True, include_events=False, include_logs=False)
    assert (execution.workflow_id, execution.status) == ("create_snapshot", "terminated")
    assert client.executions.get(execution.id).status == "terminated"
    download = Path(client.snapshots.download("s3", str(Path(made[1]).parent / "s3.zip")))
    with zipfile.ZipFile(download) as kept:
        events = [json.loads(line) for line in kept.read("tables/execution_event.jsonl").splitlines()]
    assert events == []  # neither events nor logs
    client.snapshots.delete("s3")


def test_the_operator_alone_updates_a_snapshots_status(made):
    from cloudify_rest_client.exceptions import CloudifyClientError

    server = made[0]
    client = rest_client(server)
    client.snapshots.create("s4", False, include_events=False, include_logs=False)
    client.snapshots.update_status("s4", "failed", error="the disk went away")
    marked = client.snapshots.get("s4")
    assert (marked.status, marked.error) == ("failed", "the disk went away")
    with pytest.raises(CloudifyClientError) as failed:
        client.snapshots.download("s4", str(Path(made[1]).parent / "s4.zip"))
    assert (failed.value.error_code, "Failed snapshot cannot be downloaded" in str(failed.value)) == (
        "snapshot_action_error", True)
    client.snapshots.update_status("s4", "created")  # an error not sent is cleared, as on Cloudify
    assert (client.snapshots.get("s4").status, client.snapshots.get("s4").error) == ("created", "")
    for call, code in ((lambda: client.snapshots.update_status("s4", "lost"), 400),
                       (lambda: client.snapshots.update_status("nosuch", "failed"), 404),
                       (lambda: rest_client(server, "carol", "default_tenant").snapshots.update_status(
                           "s4", "failed"), 403)):
        with pytest.raises(CloudifyClientError) as refused:
            call()
        assert refused.value.status_code == code, refused.value
    assert client.snapshots.get("s4").status == "created"
    client.snapshots.delete("s4")
    # one whose making failed (no archive) is never marked as one to download or restore
    from stoker.store.db import open_store
    from stoker.store.manager_snapshots import FAILED, ManagerSnapshots

    store = open_store(server.db_url)
    try:
        ManagerSnapshots(store).add("s5", "admin", FAILED)
    finally:
        store.close()
    with pytest.raises(CloudifyClientError) as empty:
        client.snapshots.update_status("s5", "created")
    assert (empty.value.status_code, empty.value.error_code) == (400, "snapshot_action_error")
    assert client.snapshots.get("s5").status == "failed"
    client.snapshots.delete("s5")
