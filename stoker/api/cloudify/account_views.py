"""Cloudify's JSON shapes of a user, a tenant and a user group (rest-service's ``to_response`` of each), groups
counted: without ``_get_data`` the collections are counts, with it their contents."""

from __future__ import annotations

from typing import Any

from stoker.api.cloudify.directory import Directory
from stoker.blueprint.state import DEFAULT_TENANT


def user_view(account: dict[str, Any], directory: Directory, get_data: bool) -> dict:
    """``account``: name, active, created_at.  ``role`` is the user's own system role; a group's shows in
    ``group_system_roles``."""
    name = account["name"]
    direct = directory.direct.get(name, {})
    tenants = {tenant: {"tenant-role": direct.get(tenant), "roles": roles}
               for tenant, roles in directory.user_roles(name).items()}
    groups = directory.groups_of(name)
    view = {"username": name, "id": name, "role": "sys_admin" if direct.get(DEFAULT_TENANT) == "manager" else "default",
            "tenants": tenants if get_data else len(tenants), "groups": groups if get_data else len(groups),
            "group_system_roles": directory.system_roles(name), "active": account["active"], "is_locked": False,
            "show_getting_started": False, "created_at": account["created_at"], "first_login_at": None,
            "last_login_at": None}
    if get_data:
        view["tenant_roles"] = {"direct": dict(direct), "groups": directory.group_tenants(name)}
    return view


def tenant_view(name: str, directory: Directory, get_data: bool) -> dict:
    direct = {user: tenants[name] for user, tenants in sorted(directory.direct.items()) if name in tenants}
    users = {user: {"tenant-role": direct.get(user), "roles": roles}
             for user, roles in directory.tenant_users(name).items()}
    groups = directory.tenant_groups(name)
    view = {"name": name, "id": name, "users": users if get_data else len(users),
            "groups": groups if get_data else len(groups), "user_roles": None, "rabbitmq_vhost": name,
            "rabbitmq_username": None, "rabbitmq_password": None}
    if get_data:
        view["user_roles"] = {"direct": direct, "groups": {
            group: {"role": role, "users": directory.groups[group]["users"]} for group, role in groups.items()}}
    return view


def group_view(name: str, directory: Directory, get_data: bool) -> dict:
    group = directory.groups[name]
    return {"name": name, "id": name, "ldap_dn": group["ldap_dn"], "role": group["role"],
            "tenants": dict(group["tenants"]) if get_data else len(group["tenants"]),
            "users": list(group["users"]) if get_data else len(group["users"])}
