"""``store.bulk.execute_many`` stores what SQLAlchemy's own executemany stores, value for value."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import bindparam, insert, select, update

from stoker.store.bulk import execute_many
from stoker.store.repository import EVENTS, RESOURCES


def _rows(store, table, where):
    with store.engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(select(table).where(where).order_by(table.c.id))]


def test_events_read_back_as_sqlalchemy_writes_them(store, stack):
    moment = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    rows = [{"uuid": f"u{i}", "stack_id": stack.id, "resource_name": f"r{i}", "action": "CREATE",
             "status": "COMPLETE", "reason": "", "created_at": moment, "properties": props}
            for i, props in enumerate([None, {"a": [1, "x"]}, {}])]
    short = [{"uuid": "v", "stack_id": stack.id, "action": "CREATE", "status": "COMPLETE"}]  # column defaults
    with store._write() as conn:
        for group in (rows, short):
            conn.execute(insert(EVENTS), [{**row, "uuid": "sa-" + row["uuid"]} for row in group])
            execute_many(conn, insert(EVENTS).values({k: bindparam(k) for k in group[0]}), group, EVENTS.c.get)
    stored = _rows(store, EVENTS, EVENTS.c.stack_id == stack.id)
    ours = {r["uuid"]: r for r in stored if not r["uuid"].startswith("sa-")}
    theirs = {r["uuid"][3:]: r for r in stored if r["uuid"].startswith("sa-")}
    assert set(ours) == set(theirs) == {"u0", "u1", "u2", "v"}
    for key, row in ours.items():
        keep = set(row) - {"id", "uuid"} - ({"created_at"} if key == "v" else set())
        assert {k: row[k] for k in keep} == {k: theirs[key][k] for k in keep}, key
    assert ours["u0"]["created_at"] == moment and ours["v"]["reason"] == ""
    assert ours["v"]["created_at"].tzinfo is timezone.utc


def test_resource_updates_read_back_as_sqlalchemy_writes_them(store, stack):
    ids = store.add_resources_bulk([{"stack_id": stack.id, "name": f"r{i}", "type": "OS::Heat::None"}
                                    for i in range(4)])
    moment = datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
    stmt = (update(RESOURCES).where(RESOURCES.c.id == bindparam("v_id"))
            .values(status=bindparam("v_status"), data=bindparam("v_data", type_=RESOURCES.c.data.type),
                    updated_at=bindparam("v_updated_at", type_=RESOURCES.c.updated_at.type),
                    atomic_key=RESOURCES.c.atomic_key + 1))
    rows = [{"v_id": rid, "v_status": "FAILED", "v_data": {"k": i}, "v_updated_at": moment}
            for i, rid in enumerate(ids)]
    with store._write() as conn:
        conn.execute(stmt, rows[:2])
        execute_many(conn, stmt, rows[2:], lambda name: RESOURCES.c.get(name[2:]) if name.startswith("v_") else None)
    stored = _rows(store, RESOURCES, RESOURCES.c.stack_id == stack.id)
    assert [(r["status"], r["data"], r["updated_at"], r["atomic_key"]) for r in stored] == [
        ("FAILED", {"k": i}, moment, 1) for i in range(4)]


def test_a_group_commit_of_a_shape_seen_before_compiles_nothing(store, stack, monkeypatch):
    """Each group commit (and lock write) built and compiled its statements again: most of a small action's CPU."""
    from sqlalchemy.sql.dml import Insert, Update
    from sqlalchemy.sql.elements import ClauseElement

    compiled: list[str] = []  # statements built or compiled
    for cls, method in ((ClauseElement, "compile"), (Insert, "__init__"), (Update, "__init__")):
        original = getattr(cls, method)
        monkeypatch.setattr(cls, method, lambda self, *a, _original=original, **k:
                            compiled.append(type(self).__name__) or _original(self, *a, **k))

    def commit(i: int) -> None:
        [rid] = store.add_resources_bulk([{"stack_id": stack.id, "name": f"r{i}", "type": "OS::Heat::None"}])
        store.write_batch([(rid, {"status": "COMPLETE", "status_reason": "done"})],
                          [{"stack_id": stack.id, "resource_name": f"r{i}", "action": "CREATE",
                            "status": "COMPLETE", "reason": "done"}],
                          [(stack.id, {"status": "COMPLETE", "status_reason": f"done {i}"})])
        store.heartbeat_lock(stack.id, "nobody")

    commit(0)
    compiled.clear()
    commit(1)
    assert compiled == []
    assert [r["status"] for r in _rows(store, RESOURCES, RESOURCES.c.stack_id == stack.id)] == ["COMPLETE"] * 2
    assert store.get_stack(stack.id).status_reason == "done 1"
