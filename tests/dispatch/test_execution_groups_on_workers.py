"""An execution group on ``stoker worker`` processes: the end of each of its executions, on the worker that
ends it, starts the next (``execution_steps.end``), never more than the group's concurrency at once."""

from __future__ import annotations

import time

from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.workflows.execution_groups import ExecutionGroups

from box_blueprint import write_box
from .conftest import SETTLE_LIMIT

def test_the_workers_start_a_groups_executions_one_at_a_time(cluster, tmp_path):
    cluster.start_worker(concurrency=2)
    cluster.listening(1)
    blueprints = cluster.engine.blueprints
    blueprints.upload(write_box(tmp_path / "bp", "sleep 0.3\n"), "bp")
    for name in ("a", "b", "c"):
        blueprints.deployments.create(name, "bp", {})
    DeploymentGroups(blueprints.deployments).put("abc", {"deployment_ids": ["a", "b", "c"]})
    groups = ExecutionGroups(cluster.engine.executions)

    group = groups.start("abc", "install", concurrency=1)
    limit = time.monotonic() + SETTLE_LIMIT
    while (group := groups.get(group["id"]))["status"] not in ("terminated", "failed"):
        assert time.monotonic() < limit, f"{group}; worker logs in {tmp_path}"
        time.sleep(0.2)
    runs = sorted((cluster.engine.executions.get(i) for i in group["execution_ids"]), key=lambda e: e["started_at"])
    assert group["status"] == "terminated" and [e["status"] for e in runs] == ["terminated"] * 3
    for before, after in zip(runs, runs[1:]):
        assert before["ended_at"] <= after["started_at"], (before, after)
