"""Uninstall's ``recursive`` on the workers: the step that uninstalls the service deployments runs on one
worker, their executions on the others, and the environment's own instances go after them.  A level waiting
for its services holds no worker slot (its step parks between two looks), so a chain of three levels runs
through on two slots."""

from __future__ import annotations

from collections import Counter

from box_blueprint import write_box

from stoker.blueprint.deployment_groups import DeploymentGroups

from .test_executions import finish


def test_a_recursive_uninstall_on_the_workers_uninstalls_the_services_first(cluster, tmp_path):
    cluster.start_worker(concurrency=1), cluster.start_worker(concurrency=1)  # fewer slots than levels
    trace = tmp_path / "trace.txt"
    box = write_box(tmp_path / "box", f'echo "delete $(ctx deployment id)" >> {trace}\n', "delete.sh",
                    operation="delete")
    engine = cluster.engine
    engine.blueprints.upload(box, "box")
    engine.blueprints.deployments.create("env", "box", {})
    engine.blueprints.deployments.create("svc", "box", {}, labels=[("csys-obj-parent", "env")])
    engine.blueprints.deployments.create("leaf", "box", {}, labels=[("csys-obj-parent", "svc")])
    for name in ("env", "svc", "leaf"):
        assert finish(cluster, engine.executions.start("install", name))["status"] == "terminated"
    done = finish(cluster, engine.executions.start("uninstall", "env", {"recursive": True}))
    assert done["status"] == "terminated", done["error"]
    uninstalls = [e for e in engine.executions.list() if e["workflow_id"] == "uninstall"]
    assert {e["status"] for e in uninstalls} == {"terminated"}
    assert Counter(e["deployment_id"] for e in uninstalls) == {"env": 1, "svc": 1, "leaf": 1}  # each started once
    assert DeploymentGroups(engine.blueprints.deployments).list() == []  # each level deleted its group
    assert trace.read_text().splitlines() == ["delete leaf", "delete svc", "delete env"]
    assert {i["state"] for name in ("env", "svc", "leaf")
            for i in engine.blueprints.deployments.node_instances(name)} == {"deleted"}
