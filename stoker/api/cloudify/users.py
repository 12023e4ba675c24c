"""Cloudify's users: a name, a password, and a role in each tenant (Stoker project) it belongs to.

Roles are Cloudify's, narrowed to three: a ``viewer`` reads, a ``user`` also runs
workflows and manages blueprints and deployments, a ``manager`` also manages
secrets and plugins.  The tenant ``default_tenant`` is the project ``default``,
the one the CLI uses.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine as SAEngine

from stoker.api.cloudify.passwords import check_password, hash_password
from stoker.blueprint.state import DEFAULT_TENANT
from stoker.store.api_tables import USERS, utcnow

ROLES = ("viewer", "user", "manager")


def project_of(tenant: str) -> str:
    return "default" if tenant == DEFAULT_TENANT else tenant


def may(role: str, needed: str) -> bool:
    """Whether ``role`` includes ``needed`` (viewer < user < manager)."""
    return ROLES.index(role) >= ROLES.index(needed)


class UserStore:
    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    def create(self, name: str, password: str, tenant: str, role: str = "user") -> None:
        """Add the user to ``tenant`` with ``role``; the password is the user's in every tenant."""
        if not name or len(name) > 255 or not tenant or len(tenant) > 255:
            raise ValueError("a user name and a tenant are 1 to 255 characters")
        if role not in ROLES:
            raise ValueError(f"a role is one of {', '.join(ROLES)}, not {role!r}")
        hashed = hash_password(password)
        with self._writer.begin() as conn:
            conn.execute(delete(USERS).where(USERS.c.name == name, USERS.c.tenant == tenant))
            conn.execute(insert(USERS).values(name=name, tenant=tenant, role=role, password_hash=hashed,
                                              created_at=utcnow()))
            conn.execute(update(USERS).where(USERS.c.name == name).values(password_hash=hashed))

    def rows(self, name: str | None = None) -> list[dict[str, Any]]:
        query = select(USERS.c.name, USERS.c.tenant, USERS.c.role, USERS.c.created_at).order_by(
            USERS.c.name, USERS.c.tenant)
        if name is not None:
            query = query.where(USERS.c.name == name)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def authenticate(self, name: str, password: str) -> bool:
        with self.engine.connect() as conn:
            stored = conn.execute(select(USERS.c.password_hash).where(USERS.c.name == name).limit(1)).scalar()
        return stored is not None and check_password(password, stored)

    def role(self, name: str, tenant: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(USERS.c.role).where(USERS.c.name == name, USERS.c.tenant == tenant)).scalar()

    def has_tenant(self, tenant: str) -> bool:
        """Whether some user belongs to ``tenant`` (Stoker knows a tenant by its users)."""
        with self.engine.connect() as conn:
            return conn.execute(select(USERS.c.name).where(USERS.c.tenant == tenant).limit(1)).first() is not None

    def delete(self, name: str) -> int:
        with self._writer.begin() as conn:
            return conn.execute(delete(USERS).where(USERS.c.name == name)).rowcount
