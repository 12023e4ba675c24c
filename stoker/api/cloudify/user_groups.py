"""Cloudify's user groups: a named set of users with a system role, an optional LDAP name, and a role in each
tenant it is added to, which every member holds there (stoker/api/cloudify/directory.py counts it).

As in Cloudify, a group's name and LDAP name are unique regardless of case (the name is found in any case and
kept as created), and deleting a group, a tenant or a user drops the memberships and tenant roles naming it:
its members lose what it gave them at their next request.  No change may leave the server without an active
operator where it had one (users.keeping_an_operator).
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine as SAEngine

from stoker.api.cloudify.users import (UserError, check_role, check_system_role, keeping_an_operator, named,
                                       not_found, require_account, require_tenant)
from stoker.store.api_tables import GROUP_TENANTS, GROUP_USERS, GROUPS, utcnow

#: the longest LDAP distinguished name kept
MAX_LDAP_DN = 1024


class GroupStore:
    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    def create(self, name: str, role: str, ldap_dn: str | None) -> str:
        named("group_name", name)
        if name.lower() == "users":
            raise UserError(400, f"{name!r} is not allowed as a user group name because it wouldn't be possible to "
                                 f"remove it later due to a conflict with the remove users from user group endpoint",
                            "bad_parameters_error")
        check_system_role(role)
        if ldap_dn is not None and (not isinstance(ldap_dn, str) or len(ldap_dn) > MAX_LDAP_DN):
            raise UserError(400, f"ldap_group_dn is a string of at most {MAX_LDAP_DN} characters",
                            "bad_parameters_error")
        with self._writer.begin() as conn:
            clash = conn.execute(select(GROUPS.c.name, GROUPS.c.ldap_dn).where(
                (func.lower(GROUPS.c.name) == name.lower())
                | (func.lower(GROUPS.c.ldap_dn) == (ldap_dn or "").lower()))).first()
            if clash is not None:
                dn = f" ldap_dn=`{clash.ldap_dn}`" if clash.ldap_dn else ""
                raise UserError(409, f"<Group name=`{clash.name}`{dn}> already exists", "conflict_error")
            conn.execute(insert(GROUPS).values(name=name, role=role, ldap_dn=ldap_dn or None, created_at=utcnow()))
        return name

    def delete(self, name: str) -> None:
        with self._writer.begin() as conn:
            name = self._group(conn, name)
            with keeping_an_operator(conn, f"Group `{name}` makes"):
                conn.execute(delete(GROUP_USERS).where(GROUP_USERS.c.group_name == name))
                conn.execute(delete(GROUP_TENANTS).where(GROUP_TENANTS.c.group_name == name))
                conn.execute(delete(GROUPS).where(GROUPS.c.name == name))

    def set_role(self, name: str, role: str) -> str:
        check_system_role(role)
        with self._writer.begin() as conn:
            name = self._group(conn, name)
            with keeping_an_operator(conn, f"Group `{name}` makes"):
                conn.execute(update(GROUPS).where(GROUPS.c.name == name).values(role=role))
        return name

    # -- members ----------------------------------------------------------------------------------------
    def add_user(self, user: str, name: str) -> str:
        with self._writer.begin() as conn:
            name = self._group(conn, name)
            require_account(conn, user)
            if self._membership(conn, user, name):
                raise UserError(409, f"User `{user}` is already associated with group `{name}`", "conflict_error")
            conn.execute(insert(GROUP_USERS).values(group_name=name, user_name=user, created_at=utcnow()))
        return name

    def remove_user(self, user: str, name: str) -> None:
        with self._writer.begin() as conn:
            name = self._group(conn, name)
            require_account(conn, user)
            if not self._membership(conn, user, name):
                raise UserError(404, f"User `{user}` is not associated with group `{name}`", "not_found_error")
            with keeping_an_operator(conn, f"User `{user}` is"):
                conn.execute(delete(GROUP_USERS).where(GROUP_USERS.c.group_name == name,
                                                       GROUP_USERS.c.user_name == user))

    # -- tenants ----------------------------------------------------------------------------------------
    def add_tenant(self, name: str, tenant: str, role: str) -> None:
        check_role(role)
        with self._writer.begin() as conn:
            name = self._group(conn, name)
            require_tenant(conn, tenant)
            if self._tenant_role(conn, name, tenant) is not None:
                raise UserError(409, f"Group `{name}` is already associated with tenant `{tenant}`", "conflict_error")
            conn.execute(insert(GROUP_TENANTS).values(group_name=name, tenant=tenant, role=role, created_at=utcnow()))

    def update_tenant(self, name: str, tenant: str, role: str) -> None:
        check_role(role)
        with self._writer.begin() as conn:
            name = self._in_tenant(conn, name, tenant)
            with keeping_an_operator(conn, f"Group `{name}` makes"):
                conn.execute(update(GROUP_TENANTS).where(GROUP_TENANTS.c.group_name == name,
                                                         GROUP_TENANTS.c.tenant == tenant).values(role=role))

    def remove_tenant(self, name: str, tenant: str) -> None:
        with self._writer.begin() as conn:
            name = self._in_tenant(conn, name, tenant)
            with keeping_an_operator(conn, f"Group `{name}` makes"):
                conn.execute(delete(GROUP_TENANTS).where(GROUP_TENANTS.c.group_name == name,
                                                         GROUP_TENANTS.c.tenant == tenant))

    # -- checks -----------------------------------------------------------------------------------------
    def found(self, name: str) -> str:
        """The group's name as created (404 when there is none by that name, in any case)."""
        with self.engine.connect() as conn:
            return self._group(conn, name)

    @staticmethod
    def _group(conn: Connection, name: str) -> str:
        found = conn.execute(select(GROUPS.c.name).where(func.lower(GROUPS.c.name) == str(name).lower())).scalar()
        if found is None:
            raise not_found("Group", name)
        return found

    @staticmethod
    def _membership(conn: Connection, user: str, name: str) -> bool:
        return conn.execute(select(GROUP_USERS.c.user_name).where(
            GROUP_USERS.c.group_name == name, GROUP_USERS.c.user_name == user)).first() is not None

    @staticmethod
    def _tenant_role(conn: Connection, name: str, tenant: str) -> str | None:
        return conn.execute(select(GROUP_TENANTS.c.role).where(
            GROUP_TENANTS.c.group_name == name, GROUP_TENANTS.c.tenant == tenant)).scalar()

    def _in_tenant(self, conn: Connection, name: str, tenant: str) -> str:
        name = self._group(conn, name)
        require_tenant(conn, tenant)
        if self._tenant_role(conn, name, tenant) is None:
            raise UserError(404, f"Group `{name}` is not associated with tenant `{tenant}`", "not_found_error")
        return name

