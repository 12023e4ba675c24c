"""Secrets providers (``cfy secrets providers``): where a secret's value is read from (a Vault, another
manager, or this one).  Their connection parameters are kept encrypted; a secret names its provider."""

from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import Column, Index, Integer, String, Table, Text, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound
from stoker.store.models import Secret, UTCDateTime, metadata, utcnow
from stoker.store.records import Records

PROVIDERS = Table(
    "secrets_provider", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("project_id", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("type", String(32), nullable=False),
    #: encrypted JSON (``stoker.secretbox``)
    Column("connection_parameters", Text, nullable=False),
    #: private, tenant or global (used by every tenant's secrets)
    Column("visibility", String(16), nullable=False, default="tenant"),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Column("updated_at", UTCDateTime, nullable=False, default=utcnow),
    Index("ix_secrets_provider_project_id_name", "project_id", "name", unique=True),
)
SECRETS: Table = Secret.__table__  # type: ignore[assignment]


def not_found(name: str) -> NotFound:
    return NotFound(f"Requested `SecretsProvider` with ID `{name}` was not found")


class ProviderRecords(Records):
    """Every project's secrets providers, over the stack store's connections."""

    def add(self, row: dict) -> None:
        try:
            with self._write() as conn:
                conn.execute(insert(PROVIDERS).values(**row))
        except IntegrityError:
            raise Conflict(f"<SecretsProvider name=`{row['name']}`> already exists on {row['project_id']}") from None

    def find(self, project_id: str, name: str) -> dict:
        """The project's provider of that name, else a global one of another project's."""
        with self._read() as conn:
            found = self._rows(conn.execute(select(PROVIDERS).where(
                PROVIDERS.c.name == name, or_(PROVIDERS.c.project_id == project_id,
                                              PROVIDERS.c.visibility == "global"))
                .order_by((PROVIDERS.c.project_id == project_id).desc())))
        if not found:
            raise not_found(name)
        return found[0]

    def list(self, project_ids: Iterable[str]) -> list[dict]:
        with self._read() as conn:
            return self._rows(conn.execute(select(PROVIDERS).where(
                or_(PROVIDERS.c.project_id.in_(list(project_ids)), PROVIDERS.c.visibility == "global"))
                .order_by(PROVIDERS.c.pk)))

    def change(self, pk: int, **fields: Any) -> None:
        with self._write() as conn:
            conn.execute(update(PROVIDERS).where(PROVIDERS.c.pk == pk).values(**fields, updated_at=utcnow()))

    def delete(self, row: dict) -> None:
        """Deleted unless a secret reads from it (409 naming them: the secrets would lose their values)."""
        with self._write() as conn:
            reading = [SECRETS.c.provider_name == row["name"]]
            if row["visibility"] != "global":  # a global one is read by every tenant's secrets
                reading.append(SECRETS.c.project_id == row["project_id"])
            using = [key for (key,) in conn.execute(select(SECRETS.c.key).where(*reading)
                                                    .order_by(SECRETS.c.key).limit(20))]
            if using:
                raise Conflict(f"Secrets provider {row['name']} is used by secrets {using}: delete them or move "
                               f"them to another provider first")
            conn.execute(delete(PROVIDERS).where(PROVIDERS.c.pk == row["pk"]))
