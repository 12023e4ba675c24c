"""A deployment update on ``stoker worker`` processes: its ``update`` execution's steps run as any other
execution's do, and the deployment holds the new plan once the worker that ends it has applied it."""

from __future__ import annotations

from update_blueprints import NEW, OLD, folder, ran

from .test_executions import finish


def test_an_update_runs_on_the_workers_and_the_end_applies_the_new_plan(cluster, tmp_path):
    engine, trace = cluster.engine, tmp_path / "trace.txt"
    engine.blueprints.upload(folder(tmp_path, "v1", OLD), "v1")
    engine.blueprints.upload(folder(tmp_path, "v2", NEW), "v2")
    engine.blueprints.deployments.create("dep", "v1", {"trace": str(trace)})
    cluster.start_worker(concurrency=2)
    cluster.listening(1)
    assert finish(cluster, engine.executions.start("install", "dep"))["status"] == "terminated"
    ran(trace)
    found, started = engine.executions.updates.begin("dep", "v2")
    assert finish(cluster, engine.executions.get(started.id))["status"] == "terminated"
    assert engine.executions.updates.get(found["id"])["state"] == "successful"
    assert ran(trace) == ["fresh create", "old delete"]
    assert {n["id"] for n in engine.blueprints.deployments.nodes("dep")} == {"host", "web", "fresh"}
    assert engine.blueprints.deployments.outputs("dep") == {"port": 80, "fresh": "yes"}
