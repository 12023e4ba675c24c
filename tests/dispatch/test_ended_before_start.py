"""An execution marked ended while its first step still waits for a worker (as the start bound fails one
whose heartbeat is older than 60 s) is not run by the worker that takes that step later: its record, its
events and its deployment's instances stay as they were."""

from __future__ import annotations

import time

from box_blueprint import write_box
from sqlalchemy import select

from stoker.dispatch import traversal
from stoker.store.models import DispatchTraversal

from .conftest import SETTLE_LIMIT

TRAVERSALS = DispatchTraversal.__table__


def traversal_ended(cluster, execution_pk):
    """Wait until the execution's traversal is marked ended (whoever ended it)."""
    limit = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < limit:
        with cluster.engine.store.engine.connect() as conn:
            status = conn.execute(select(TRAVERSALS.c.status).where(TRAVERSALS.c.execution_pk == execution_pk)).scalar()
        if status == traversal.ENDED:
            return
        time.sleep(0.2)
    raise AssertionError(f"the traversal of execution {execution_pk} still runs after {SETTLE_LIMIT}s")


def test_an_execution_failed_before_a_worker_takes_its_first_step_is_not_run(cluster, tmp_path):
    trace = tmp_path / "trace.txt"
    box = write_box(tmp_path / "box", f'echo "create $(ctx deployment id)" >> {trace}\n', "create.sh")
    engine = cluster.engine
    engine.blueprints.upload(box, "box")
    engine.blueprints.deployments.create("dep", "box", {})
    executions = engine.executions
    started = executions.start("install", "dep")  # no worker yet: its first step waits in the queue
    row = executions.records.get_execution(executions.project_id, started["id"])
    assert row["status"] == "started" and row["owner"].startswith("dispatch:")
    executions.records.mark_interrupted(row)  # what the start bound does (``Executions._fresh``)
    failed, events = executions.get(started["id"]), executions.events(started["id"], include_logs=True)
    assert failed["status"] == "failed"

    cluster.start_worker()
    traversal_ended(cluster, row["pk"])

    assert executions.get(started["id"]) == failed
    assert executions.events(started["id"], include_logs=True) == events
    assert not trace.exists()
    assert {i["state"] for i in engine.blueprints.deployments.node_instances("dep")} == {"uninitialized"}
