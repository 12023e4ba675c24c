"""Tenants and users (``cfy tenants``, ``cfy users``): the operator manages them, others read themselves.

As Cloudify's permissions grant them (rest-service/manager_rest/permissions.py): creating and
deleting tenants and users, adding, updating and removing a tenant's users, setting a system role
and (de)activating a user are ``sys_admin``'s only — here the operator's (identity.py); a user sets
its own password.  System roles map onto ``default_tenant``: ``sys_admin`` is its manager, ``default``
anything else.  Cloudify's tenant role ``operations`` (runs workflows and deployments, manages no
secrets or plugins) is Stoker's ``user``.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, forbidden
from stoker.api.cloudify.routing import bad, router
from stoker.api.cloudify.users import UserError, UserStore, not_found
from stoker.api.error_bodies import ApiError
from stoker.api.request_context import reply
from stoker.blueprint.state import DEFAULT_TENANT

routes = router("tenants")

#: Cloudify's tenant roles, as Stoker's
TENANT_ROLES = {"viewer": "viewer", "user": "user", "operations": "user", "manager": "manager"}
SYSTEM_ROLES = ("sys_admin", "default")


def _store(request: Request) -> UserStore:
    return request.app.state.cloudify.users


def _operator(request: Request, who: Caller) -> Caller:
    if not request.app.state.cloudify.operator(who):
        raise forbidden(f"User {who.user!r} is not authorized: only the operator (sys_admin, the manager of "
                        f"{DEFAULT_TENANT}) manages tenants and users, and reads the audit log and permissions")
    return who


def operator(request: Request) -> Caller:
    """A dependency refusing (403) anyone but the operator."""
    return _operator(request, caller(request))


operator.needs = "sys_admin"  # type: ignore[attr-defined]  # read by routes/permissions.py


def _changing(change, *args: Any) -> None:
    try:
        change(*args)
    except UserError as e:
        raise ApiError(e.status, str(e), e.code) from None


async def _body(request: Request) -> dict:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("the body is a JSON object")
    return body


def _fields(body: dict, *names: str) -> list[str]:
    """``body``'s string fields ``names``, each required."""
    values = [body.get(n) for n in names]
    for name, value in zip(names, values):
        if not isinstance(value, str) or not value:
            raise bad(f"Missing {name} in json request body")
    return values


def _tenant_role(role: str) -> str:
    if role not in TENANT_ROLES:
        raise bad(f"Invalid role: `{role}`. Valid tenant roles are: {', '.join(TENANT_ROLES)}")
    return TENANT_ROLES[role]


# -- tenants ----------------------------------------------------------------------------------------
def _tenants(request: Request, names: list[str]) -> list[dict]:
    """Cloudify's view of tenants ``names``: ``users`` counts them, or maps each to its role with ``_get_data``."""
    members: dict[str, dict[str, str]] = {name: {} for name in names}
    for row in _store(request).rows():
        if row["tenant"] in members:
            members[row["tenant"]][row["name"]] = row["role"]
    get_data = request.query_params.get("_get_data", "").lower() == "true"
    return [{"name": name, "id": name, "user_roles": {"direct": users, "groups": {}},
             "users": {u: {"tenant-role": r, "roles": [r]} for u, r in users.items()} if get_data else len(users),
             "groups": {} if get_data else 0, "user_groups": {}, "rabbitmq_vhost": name, "rabbitmq_username": None,
             "rabbitmq_password": None} for name, users in members.items()]


def _tenant(request: Request, name: str) -> dict:
    return _tenants(request, [name])[0]


def _visible_tenants(request: Request, who: Caller) -> list[str]:
    if request.app.state.cloudify.operator(who):
        return _store(request).tenants()
    if who.project_token:
        return [who.tenant]
    return [row["tenant"] for row in _store(request).rows(who.user)]


@routes.get("/tenants")
def tenant_list(request: Request, who: Caller = Depends(caller)) -> Response:
    return reply(views.page(request, _tenants(request, _visible_tenants(request, who)), searched="name"))


@routes.put("/tenants/users")
async def tenant_add_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = _fields(await _body(request), "username", "tenant_name", "role")
    _changing(_store(request).add_member, name, tenant, _tenant_role(role))
    return reply(_tenant(request, tenant))


@routes.patch("/tenants/users")
async def tenant_update_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = _fields(await _body(request), "username", "tenant_name", "role")
    _changing(_store(request).update_member, name, tenant, _tenant_role(role))
    return reply(_tenant(request, tenant))


@routes.delete("/tenants/users")
async def tenant_remove_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant = _fields(await _body(request), "username", "tenant_name")
    _changing(_store(request).remove_member, name, tenant)
    return Response(status_code=204)


@routes.get("/tenants/{name}")
def tenant_get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    if name not in _visible_tenants(request, who):
        raise ApiError(404, str(not_found("Tenant", name)), "not_found_error")
    return reply(_tenant(request, name))


@routes.post("/tenants/{name}", status_code=201)
def tenant_create(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    if name in ("users", "user-groups"):
        raise bad(f"{name!r} is not allowed as a tenant name because it wouldn't be possible to remove it later "
                  f"due to a conflict with the remove {name} from tenant endpoint")
    _changing(_store(request).create_tenant, name)
    return reply(_tenant(request, name), status=201)


@routes.delete("/tenants/{name}")
def tenant_delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    _changing(_store(request).delete_tenant, name)
    return Response(status_code=204)


# -- users ------------------------------------------------------------------------------------------
def _user(account: dict) -> dict:
    tenants = account["tenants"]
    return {"username": account["name"], "id": account["name"],
            "role": "sys_admin" if tenants.get(DEFAULT_TENANT) == "manager" else "default",
            "tenant_roles": {"direct": tenants, "groups": {}},
            "tenants": {t: {"tenant-role": r, "roles": [r]} for t, r in tenants.items()},
            "active": account["active"], "is_locked": False, "show_getting_started": False,
            "created_at": account["created_at"], "first_login_at": None, "last_login_at": None,
            "group_system_roles": {}, "groups": []}


def _account(request: Request, name: str) -> dict:
    found = _store(request).accounts(name)
    if not found:
        raise ApiError(404, str(not_found("User", name)), "not_found_error")
    return _user(found[0])


@routes.get("/users")
def user_list(request: Request, who: Caller = Depends(caller)) -> Response:
    everyone = request.app.state.cloudify.operator(who)
    accounts = _store(request).accounts(None if everyone else who.user)
    return reply(views.page(request, [_user(a) for a in accounts], searched="username"))


@routes.put("/users", status_code=201)
async def user_create(request: Request, who: Caller = Depends(operator)) -> Response:
    body = await _body(request)
    name, password = _fields(body, "username", "password")
    role = body.get("role") or "default"
    if role not in SYSTEM_ROLES:
        raise bad(f"Invalid role: `{role}`. Valid system roles are: {', '.join(SYSTEM_ROLES)}")
    store = _store(request)
    _changing(store.create_account, name, password)
    if role == "sys_admin":
        _changing(store.add_member, name, DEFAULT_TENANT, "manager")
    return reply(_account(request, name), status=201)


@routes.get("/user")
def current_user(request: Request, who: Caller = Depends(caller)) -> Response:
    """The caller (``cfy users get`` of oneself); a project's token, as its tenant's manager, has no account."""
    if who.project_token or not _store(request).accounts(who.user):
        return reply(_user({"name": who.user, "tenants": {who.tenant: who.role}, "active": True,
                                     "created_at": None}))
    return reply(_account(request, who.user))


@routes.get("/users/{name}")
def user_get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    if name != who.user:
        _operator(request, who)
    return reply(_account(request, name))


@routes.post("/users/{name}")
async def user_update(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """A new password (the user's own, or anyone's by the operator) or a new system role (the operator's)."""
    body = await _body(request)
    password, role = body.get("password"), body.get("role")
    if password and role:
        raise bad("Both `password` and `role` provided")
    store = _store(request)
    if password:
        if name != who.user or who.project_token:
            _operator(request, who)
        if not isinstance(password, str):
            raise bad("a password is a string")
        _changing(store.set_password, name, password)
    elif role:
        _operator(request, who)
        if role not in SYSTEM_ROLES:
            raise bad(f"Invalid role: `{role}`. Valid system roles are: {', '.join(SYSTEM_ROLES)}")
        _set_system_role(store, name, role)
    elif "show_getting_started" not in body:
        raise bad("No valid user settings provided. Available settings: password, role, show_getting_started")
    return reply(_account(request, name))


def _set_system_role(store: UserStore, name: str, role: str) -> None:
    """``sys_admin``: the manager of ``default_tenant``; ``default``: a former one stays there as a ``user``."""
    current = store.role(name, DEFAULT_TENANT)
    if role == "sys_admin":
        _changing(store.update_member if current else store.add_member, name, DEFAULT_TENANT, "manager")
    elif current == "manager":
        _changing(store.update_member, name, DEFAULT_TENANT, "user")


@routes.delete("/users/{name}")
def user_delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    _account(request, name)
    _changing(_store(request).delete, name)
    return Response(status_code=204)


@routes.post("/users/active/{name}")
async def user_set_active(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    (action,) = _fields(await _body(request), "action")
    if action not in ("activate", "deactivate"):
        raise bad(f"action is activate or deactivate, not {action!r}")
    _changing(_store(request).set_active, name, action == "activate")
    return reply(_account(request, name))


@routes.post("/users/unlock/{name}")
def user_unlock(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    """Stoker locks no user out after failed logins: every user is already unlocked."""
    return reply(_account(request, name))
