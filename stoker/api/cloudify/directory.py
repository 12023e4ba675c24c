"""Who belongs where, groups counted: a user's effective role in each tenant, the server's operators, and one
read of every membership for the views of users, tenants and groups.

As Cloudify's authorization takes the union of a user's direct, group and system roles, a user holds the
highest of its own role in a tenant and its groups' roles there (viewer < user < manager).  A group whose
system role is ``sys_admin`` makes its members operators, as a user's own ``sys_admin`` does here: managers
of ``default_tenant`` (stoker/api/cloudify/identity.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from sqlalchemy import String, literal, select, union_all
from sqlalchemy.engine import Connection

from stoker.blueprint.state import DEFAULT_TENANT
from stoker.store.api_tables import ACCOUNTS, GROUP_TENANTS, GROUP_USERS, GROUPS, USERS

ROLES = ("viewer", "user", "manager")


def highest(roles: Iterable[str]) -> str | None:
    known = [role for role in roles if role in ROLES]
    return max(known, key=ROLES.index) if known else None


def roles_held(conn: Connection, user: str | None = None, tenant: str | None = None) -> list[tuple[str, str, str]]:
    """(user, tenant, role) of every role held, directly or through a group (``user``'s, in ``tenant``, if given)."""
    direct = select(USERS.c.name, USERS.c.tenant, USERS.c.role)
    by_tenant = select(GROUP_USERS.c.user_name, GROUP_TENANTS.c.tenant, GROUP_TENANTS.c.role).join(
        GROUP_TENANTS, GROUP_TENANTS.c.group_name == GROUP_USERS.c.group_name)
    by_system = select(GROUP_USERS.c.user_name, literal(DEFAULT_TENANT, String).label("tenant"),
                       literal("manager", String).label("role")).join(
        GROUPS, GROUPS.c.name == GROUP_USERS.c.group_name).where(GROUPS.c.role == "sys_admin")
    if user is not None:
        direct = direct.where(USERS.c.name == user)
        by_tenant = by_tenant.where(GROUP_USERS.c.user_name == user)
        by_system = by_system.where(GROUP_USERS.c.user_name == user)
    parts = [direct, by_tenant, by_system]
    if tenant is not None:
        parts = [direct.where(USERS.c.tenant == tenant), by_tenant.where(GROUP_TENANTS.c.tenant == tenant),
                 *([by_system] if tenant == DEFAULT_TENANT else [])]
    return [tuple(row) for row in conn.execute(union_all(*parts))]


def tenant_roles(conn: Connection, user: str, tenant: str | None = None) -> dict[str, str]:
    """``user``'s tenants (``tenant`` only, if given), each with the highest role it holds there."""
    held: dict[str, list[str]] = defaultdict(list)
    for _, where, role in roles_held(conn, user, tenant):
        held[where].append(role)
    return {where: highest(roles) for where, roles in sorted(held.items())}


def operators(conn: Connection) -> set[str]:
    """The active users who manage ``default_tenant``, by their own role or a group's."""
    named = {name for name, _, role in roles_held(conn, tenant=DEFAULT_TENANT) if role == "manager"}
    if not named:
        return set()
    return set(conn.execute(select(ACCOUNTS.c.name).where(ACCOUNTS.c.active.is_(True),
                                                          ACCOUNTS.c.name.in_(sorted(named)))).scalars())


@dataclass
class Directory:
    """Every membership at one moment: users' own tenant roles, and each group with its system role, LDAP name,
    members and tenant roles."""

    direct: dict[str, dict[str, str]] = field(default_factory=dict)
    groups: dict[str, dict] = field(default_factory=dict)

    def groups_of(self, user: str) -> list[str]:
        return sorted(name for name, group in self.groups.items() if user in group["users"])

    def group_tenants(self, user: str) -> dict[str, dict[str, list[str]]]:
        """tenant → role → the groups of ``user`` giving it that role there."""
        found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for name in self.groups_of(user):
            for tenant, role in self.groups[name]["tenants"].items():
                found[tenant][role].append(name)
        return {tenant: dict(roles) for tenant, roles in sorted(found.items())}

    def user_roles(self, user: str) -> dict[str, list[str]]:
        """tenant → every role ``user`` holds there, its own and its groups'."""
        found: dict[str, set[str]] = defaultdict(set)
        for tenant, role in self.direct.get(user, {}).items():
            found[tenant].add(role)
        for tenant, roles in self.group_tenants(user).items():
            found[tenant].update(roles)
        return {tenant: sorted(roles) for tenant, roles in sorted(found.items())}

    def tenant_users(self, tenant: str) -> dict[str, list[str]]:
        """user → every role it holds in ``tenant``, its own and its groups'."""
        found: dict[str, set[str]] = defaultdict(set)
        for user, tenants in self.direct.items():
            if tenant in tenants:
                found[user].add(tenants[tenant])
        for group in self.groups.values():
            if tenant in group["tenants"]:
                for user in group["users"]:
                    found[user].add(group["tenants"][tenant])
        return {user: sorted(roles) for user, roles in sorted(found.items())}

    def tenant_groups(self, tenant: str) -> dict[str, str]:
        return {name: group["tenants"][tenant] for name, group in self.groups.items() if tenant in group["tenants"]}

    def system_roles(self, user: str) -> dict[str, list[str]]:
        """system role → the groups of ``user`` giving it (Cloudify's ``group_system_roles``)."""
        found: dict[str, list[str]] = defaultdict(list)
        for name in self.groups_of(user):
            found[self.groups[name]["role"]].append(name)
        return dict(found)


def read_directory(conn: Connection) -> Directory:
    found = Directory()
    for name, tenant, role in conn.execute(select(USERS.c.name, USERS.c.tenant, USERS.c.role)):
        found.direct.setdefault(name, {})[tenant] = role
    for row in conn.execute(select(GROUPS).order_by(GROUPS.c.name)).mappings():
        found.groups[row["name"]] = {"role": row["role"], "ldap_dn": row["ldap_dn"], "users": [], "tenants": {}}
    for name, user in conn.execute(select(GROUP_USERS.c.group_name, GROUP_USERS.c.user_name)
                                   .order_by(GROUP_USERS.c.user_name)):
        found.groups[name]["users"].append(user)
    for name, tenant, role in conn.execute(select(GROUP_TENANTS.c.group_name, GROUP_TENANTS.c.tenant,
                                                  GROUP_TENANTS.c.role).order_by(GROUP_TENANTS.c.tenant)):
        found.groups[name]["tenants"][tenant] = role
    return found
