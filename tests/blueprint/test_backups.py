"""``stoker backup create|restore``: a SQLite server's whole state (blueprints, deployments, executions, events,
secrets, stacks) restored into an empty PostgreSQL one, which then goes on making rows of its own; a
non-empty server, an archive that is no backup and one naming a member outside it are refused, nothing
written."""

from __future__ import annotations

import json
import os
import socket
import time
import zipfile

import pytest
from archives import zipped
from stoker.errors import StokerError
from cryptography.fernet import Fernet

from .conftest import REPO, cli_on

BLUEPRINT = """\
tosca_definitions_version: cloudify_dsl_1_4
imports:
  - cloudify/types/types.yaml
node_templates:
  a:
    type: cloudify.nodes.Root
  b:
    type: cloudify.nodes.Root
    relationships:
      - type: cloudify.relationships.depends_on
        target: a
"""



def _installed_backup(source, write, tmp_path) -> dict[str, bytes]:
    """The members of a backup of ``source`` holding deployment d1 of blueprint bp, installed."""
    assert source("blueprint", "upload", write("bp/blueprint.yaml", BLUEPRINT), "-b", "bp").exit_code == 0
    assert source("deployment", "create", "d1", "-b", "bp").exit_code == 0
    assert source("install", "d1").exit_code == 0
    assert source("backup", "create", tmp_path / "f.zip").exit_code == 0
    with zipfile.ZipFile(tmp_path / "f.zip") as kept:
        return {name: kept.read(name) for name in kept.namelist()}


def test_a_sqlite_backup_restores_into_postgresql(sqlite_url, new_pg_database, write, tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_SECRET_KEY", Fernet.generate_key().decode())
    source = cli_on(sqlite_url)
    assert source("blueprint", "upload", write("bp/blueprint.yaml", BLUEPRINT), "-b", "bp").exit_code == 0
    assert source("deployment", "create", "d1", "-b", "bp", "--label", "env:prod").exit_code == 0
    assert source("install", "d1").exit_code == 0
    assert source("secret", "create", "pw", "-s", "topsecret", "--hidden").exit_code == 0
    assert source("stack", "create", "hello", "-t", REPO / "examples" / "hello.yaml", "--wait").exit_code == 0
    made = source("backup", "create", tmp_path / "f.zip")
    assert made.exit_code == 0, made.stderr

    with new_pg_database("stoker_backup") as database:
        target = cli_on(database.url.render_as_string(hide_password=False))
        done = target("backup", "restore", tmp_path / "f.zip")
        assert done.exit_code == 0, done.stderr
        [deployment] = json.loads(target("deployment", "list", "-f", "json").stdout)
        assert deployment["id"] == "d1"
        labels = json.loads(target("deployment", "get", "d1", "-f", "json").stdout)["labels"]
        assert [(label["key"], label["value"]) for label in labels] == [("env", "prod")]
        instances = json.loads(target("node-instance", "list", "-d", "d1", "-f", "json").stdout)
        assert sorted(i["state"] for i in instances) == ["started", "started"]
        [install] = json.loads(target("execution", "list", "-d", "d1", "-f", "json").stdout)
        assert install["status"] == "terminated"
        assert "workflow_succeeded" in target("event", "list", install["id"], "-f", "json").stdout
        assert json.loads(target("secret", "get", "pw", "-f", "json").stdout)["is_hidden_value"] is True
        assert json.loads(target("stack", "show", "hello", "-f", "json").stdout)["stack_status"] == "CREATE_COMPLETE"

        # the integer keys go on after the restored ones
        assert target("deployment", "create", "d2", "-b", "bp").exit_code == 0
        assert target("install", "d2").exit_code == 0
        assert target("secret", "create", "more", "-s", "x").exit_code == 0

        refused = target("backup", "restore", tmp_path / "f.zip")
        assert refused.exit_code == 1 and "non-empty manager is not permitted" in refused.stderr
        with zipfile.ZipFile(tmp_path / "f.zip") as kept:
            members = {name: kept.read(name) for name in kept.namelist()}
        for name, data in {"junk.zip": b"PK no zip", "dotdot.zip": zipped({**members, "tables/../x.jsonl": b"{}"}),
                           "newer.zip": zipped({**members, "metadata.json": json.dumps({
                               **json.loads(members["metadata.json"]), "schema_revision": "9999"}).encode()})}.items():
            (tmp_path / name).write_bytes(data)
            refused = target("backup", "restore", tmp_path / name, "--force")
            assert refused.exit_code == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert "Cannot restore a newer server's backup" in refused.stderr
        assert sorted(d["id"] for d in json.loads(target("deployment", "list", "-f", "json").stdout)) == ["d1", "d2"]


def test_a_failed_snapshot_is_kept_failed_and_neither_served_nor_restored(engine, monkeypatch):
    from stoker.store import backups
    from stoker.store.manager_snapshots import ManagerSnapshots

    def broken(*args, **kwargs):
        raise OSError("disk full")

    snapshots = ManagerSnapshots(engine.store)
    monkeypatch.setattr(backups, "dump", broken)
    row = backups.make_snapshot(snapshots, "s1", "admin")
    assert (row["status"], row["error"]) == ("failed", "OSError: disk full")
    with pytest.raises(backups.BackupError, match="Failed snapshot cannot be restored"):
        backups.restore_snapshot(snapshots, "s1")
    with pytest.raises(StokerError, match="Failed snapshot cannot be downloaded"):
        snapshots.archive("s1")


def test_a_restore_while_another_runs_is_refused(engine):
    from stoker.errors import Conflict
    from stoker.store.backups import make_snapshot, restore_snapshot
    from stoker.store.locks import new_engine_id
    from stoker.store.manager_snapshots import ManagerSnapshots

    snapshots = ManagerSnapshots(engine.store)
    make_snapshot(snapshots, "s1", "admin")
    make_snapshot(snapshots, "s2", "admin")
    assert not snapshots.restoring()
    snapshots.claim("s1", new_engine_id())  # a restore of this (live) process runs from s1
    assert snapshots.restoring()
    with pytest.raises(Conflict, match="already running"):
        restore_snapshot(snapshots, "s2")
    snapshots.set("s1", restoring=f"{socket.gethostname()}:999999999:x")  # its process is gone: nothing runs
    assert snapshots.restoring() is False


def test_bombs_are_refused_before_they_unpack(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_BACKUP_SIZE", "100000")
    bomb = zipped({"metadata.json": "{}", "tables/secret.jsonl": b"\n" * 1_000_000})  # ~1 kB packed
    crowd = zipped({f"tables/t{n}.jsonl": b"" for n in range(1001)})
    for name, data, words in (("bomb.zip", bomb, "unpacks to more than 100000 bytes (max_backup_size)"),
                              ("crowd.zip", crowd, "1001 members (at most 1000)")):
        assert len(data) < 200_000
        (tmp_path / name).write_bytes(data)
        refused = cli("backup", "restore", tmp_path / name)
        assert refused.exit_code == 1 and words in refused.stderr, refused.stderr
    assert cli("secret", "list", "-f", "json").stdout.strip() == "[]"


def test_an_older_schemas_backup_restores_what_both_revisions_have(sqlite_url, write, tmp_path):
    """A backup made before migration 0023 had no ``execution.is_dry_run``: its executions restore, not dry runs."""
    members = _installed_backup(cli_on(sqlite_url), write, tmp_path)
    about = json.loads(members["metadata.json"])
    about["schema_revision"] = "0022"
    about["tables"]["execution"]["columns"].remove("is_dry_run")
    rows = [json.loads(line) for line in members["tables/execution.jsonl"].splitlines()]
    assert [row.pop("is_dry_run") for row in rows] == [False]
    members["tables/execution.jsonl"] = b"".join(json.dumps(row).encode() + b"\n" for row in rows)
    (tmp_path / "old.zip").write_bytes(zipped({**members, "metadata.json": json.dumps(about)}))

    target = cli_on(f"sqlite:///{tmp_path / 'target.db'}")
    done = target("backup", "restore", tmp_path / "old.zip")
    assert done.exit_code == 0, done.stderr
    [install] = json.loads(target("execution", "list", "-d", "d1", "-f", "json").stdout)
    shown = json.loads(target("execution", "get", install["id"], "-f", "json").stdout)
    assert (shown["workflow_id"], shown["status"], shown["is_dry_run"]) == ("install", "terminated", False)


def test_what_ran_on_the_old_server_runs_on_no_process_of_the_new_one(sqlite_url, write, tmp_path):
    """A backup taken while an execution ran (its owner a live process here, as when both servers share a host):
    restored, the execution reads as interrupted, to resume, not as running forever."""
    members = _installed_backup(cli_on(sqlite_url), write, tmp_path)
    [row] = [json.loads(line) for line in members["tables/execution.jsonl"].splitlines()]
    row.update(status="started", owner=f"{socket.gethostname()}:{os.getpid()}:{row['id']}", ended_at=None)
    members["tables/execution.jsonl"] = json.dumps(row).encode() + b"\n"
    (tmp_path / "running.zip").write_bytes(zipped(members))

    target = cli_on(f"sqlite:///{tmp_path / 'target.db'}")
    assert target("backup", "restore", tmp_path / "running.zip").exit_code == 0
    shown = json.loads(target("execution", "get", row["id"], "-f", "json").stdout)
    assert shown["status"] == "failed" and "interrupted" in shown["error"]


def test_a_stack_action_running_when_backed_up_is_resumed_by_the_next_server(sqlite_url, write, tmp_path, home):
    """Its lock is handed back, as a server that stopped mid-action hands it back: the next ``stoker api`` on the
    restored database ends it (held by a live process of the old server, it would wait for a beat that never
    comes)."""
    from api.helpers import start_server

    source = cli_on(sqlite_url)
    template = write("stack.yaml", "heat_template_version: 2018-08-31\n"
                                   "resources:\n  token: {type: OS::Heat::RandomString}\n")
    assert source("stack", "create", "s", "-t", template, "--wait").exit_code == 0
    assert source("backup", "create", tmp_path / "f.zip").exit_code == 0
    with zipfile.ZipFile(tmp_path / "f.zip") as kept:
        members = {name: kept.read(name) for name in kept.namelist()}
    [row] = [json.loads(line) for line in members["tables/stack.jsonl"].splitlines()]
    row.update(status="IN_PROGRESS", lock_owner=f"{socket.gethostname()}:{os.getpid()}:x", lock_action="CREATE")
    members["tables/stack.jsonl"] = json.dumps(row).encode() + b"\n"
    (tmp_path / "running.zip").write_bytes(zipped(members))
    target_url = f"sqlite:///{tmp_path / 'target.db'}"
    target = cli_on(target_url)
    assert target("backup", "restore", tmp_path / "running.zip").exit_code == 0

    server = start_server(tmp_path / "server", target_url, env={"STOKER_HOME": str(home)})
    try:
        deadline = time.monotonic() + 60
        while json.loads(target("stack", "show", "s", "-f", "json").stdout)["stack_status"] != "CREATE_COMPLETE":
            assert time.monotonic() < deadline, "the restored stack's action was not resumed"
            time.sleep(0.2)
    finally:
        server.stop()
