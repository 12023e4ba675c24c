"""User groups (``cfy user-groups``) and a group's role in a tenant (``cfy tenants add-user-group|
update-user-group|remove-user-group``): the operator's only, as Cloudify's permissions give every ``user_group_*``
and ``tenant_*_group`` action to ``sys_admin`` alone (stoker/api/cloudify/user_groups.py keeps them)."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.account_views import group_view
from stoker.api.cloudify.identity import Caller
from stoker.api.cloudify.routes.tenants import (changing, fields, get_data, json_object, one_tenant, operator,
                                                tenant_role, user_store)
from stoker.api.cloudify.routing import router
from stoker.api.cloudify.user_groups import GroupStore
from stoker.api.request_context import reply

routes = router("user groups")


def _groups(request: Request) -> GroupStore:
    return GroupStore(user_store(request).engine)


def _group(request: Request, name: str) -> dict:
    return views.one(request, group_view(name, user_store(request).directory(), get_data(request)))


@routes.get("/user-groups")
def group_list(request: Request, who: Caller = Depends(operator)) -> Response:
    directory = user_store(request).directory()
    return reply(views.page(request, [group_view(name, directory, get_data(request)) for name in directory.groups],
                            searched="name"))


@routes.post("/user-groups", status_code=201)
async def group_create(request: Request, who: Caller = Depends(operator)) -> Response:
    body = await json_object(request)
    (name,) = fields(body, "group_name")
    role = body.get("role") or "default"
    name = changing(_groups(request).create, name, role, body.get("ldap_group_dn"))
    return reply(_group(request, name), status=201)


@routes.put("/user-groups/users")
async def group_add_user(request: Request, who: Caller = Depends(operator)) -> Response:
    user, name = fields(await json_object(request), "username", "group_name")
    return reply(_group(request, changing(_groups(request).add_user, user, name)))


@routes.delete("/user-groups/users")
async def group_remove_user(request: Request, who: Caller = Depends(operator)) -> Response:
    user, name = fields(await json_object(request), "username", "group_name")
    changing(_groups(request).remove_user, user, name)
    return Response(status_code=204)


@routes.get("/user-groups/{name}")
def group_get(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    return reply(_group(request, changing(_groups(request).found, name)))


@routes.post("/user-groups/{name}")
async def group_set_role(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    """``cfy user-groups set-role``: the group's system role."""
    (role,) = fields(await json_object(request), "role")
    return reply(_group(request, changing(_groups(request).set_role, name, role)))


@routes.delete("/user-groups/{name}")
def group_delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    changing(_groups(request).delete, name)
    return Response(status_code=204)


# -- a group in a tenant ------------------------------------------------------------------------------
@routes.put("/tenants/user-groups")
async def tenant_add_group(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = fields(await json_object(request), "group_name", "tenant_name", "role")
    changing(_groups(request).add_tenant, name, tenant, tenant_role(role))
    return reply(one_tenant(request, tenant))


@routes.patch("/tenants/user-groups")
async def tenant_update_group(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant, role = fields(await json_object(request), "group_name", "tenant_name", "role")
    changing(_groups(request).update_tenant, name, tenant, tenant_role(role))
    return reply(one_tenant(request, tenant))


@routes.delete("/tenants/user-groups")
async def tenant_remove_group(request: Request, who: Caller = Depends(operator)) -> Response:
    name, tenant = fields(await json_object(request), "group_name", "tenant_name")
    changing(_groups(request).remove_tenant, name, tenant)
    return Response(status_code=204)
