"""Uninstall's ``recursive`` on the workers: the step that uninstalls the service deployments runs on one
worker, their executions on the others, and the environment's own instances go after them."""

from __future__ import annotations

from box_blueprint import write_box

from .test_executions import finish


def test_a_recursive_uninstall_on_the_workers_uninstalls_the_services_first(cluster, tmp_path):
    # a waiting level holds a worker's slot: three levels need three slots (README: with fewer, the deepest
    # waits for the start bound)
    cluster.start_worker(concurrency=2), cluster.start_worker(concurrency=2)
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
    assert {e["status"] for e in engine.executions.list() if e["workflow_id"] == "uninstall"} == {"terminated"}
    assert trace.read_text().splitlines() == ["delete leaf", "delete svc", "delete env"]
    assert {i["state"] for name in ("env", "svc", "leaf")
            for i in engine.blueprints.deployments.node_instances(name)} == {"deleted"}
