"""The audit log (``cfy auditlog list|truncate``): one row per change made through Cloudify's REST API, who made
it and when, kept until truncated."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, Integer, String, Table, delete, func, insert, select

from stoker.store.models import UTCDateTime, metadata, utcnow
from stoker.store.records import Records

AUDIT = Table(
    "audit_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    #: the family changed (``deployments``, ``secrets``...) and what names the row changed in it
    Column("ref_table", String(64), nullable=False),
    Column("ref_identifier", JSON, nullable=False),
    #: create, update or delete
    Column("operation", String(16), nullable=False),
    Column("creator_name", String(255)),
    Column("execution_id", String(36)),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow, index=True),
)
#: the fields a list may be sorted on
SORTED = ("id", "ref_table", "operation", "creator_name", "execution_id", "created_at")


def _where(creator: str | None, execution: str | None, since: datetime | None, before: datetime | None) -> list:
    where = []
    if creator is not None:
        where.append(AUDIT.c.creator_name == creator)
    if execution is not None:
        where.append(AUDIT.c.execution_id == execution)
    if since is not None:
        where.append(AUDIT.c.created_at >= since)
    if before is not None:
        where.append(AUDIT.c.created_at <= before)
    return where


class AuditRecords(Records):
    def add(self, row: dict) -> None:
        with self._write() as conn:
            conn.execute(insert(AUDIT).values(**row, created_at=utcnow()))

    def page(self, filters: dict, order: list[str], descending: bool, offset: int,
             size: int) -> tuple[list[dict], int]:
        """A page of the entries matching ``filters`` (``_where``'s), oldest first unless ``order`` says
        otherwise (``size`` 0: all), and how many match in all."""
        where = _where(**filters)
        columns = [AUDIT.c[name] for name in order] or [AUDIT.c.created_at]
        query = select(AUDIT).where(*where).order_by(*[c.desc() if descending else c for c in columns], AUDIT.c.id)
        with self._read() as conn:
            total = conn.execute(select(func.count()).select_from(AUDIT).where(*where)).scalar()
            rows = self._rows(conn.execute(query.offset(offset).limit(size or None)))
        return rows, total

    def after(self, last_id: int, filters: dict, limit: int) -> list[dict]:
        """The next ``limit`` entries matching ``filters`` whose ids are above ``last_id``, in the order they came."""
        query = select(AUDIT).where(AUDIT.c.id > last_id, *_where(**filters)).order_by(AUDIT.c.id).limit(limit)
        with self._read() as conn:
            return self._rows(conn.execute(query))

    def last_id(self) -> int:
        """The newest entry's id (0: none): a follower that asked for no backlog starts after it."""
        with self._read() as conn:
            return conn.execute(select(func.max(AUDIT.c.id))).scalar() or 0

    def truncate(self, filters: dict) -> int:
        with self._write() as conn:
            return conn.execute(delete(AUDIT).where(*_where(**filters))).rowcount
