"""Execution groups on the engine, SQLite and PostgreSQL: at most ``concurrency`` of a group's executions run
at once, each end starting the next; a deployment's own queue leaves the group's executions to the group."""

from __future__ import annotations

import threading
import time

import pytest

from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.errors import Conflict
from stoker.workflows.execution_groups import ExecutionGroups

from box_blueprint import write_box

def _ended(groups: ExecutionGroups, group_id: str, bound: float = 60) -> dict:
    deadline = time.monotonic() + bound
    while (found := groups.get(group_id))["status"] not in ("terminated", "failed"):
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    for thread in threading.enumerate():  # the last one's thread, past its end, looks for a next: let it end
        if thread.name == "stoker-execution-group":
            thread.join(deadline - time.monotonic())
    return found


def test_at_most_concurrency_executions_run_at_once(any_engine, tmp_path):
    service = any_engine.blueprints
    service.upload(write_box(tmp_path / "bp", "sleep 0.4\n"), "bp")
    names = ["a", "b", "c", "d", "e"]
    for name in names:
        service.deployments.create(name, "bp")
    DeploymentGroups(service.deployments).put("five", {"deployment_ids": names})
    groups = ExecutionGroups(any_engine.executions)

    group = _ended(groups, groups.start("five", "install", concurrency=2)["id"])
    runs = [any_engine.executions.get(i) for i in group["execution_ids"]]
    assert group["status"] == "terminated" and [r["status"] for r in runs] == ["terminated"] * 5
    at_once = max(sum(1 for other in runs if other["started_at"] <= run["started_at"] < other["ended_at"])
                  for run in runs)
    assert at_once == 2  # the room is used, never exceeded


def test_a_deployments_queue_leaves_a_group_execution_to_its_group(any_engine, tmp_path):
    """A deployment busy when its group's turn comes is skipped for now; its own execution's end (not its
    queue) lets the group start it, within the group's concurrency."""
    go = tmp_path / "go"
    service = any_engine.blueprints
    service.upload(write_box(tmp_path / "bp", f"while [ ! -f {go} ]; do sleep 0.05; done\n"), "bp")
    for name in ("x", "y"):
        service.deployments.create(name, "bp")
    DeploymentGroups(service.deployments).put("two", {"deployment_ids": ["x", "y"]})
    busy = any_engine.executions.begin("start", "install", "x")  # x runs an install of its own
    groups = ExecutionGroups(any_engine.executions)
    started = groups.start("two", "install", concurrency=1)
    statuses = {any_engine.executions.get(i)["deployment_id"]: any_engine.executions.get(i)["status"]
                for i in started["execution_ids"]}
    assert statuses == {"x": "queued", "y": "started"}  # x's turn waits for x's own execution
    go.write_text("go")
    assert busy.wait()["status"] == "terminated"
    group = _ended(groups, started["id"])
    assert [any_engine.executions.get(i)["status"] for i in group["execution_ids"]] == ["terminated"] * 2


def test_a_groups_delete_with_its_deployments_deletes_none_while_one_runs(engine, tmp_path):
    go = tmp_path / "go"
    service = engine.blueprints
    service.upload(write_box(tmp_path / "bp", f"while [ ! -f {go} ]; do sleep 0.05; done\n"), "bp")
    for name in ("idle", "running"):
        service.deployments.create(name, "bp")
    groups = DeploymentGroups(service.deployments)
    groups.put("pair", {"deployment_ids": ["idle", "running"]})
    busy = engine.executions.begin("start", "install", "running")
    with pytest.raises(Conflict, match="Deployment running is running execution"):
        groups.delete("pair", delete_deployments=True)
    assert groups.get("pair")["deployment_ids"] == ["idle", "running"]  # "idle" too is kept
    go.write_text("go")
    assert busy.wait()["status"] == "terminated"
    groups.delete("pair", delete_deployments=True)
    assert service.deployments.list() == []


def test_a_forced_group_runs_beside_a_deployments_own_execution(engine, tmp_path):
    go = tmp_path / "go"
    service = engine.blueprints
    service.upload(write_box(tmp_path / "bp", f"while [ ! -f {go} ]; do sleep 0.05; done\n"), "bp")
    service.deployments.create("x", "bp")
    DeploymentGroups(service.deployments).put("one", {"deployment_ids": ["x"]})
    busy = engine.executions.begin("start", "install", "x")
    groups = ExecutionGroups(engine.executions)
    started = groups.start("one", "install", force=True)
    assert engine.executions.get(started["execution_ids"][0])["status"] == "started"  # not waiting for x's own
    go.write_text("go")
    assert busy.wait()["status"] == "terminated"
    assert _ended(groups, started["id"])["status"] == "terminated"
