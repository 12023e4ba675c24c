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
from stoker.api.cloudify.account_views import tenant_view, user_view
from stoker.api.cloudify.directory import Directory
from stoker.api.cloudify.identity import Caller, caller, forbidden
from stoker.api.cloudify.routing import bad, router
from stoker.api.cloudify.users import UserError, UserStore, check_system_role, not_found
from stoker.api.error_bodies import ApiError
from stoker.api.request_context import reply
from stoker.blueprint.state import DEFAULT_TENANT

routes = router("tenants")

#: Cloudify's tenant roles, as Stoker's
TENANT_ROLES = {"viewer": "viewer", "user": "user", "operations": "user", "manager": "manager"}


def user_store(request: Request) -> UserStore:
    return request.app.state.cloudify.users


def _operator(request: Request, who: Caller) -> Caller:
    if not request.app.state.cloudify.operator(who):
        raise forbidden(f"User {who.user!r} is not authorized: only the operator (sys_admin, the manager of "
                        f"{DEFAULT_TENANT}) manages tenants, users, user groups and secrets providers, and reads "
                        f"the audit log and permissions")
    return who


def operator(request: Request) -> Caller:
    """A dependency refusing (403) anyone but the operator."""
    return _operator(request, caller(request))


operator.needs = "sys_admin"  # type: ignore[attr-defined]  # read by routes/permissions.py


def changing(change, *args: Any) -> Any:
    """``change(*args)``'s answer; a refusal in Cloudify's shape."""
    try:
        return change(*args)
    except UserError as e:
        raise ApiError(e.status, str(e), e.code) from None


async def json_object(request: Request) -> dict:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("the body is a JSON object")
    return body


def fields(body: dict, *names: str) -> list[str]:
    """``body``'s string fields ``names``, each required."""
    values = [body.get(n) for n in names]
    for name, value in zip(names, values):
        if not isinstance(value, str) or not value:
            raise bad(f"Missing {name} in json request body")
    return values


def get_data(request: Request) -> bool:
    return request.query_params.get("_get_data", "").lower() == "true"


def tenant_role(role: str) -> str:
    if role not in TENANT_ROLES:
        raise bad(f"Invalid role: `{role}`. Valid tenant roles are: {', '.join(TENANT_ROLES)}")
    return TENANT_ROLES[role]


# -- tenants ----------------------------------------------------------------------------------------
def _tenants(request: Request, names: list[str]) -> list[dict]:
    """Cloudify's view of tenants ``names`` (one read of the memberships)."""
    directory = user_store(request).directory()
    return [tenant_view(name, directory, get_data(request)) for name in names]


def one_tenant(request: Request, name: str) -> dict:
    return _tenants(request, [name])[0]


def _visible_tenants(request: Request, who: Caller) -> list[str]:
    if request.app.state.cloudify.operator(who):
        return user_store(request).tenants()
    if who.project_token:
        return [who.tenant]
    return list(user_store(request).tenant_roles(who.user))


@routes.get("/tenants")
def tenant_list(request: Request, who: Caller = Depends(caller)) -> Response:
    """Each tenant the caller reaches; with its members (``_get_data``) for the operator only, as Cloudify's
    ``tenant_list_get_data``."""
    if get_data(request) and not request.app.state.cloudify.operator(who):
        raise forbidden(f"User `{who.user}` is not permitted to perform the action tenant_list_get_data")
    return reply(views.page(request, _tenants(request, _visible_tenants(request, who)), searched="name"))


@routes.put("/tenants/users")
async def tenant_add_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = fields(await json_object(request), "username", "tenant_name", "role")
    changing(user_store(request).add_member, name, tenant, tenant_role(role))
    return reply(one_tenant(request, tenant))


@routes.patch("/tenants/users")
async def tenant_update_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = fields(await json_object(request), "username", "tenant_name", "role")
    changing(user_store(request).update_member, name, tenant, tenant_role(role))
    return reply(one_tenant(request, tenant))


@routes.delete("/tenants/users")
async def tenant_remove_user(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant = fields(await json_object(request), "username", "tenant_name")
    changing(user_store(request).remove_member, name, tenant)
    return Response(status_code=204)


@routes.get("/tenants/{name}")
def tenant_get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    if name not in _visible_tenants(request, who):
        raise ApiError(404, str(not_found("Tenant", name)), "not_found_error")
    return reply(one_tenant(request, name))


@routes.post("/tenants/{name}", status_code=201)
def tenant_create(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    if name in ("users", "user-groups"):
        raise bad(f"{name!r} is not allowed as a tenant name because it wouldn't be possible to remove it later "
                  f"due to a conflict with the remove {name} from tenant endpoint")
    changing(user_store(request).create_tenant, name)
    return reply(one_tenant(request, name), status=201)


@routes.delete("/tenants/{name}")
def tenant_delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    changing(user_store(request).delete_tenant, name)
    return Response(status_code=204)


# -- users ------------------------------------------------------------------------------------------
def _account(request: Request, name: str) -> dict:
    store = user_store(request)
    found = store.accounts(name)
    if not found:
        raise ApiError(404, str(not_found("User", name)), "not_found_error")
    return user_view(found[0], store.directory(), get_data(request))


@routes.get("/users")
def user_list(request: Request, who: Caller = Depends(caller)) -> Response:
    everyone = request.app.state.cloudify.operator(who)
    store = user_store(request)
    accounts, directory = store.accounts(None if everyone else who.user), store.directory()
    return reply(views.page(request, [user_view(a, directory, get_data(request)) for a in accounts],
                            searched="username"))


@routes.put("/users", status_code=201)
async def user_create(request: Request, who: Caller = Depends(operator)) -> Response:
    body = await json_object(request)
    name, password = fields(body, "username", "password")
    role = body.get("role") or "default"
    changing(check_system_role, role)
    store = user_store(request)
    changing(store.create_account, name, password)
    if role == "sys_admin":
        changing(store.add_member, name, DEFAULT_TENANT, "manager")
    return reply(_account(request, name), status=201)


@routes.get("/user")
def current_user(request: Request, who: Caller = Depends(caller)) -> Response:
    """The caller (``cfy users get`` of oneself); a project's token, as its tenant's manager, has no account."""
    if who.project_token or not user_store(request).accounts(who.user):
        return reply(user_view({"name": who.user, "active": True, "created_at": None},
                               Directory(direct={who.user: {who.tenant: who.role}}), get_data(request)))
    return reply(_account(request, who.user))


@routes.get("/users/{name}")
def user_get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    if name != who.user:
        _operator(request, who)
    return reply(_account(request, name))


@routes.post("/users/{name}")
async def user_update(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """A new password (the user's own, or anyone's by the operator) or a new system role (the operator's)."""
    body = await json_object(request)
    password, role = body.get("password"), body.get("role")
    if password and role:
        raise bad("Both `password` and `role` provided")
    store = user_store(request)
    if password:
        if name != who.user or who.project_token:
            _operator(request, who)
        if not isinstance(password, str):
            raise bad("a password is a string")
        changing(store.set_password, name, password)
    elif role:
        _operator(request, who)
        changing(check_system_role, role)
        _set_system_role(store, name, role)
    elif "show_getting_started" not in body:
        raise bad("No valid user settings provided. Available settings: password, role, show_getting_started")
    return reply(_account(request, name))


def _set_system_role(store: UserStore, name: str, role: str) -> None:
    """``sys_admin``: the manager of ``default_tenant``; ``default``: a former one stays there as a ``user``."""
    current = store.own_role(name, DEFAULT_TENANT)
    if role == "sys_admin":
        changing(store.update_member if current else store.add_member, name, DEFAULT_TENANT, "manager")
    elif current == "manager":
        changing(store.update_member, name, DEFAULT_TENANT, "user")


@routes.delete("/users/{name}")
def user_delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    _account(request, name)
    changing(user_store(request).delete, name)
    return Response(status_code=204)


@routes.post("/users/active/{name}")
async def user_set_active(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    (action,) = fields(await json_object(request), "action")
    if action not in ("activate", "deactivate"):
        raise bad(f"action is activate or deactivate, not {action!r}")
    changing(user_store(request).set_active, name, action == "activate")
    return reply(_account(request, name))


@routes.post("/users/unlock/{name}")
def user_unlock(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    """Stoker locks no user out after failed logins: every user is already unlocked."""
    return reply(_account(request, name))
