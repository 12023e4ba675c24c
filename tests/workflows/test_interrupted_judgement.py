"""An execution whose process looks gone is marked interrupted, unless its owner beats again
between the look and the mark: a live execution is never failed under its owner."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from stoker.store.execution_records import EXECUTIONS
from stoker.store.locks import execution_gone, new_engine_id
from stoker.store.models import utcnow

from .conftest import deploy

#: an owner on another host: judged gone by its heartbeat's age only
OWNER = "elsewhere.example:4242:8f7c0d2e-6b1a-4c57-9e3f-2a1d5b6c7e80"


def _silent_execution(engine, tmp_path):
    """An install on another host's process, its last beat two hours old (judged gone)."""
    deploy(engine, tmp_path, "node_templates: {}")
    records = engine.executions.records
    pk = records.get_deployment(engine.project_id, "dep")["pk"]
    row = records.start_execution(engine.project_id, pk, "install", {}, OWNER, is_gone=lambda _row: False)
    with records._write() as conn:
        conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == row["pk"])
                     .values(heartbeat_at=utcnow() - timedelta(hours=2)))
    row = records.get_execution(engine.project_id, row["id"])
    assert execution_gone(row)
    return records, row


def test_a_silent_execution_is_marked_interrupted(any_engine, tmp_path):
    records, row = _silent_execution(any_engine, tmp_path)

    records.mark_interrupted(row)

    marked = records.get_execution(any_engine.project_id, row["id"])
    assert marked["status"] == "failed" and marked["error"].startswith("Execution interrupted")


def test_an_owner_beating_again_after_the_look_keeps_its_execution(any_engine, tmp_path):
    records, row = _silent_execution(any_engine, tmp_path)
    records.heartbeat(row["pk"], OWNER)  # alive after all, between the look and the mark

    records.mark_interrupted(row)

    kept = records.get_execution(any_engine.project_id, row["id"])
    assert (kept["status"], kept["owner"]) == ("started", OWNER)


def test_a_live_process_of_this_host_beating_late_keeps_its_execution(any_engine, tmp_path):
    """On a loaded machine a live owner may miss beats: on its own host the process table decides."""
    deploy(any_engine, tmp_path, "node_templates: {}")
    records = any_engine.executions.records
    pk = records.get_deployment(any_engine.project_id, "dep")["pk"]
    row = records.start_execution(any_engine.project_id, pk, "install", {}, new_engine_id(), is_gone=lambda _row: False)
    with records._write() as conn:
        conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == row["pk"])
                     .values(heartbeat_at=utcnow() - timedelta(hours=2)))

    assert not execution_gone(records.get_execution(any_engine.project_id, row["id"]))
    assert any_engine.executions.get(row["id"])["status"] == "started"
