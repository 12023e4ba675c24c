"""Sites (``cfy sites``): named places, with a location, that deployments are set at.

A deployment's site is a row of ``deployment_site`` (the deployment's table is left as it is): it goes with
the deployment, and a deleted site leaves its deployments with none, as Cloudify's.
"""

from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import (Column, Float, ForeignKey, Index, Integer, String, Table, delete, insert, or_, select,
                        update)
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound
from stoker.store.models import Deployment, UTCDateTime, metadata, utcnow
from stoker.store.records import Records

SITES = Table(
    "site", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("project_id", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("latitude", Float),
    Column("longitude", Float),
    #: private, tenant or global (seen by every tenant)
    Column("visibility", String(16), nullable=False, default="tenant"),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Index("ix_site_project_id_name", "project_id", "name", unique=True),
)
DEPLOYMENT_SITES = Table(
    "deployment_site", metadata,
    Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), primary_key=True),
    Column("site_pk", ForeignKey("site.pk", ondelete="CASCADE"), nullable=False, index=True),
)


DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]


class SiteRecords(Records):
    """Every project's sites, over the stack store's connections."""

    def add(self, row: dict) -> None:
        try:
            with self._write() as conn:
                conn.execute(insert(SITES).values(**row))
        except IntegrityError:
            raise Conflict(f"<Site name=`{row['name']}`> already exists on {row['project_id']}") from None

    def find(self, project_id: str, name: str) -> dict:
        """The project's site of that name, else a global one of another project's."""
        with self._read() as conn:
            found = self._rows(conn.execute(select(SITES).where(
                SITES.c.name == name, or_(SITES.c.project_id == project_id, SITES.c.visibility == "global"))
                .order_by((SITES.c.project_id == project_id).desc())))
        if not found:
            raise NotFound(f"Requested `Site` with ID `{name}` was not found")
        return found[0]

    def list(self, project_ids: Iterable[str]) -> list[dict]:
        with self._read() as conn:
            return self._rows(conn.execute(select(SITES).where(
                or_(SITES.c.project_id.in_(list(project_ids)), SITES.c.visibility == "global")).order_by(SITES.c.pk)))

    def change(self, pk: int, **fields: Any) -> None:
        try:
            with self._write() as conn:
                conn.execute(update(SITES).where(SITES.c.pk == pk).values(**fields))
        except IntegrityError:
            raise Conflict(f"Invalid new name `{fields.get('name')}`, it already exists") from None

    def delete(self, pk: int) -> None:
        with self._write() as conn:
            conn.execute(delete(SITES).where(SITES.c.pk == pk))

    def set_deployment_site(self, deployment_pk: int, site_pk: int | None) -> None:
        with self._write() as conn:
            conn.execute(delete(DEPLOYMENT_SITES).where(DEPLOYMENT_SITES.c.deployment_pk == deployment_pk))
            if site_pk is not None:
                conn.execute(insert(DEPLOYMENT_SITES).values(deployment_pk=deployment_pk, site_pk=site_pk))

    def site_of(self, project_id: str, deployment_id: str) -> str | None:
        """The name of the site the project's deployment is set at (one query: a list asks it per deployment)."""
        with self._read() as conn:
            return conn.execute(select(SITES.c.name)
                                .join(DEPLOYMENT_SITES, DEPLOYMENT_SITES.c.site_pk == SITES.c.pk)
                                .join(DEPLOYMENTS, DEPLOYMENTS.c.pk == DEPLOYMENT_SITES.c.deployment_pk)
                                .where(DEPLOYMENTS.c.project_id == project_id, DEPLOYMENTS.c.id == deployment_id)).scalar()
