"""Cloudify's tenants and users: an account (a name, a password, active or not), a role in each tenant
(Stoker project) it belongs to.

Roles are Cloudify's, narrowed to three: a ``viewer`` reads, a ``user`` also runs
workflows and manages blueprints and deployments, a ``manager`` also manages
secrets and plugins.  The tenant ``default_tenant`` is the project ``default``,
the one the CLI uses; its managers are the server's operators (Cloudify's
``sys_admin``, stoker/api/cloudify/identity.py).
"""

from __future__ import annotations

import re
import string
from contextlib import contextmanager
from typing import Any, Iterator

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine as SAEngine

from stoker.api.cloudify.directory import ROLES, Directory, operators, read_directory, tenant_roles
from stoker.api.cloudify.passwords import hash_password
from stoker.blueprint.state import DEFAULT_TENANT
from stoker.store.api_tables import ACCOUNTS, GROUP_TENANTS, GROUP_USERS, TENANTS, USERS, utcnow
from stoker.store.blueprint_records import BLUEPRINTS, DEPLOYMENTS, SECRETS
from stoker.store.plugin_packages import PLUGIN_PACKAGES

#: Cloudify's system roles: ``sys_admin`` is the operator (the manager of ``default_tenant``), ``default`` not
SYSTEM_ROLES = ("sys_admin", "default")
#: what Cloudify allows in a name (what URL quoting leaves as it is)
NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: what a tenant holding any of these (by project) cannot be deleted with, in Cloudify's words
HOLDINGS = {"blueprints": BLUEPRINTS, "deployments": DEPLOYMENTS, "secrets": SECRETS, "plugins": PLUGIN_PACKAGES}


class UserError(ValueError):
    """A refused change, with the HTTP status and Cloudify error code it answers with."""

    def __init__(self, status: int, message: str, code: str):
        super().__init__(message)
        self.status, self.code = status, code


def not_found(kind: str, name: str) -> UserError:
    return UserError(404, f"Requested `{kind}` with ID `{name}` was not found", "not_found_error")


def project_of(tenant: str) -> str:
    return "default" if tenant == DEFAULT_TENANT else tenant


def may(role: str, needed: str) -> bool:
    """Whether ``role`` includes ``needed`` (viewer < user < manager)."""
    return ROLES.index(role) >= ROLES.index(needed)


def named(argument: str, name: str) -> None:
    """Cloudify's rule for a tenant's, user's or group's name (a tenant's also names folders, ``@TENANT/``)."""
    prefix = f"The `{argument}` argument"
    if not isinstance(name, str) or not name:
        raise UserError(400, f"{prefix} is empty", "bad_parameters_error")
    if len(name) > 255:
        raise UserError(400, f"{prefix} is too long. Maximum allowed length is 255 characters", "bad_parameters_error")
    if not NAME.fullmatch(name):
        raise UserError(400, f'{prefix} contains illegal characters. Only letters, digits and the characters "-", '
                             f'"." and "_" are allowed', "bad_parameters_error")
    if name[0] not in string.ascii_letters:
        raise UserError(400, f"{prefix} must begin with a letter", "bad_parameters_error")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise UserError(400, f"a role is one of {', '.join(ROLES)}, not {role!r}", "bad_parameters_error")


def check_system_role(role: str) -> None:
    if role not in SYSTEM_ROLES:
        raise UserError(400, f"Invalid role: `{role}`. Valid system roles are: {', '.join(SYSTEM_ROLES)}",
                        "bad_parameters_error")


def require_account(conn: Connection, name: str) -> None:
    if conn.execute(select(ACCOUNTS.c.name).where(ACCOUNTS.c.name == name)).first() is None:
        raise not_found("User", name)


def require_tenant(conn: Connection, tenant: str) -> None:
    if conn.execute(select(TENANTS.c.name).where(TENANTS.c.name == tenant)).first() is None:
        raise not_found("Tenant", tenant)


def last_operator(subject: str) -> UserError:
    return UserError(400, f"{subject} the last operator (sys_admin, the manager of {DEFAULT_TENANT}): the server "
                          f"would have none", "bad_parameters_error")


@contextmanager
def keeping_an_operator(conn: Connection, subject: str) -> Iterator[None]:
    """Refuses (after it, in its transaction) a change that leaves no active operator where there was one."""
    before = operators(conn)
    yield
    if before and not operators(conn):
        raise last_operator(subject)


class UserStore:
    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    # -- accounts ---------------------------------------------------------------------------------------
    def create(self, name: str, password: str, tenant: str, role: str = "user") -> None:
        """``stoker user create``: the account (its password replaced if it exists), in ``tenant`` with ``role``."""
        named("tenant_name", tenant)
        check_role(role)
        with self._writer.begin() as conn:
            self._put_account(conn, name, password, replace=True)
            self._put_tenant(conn, tenant)
            conn.execute(delete(USERS).where(USERS.c.name == name, USERS.c.tenant == tenant))
            conn.execute(insert(USERS).values(name=name, tenant=tenant, role=role, created_at=utcnow()))

    def create_account(self, name: str, password: str) -> None:
        """``cfy users create``: a user in no tenant (409 when the name is taken)."""
        with self._writer.begin() as conn:
            self._put_account(conn, name, password, replace=False)

    def _put_account(self, conn: Connection, name: str, password: str, replace: bool) -> None:
        named("username", name)
        try:
            hashed = hash_password(password)
        except ValueError as e:
            raise UserError(400, str(e), "bad_parameters_error") from None
        if conn.execute(select(ACCOUNTS.c.name).where(ACCOUNTS.c.name == name)).first() is None:
            conn.execute(insert(ACCOUNTS).values(name=name, password_hash=hashed, active=True, created_at=utcnow()))
        elif replace:
            conn.execute(update(ACCOUNTS).where(ACCOUNTS.c.name == name).values(password_hash=hashed))
        else:
            raise UserError(409, f"<User username=`{name}`> already exists", "conflict_error")

    def accounts(self, name: str | None = None) -> list[dict[str, Any]]:
        """Accounts (``name``'s only, if given) with ``tenants``: tenant → role."""
        query = select(ACCOUNTS.c.name, ACCOUNTS.c.active, ACCOUNTS.c.created_at).order_by(ACCOUNTS.c.name)
        if name is not None:
            query = query.where(ACCOUNTS.c.name == name)
        with self.engine.connect() as conn:
            found = [dict(r._mapping, tenants={}) for r in conn.execute(query)]
        by_name = {a["name"]: a for a in found}
        for row in self.rows(name):
            if row["name"] in by_name:
                by_name[row["name"]]["tenants"][row["tenant"]] = row["role"]
        return found

    def rows(self, name: str | None = None) -> list[dict[str, Any]]:
        """Memberships: name, tenant, role (``name``'s only, if given)."""
        query = select(USERS.c.name, USERS.c.tenant, USERS.c.role, USERS.c.created_at).order_by(
            USERS.c.name, USERS.c.tenant)
        if name is not None:
            query = query.where(USERS.c.name == name)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def exists(self, name: str) -> bool:
        """Whether ``name`` is a user (in any tenant, through a group or in none)."""
        with self.engine.connect() as conn:
            return conn.execute(select(ACCOUNTS.c.name).where(ACCOUNTS.c.name == name)).first() is not None

    def password_hash(self, name: str) -> str | None:
        """The stored hash of an active user's password (none for an unknown or deactivated one)."""
        with self.engine.connect() as conn:
            return conn.execute(select(ACCOUNTS.c.password_hash).where(
                ACCOUNTS.c.name == name, ACCOUNTS.c.active.is_(True))).scalar()

    def active(self, name: str) -> bool:
        return self.password_hash(name) is not None

    def role(self, name: str, tenant: str) -> str | None:
        """``name``'s role in ``tenant``: the highest of its own and its groups' there."""
        with self.engine.connect() as conn:
            return tenant_roles(conn, name, tenant).get(tenant)

    def own_role(self, name: str, tenant: str) -> str | None:
        """``name``'s own role in ``tenant`` (none through a group)."""
        with self.engine.connect() as conn:
            return self._membership(conn, name, tenant)

    def tenant_roles(self, name: str) -> dict[str, str]:
        """Every tenant ``name`` belongs to, directly or through a group, with its role there."""
        with self.engine.connect() as conn:
            return tenant_roles(conn, name)

    def directory(self) -> Directory:
        with self.engine.connect() as conn:
            return read_directory(conn)

    def set_password(self, name: str, password: str) -> None:
        try:
            hashed = hash_password(password)
        except ValueError as e:
            raise UserError(400, str(e), "bad_parameters_error") from None
        with self._writer.begin() as conn:
            if not conn.execute(update(ACCOUNTS).where(ACCOUNTS.c.name == name).values(password_hash=hashed)).rowcount:
                raise not_found("User", name)

    def set_active(self, name: str, active: bool) -> None:
        with self._writer.begin() as conn:
            require_account(conn, name)
            with keeping_an_operator(conn, f"User `{name}` is"):
                conn.execute(update(ACCOUNTS).where(ACCOUNTS.c.name == name).values(active=active))

    def delete(self, name: str) -> int:
        """Removes the account, its memberships and its groups' (refused for the last active operator)."""
        with self._writer.begin() as conn, keeping_an_operator(conn, f"User `{name}` is"):
            conn.execute(delete(USERS).where(USERS.c.name == name))
            conn.execute(delete(GROUP_USERS).where(GROUP_USERS.c.user_name == name))
            return conn.execute(delete(ACCOUNTS).where(ACCOUNTS.c.name == name)).rowcount

    # -- memberships ------------------------------------------------------------------------------------
    def add_member(self, name: str, tenant: str, role: str) -> None:
        check_role(role)
        with self._writer.begin() as conn:
            require_account(conn, name)
            require_tenant(conn, tenant)
            if self._membership(conn, name, tenant) is not None:
                raise UserError(409, f"User `{name}` is already associated with tenant `{tenant}`",
                                "conflict_error")
            conn.execute(insert(USERS).values(name=name, tenant=tenant, role=role, created_at=utcnow()))

    def update_member(self, name: str, tenant: str, role: str) -> None:
        check_role(role)
        with self._writer.begin() as conn:
            self._member(conn, name, tenant)
            with keeping_an_operator(conn, f"User `{name}` is"):
                conn.execute(update(USERS).where(USERS.c.name == name, USERS.c.tenant == tenant).values(role=role))

    def remove_member(self, name: str, tenant: str) -> None:
        with self._writer.begin() as conn:
            self._member(conn, name, tenant)
            with keeping_an_operator(conn, f"User `{name}` is"):
                conn.execute(delete(USERS).where(USERS.c.name == name, USERS.c.tenant == tenant))

    # -- tenants ----------------------------------------------------------------------------------------
    def tenants(self) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(select(TENANTS.c.name).order_by(TENANTS.c.name)).scalars())

    def has_tenant(self, tenant: str) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(TENANTS.c.name).where(TENANTS.c.name == tenant)).first() is not None

    def create_tenant(self, tenant: str) -> None:
        named("tenant_name", tenant)
        with self._writer.begin() as conn:
            if not self._put_tenant(conn, tenant):
                raise UserError(409, f"<Tenant name=`{tenant}`> already exists", "conflict_error")

    def delete_tenant(self, tenant: str) -> None:
        """Refused for ``default_tenant`` and for a tenant still holding blueprints, deployments, secrets or
        plugins (Cloudify's premium rule is not public: deleting them would lose a tenant's work silently)."""
        if tenant == DEFAULT_TENANT:
            raise UserError(400, f"Cannot delete the default tenant `{DEFAULT_TENANT}`", "bad_parameters_error")
        with self._writer.begin() as conn:
            require_tenant(conn, tenant)
            held = [what for what, table in HOLDINGS.items() if conn.execute(
                select(table.c.project_id).where(table.c.project_id == project_of(tenant)).limit(1)).first()]
            if held:
                raise UserError(400, f"Cannot delete tenant `{tenant}`: it still holds {', '.join(held)}; "
                                     f"delete them first", "bad_parameters_error")
            conn.execute(delete(USERS).where(USERS.c.tenant == tenant))
            conn.execute(delete(GROUP_TENANTS).where(GROUP_TENANTS.c.tenant == tenant))
            conn.execute(delete(TENANTS).where(TENANTS.c.name == tenant))

    # -- checks -----------------------------------------------------------------------------------------
    @staticmethod
    def _put_tenant(conn: Connection, tenant: str) -> bool:
        """Adds ``tenant`` unless it exists; whether it did."""
        if conn.execute(select(TENANTS.c.name).where(TENANTS.c.name == tenant)).first() is not None:
            return False
        conn.execute(insert(TENANTS).values(name=tenant, created_at=utcnow()))
        return True

    @staticmethod
    def _membership(conn: Connection, name: str, tenant: str) -> str | None:
        return conn.execute(select(USERS.c.role).where(USERS.c.name == name, USERS.c.tenant == tenant)).scalar()

    def _member(self, conn: Connection, name: str, tenant: str) -> None:
        require_account(conn, name)
        require_tenant(conn, tenant)
        if self._membership(conn, name, tenant) is None:
            raise UserError(404, f"User `{name}` is not associated with tenant `{tenant}`", "not_found_error")
