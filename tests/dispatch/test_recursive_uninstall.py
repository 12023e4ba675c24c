"""Uninstall's ``recursive`` on the workers: the step that uninstalls the service deployments runs on one
worker, their executions on the others, and the environment's own instances go after them.  A level waiting
for its services holds no worker slot (its step parks between two looks), so a chain of three levels runs
through on two slots."""

from __future__ import annotations

from collections import Counter

import pytest
from box_blueprint import write_box

from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.store import locks

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


@pytest.mark.slow  # a child's delete outlasts the start bound (shortened to 4 s here)
def test_a_parent_waiting_on_one_slot_for_a_child_longer_than_the_start_bound_is_not_failed(cluster, tmp_path,
                                                                                               monkeypatch):
    # the one slot runs the child's delete while the parent's next look waits behind it on that worker
    monkeypatch.setattr(locks, "EXECUTION_TIMEOUT", 4.0)
    cluster.env["STOKER_EXECUTION_TIMEOUT"] = "4"
    cluster.start_worker(concurrency=1)
    box = write_box(tmp_path / "box", 'if [ "$(ctx deployment id)" = svc ]; then sleep 10; fi\n', "delete.sh",
                    operation="delete")
    engine = cluster.engine
    engine.blueprints.upload(box, "box")
    engine.blueprints.deployments.create("env", "box", {})
    engine.blueprints.deployments.create("svc", "box", {}, labels=[("csys-obj-parent", "env")])
    for name in ("env", "svc"):
        assert finish(cluster, engine.executions.start("install", name))["status"] == "terminated"
    done = finish(cluster, engine.executions.start("uninstall", "env", {"recursive": True}))
    assert done["status"] == "terminated", done["error"]
    uninstalls = [finish(cluster, e) for e in engine.executions.list() if e["workflow_id"] == "uninstall"]
    assert {e["deployment_id"]: e["status"] for e in uninstalls} == {"env": "terminated", "svc": "terminated"}
