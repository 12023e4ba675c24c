"""A snapshot and its restore with a broker set: the workers run them (each plug-in's
``handle_snapshot``, the update back, ``handle_restore``), the asking side only starts them."""

from __future__ import annotations

from cryptography.fernet import Fernet

from .test_stack_actions import recorded, stack_template
from .test_workers import log_lines


def test_a_snapshot_and_its_restore_run_on_the_workers(cluster, tmp_path, monkeypatch):
    # the snapshot's data is sealed by a worker and read here: one key, as a deployment shares it
    key = Fernet.generate_key().decode()
    monkeypatch.setenv("STOKER_SECRET_KEY", key)
    cluster.env["STOKER_SECRET_KEY"] = key
    workers = {cluster.start_worker().pid, cluster.start_worker().pid}
    log = tmp_path / "made.log"
    started = cluster.engine.create_stack("snap", stack_template(
        {"a": recorded(log, "a1", tag="first"), "b": recorded(log, "b1")}, a={"get_attr": ["a", "value"]}))
    assert cluster.settle(started["id"])["stack_status"] == "CREATE_COMPLETE"

    row = cluster.engine.snapshots.start("snap", "before")
    cluster.engine.snapshots.take(row["stack_id"], row["id"])  # started: the workers take it
    assert cluster.settle(started["id"])["stack_status"] == "SNAPSHOT_COMPLETE"
    taken = cluster.engine.snapshots.create("snap", "again")   # waits for them
    assert taken["status"] == "COMPLETE"
    first = cluster.engine.snapshots.show("snap", row["id"])
    assert first["status"] == "COMPLETE" and first["data"]["resources"]["a"]["action"] == "SNAPSHOT"
    snapshots = [fields for fields in log_lines(log) if fields[0] == "snapshot"]
    assert sorted(f[1] for f in snapshots) == ["a", "a", "b", "b"]
    assert {int(f[3]) for f in snapshots} <= workers  # each line written by a worker's process group

    cluster.engine.update_stack("snap", stack_template({"a": recorded(log, "a1", tag="second"),
                                                        "b": recorded(log, "b1")}))
    assert cluster.settle(started["id"])["stack_status"] == "UPDATE_COMPLETE"
    restoring = cluster.engine.snapshots.restore("snap", row["id"], wait=False)
    assert restoring["stack_status"] == "RESTORE_IN_PROGRESS"  # the asking side only starts it
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "RESTORE_COMPLETE", done["stack_status_reason"]
    updates = [f for f in log_lines(log) if f[0] == "update"]
    assert [f[1] for f in updates] == ["a", "a"] and {int(f[3]) for f in updates} <= workers
    restores = [f for f in log_lines(log) if f[0].startswith("restore:")]
    assert sorted((f[0], f[1]) for f in restores) == [("restore:", "b"), ("restore:first", "a")]
    assert {int(f[3]) for f in restores} <= workers
    assert cluster.engine.outputs("snap")[0]["output_value"] == "a1"
    assert cluster.engine.resource("snap", "a")["resource_status"] == "UPDATE_COMPLETE"
