"""Saved filters (``cfy deployments filters``, ``cfy blueprints filters``): named lists of filter rules a tenant
lists deployments or blueprints, searches and fills deployment groups by (``_filter_id``, ``filter_id``).  A
filter's ``kind`` is what it filters (deployments or blueprints); each kind has ids of its own, as Cloudify's
two filter tables do."""

from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import JSON, Column, Index, Integer, String, Table, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound
from stoker.store.models import UTCDateTime, metadata, utcnow
from stoker.store.records import Records

FILTERS = Table(
    "deployments_filter", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("project_id", String(255), nullable=False),
    Column("id", String(255), nullable=False),
    #: deployments or blueprints
    Column("kind", String(16), nullable=False, server_default="deployments"),
    Column("filter_rules", JSON, nullable=False),
    #: private, tenant or global (every tenant's)
    Column("visibility", String(16), nullable=False, default="tenant"),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Column("updated_at", UTCDateTime, nullable=False, default=utcnow),
    Index("ix_deployments_filter_project_id_kind_id", "project_id", "kind", "id", unique=True),
)


def model(kind: str) -> str:
    """The manager's name for a filter of ``kind`` (its errors name it)."""
    return f"{kind.capitalize()}Filter"


def missing(kind: str, filter_id: str) -> NotFound:
    return NotFound(f"Requested `{model(kind)}` with ID `{filter_id}` was not found")


class FilterRecords(Records):
    def add(self, row: dict) -> None:
        try:
            with self._write() as conn:
                conn.execute(insert(FILTERS).values(**row))
        except IntegrityError:
            raise Conflict(f"<{model(row['kind'])} id=`{row['id']}`> already exists on {row['project_id']}") from None

    def get(self, project_id: str, kind: str, filter_id: str) -> dict:
        """The project's filter of that kind and id, else a global one of another project's."""
        with self._read() as conn:
            found = self._rows(conn.execute(select(FILTERS).where(
                FILTERS.c.kind == kind, FILTERS.c.id == filter_id,
                or_(FILTERS.c.project_id == project_id, FILTERS.c.visibility == "global"))
                .order_by((FILTERS.c.project_id == project_id).desc())))
        if not found:
            raise missing(kind, filter_id)
        return found[0]

    def list(self, project_ids: Iterable[str], kind: str) -> list[dict]:
        with self._read() as conn:
            return self._rows(conn.execute(select(FILTERS).where(
                FILTERS.c.kind == kind,
                or_(FILTERS.c.project_id.in_(list(project_ids)), FILTERS.c.visibility == "global"))
                .order_by(FILTERS.c.pk)))

    def change(self, pk: int, **fields: Any) -> None:
        with self._write() as conn:
            conn.execute(update(FILTERS).where(FILTERS.c.pk == pk).values(updated_at=utcnow(), **fields))

    def delete(self, pk: int) -> None:
        with self._write() as conn:
            conn.execute(delete(FILTERS).where(FILTERS.c.pk == pk))
