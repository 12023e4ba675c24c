"""``/permissions`` (``cfy permissions list [--role R]``): what each role may call, read from the routes
themselves (each route's dependency says the least role it needs, as its ``needs``: ``requiring(R)``'s, the
operator's dependencies', else any caller's), so the list cannot drift from what is enforced.  A permission is a route
(``PUT /secrets/{key}``); a handler may still refuse a request by what it asks (another user's token, a global
resource from anyone but the operator).  Stoker's roles are fixed: ``allow``/``disallow`` are refused (405)."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller
from stoker.api.cloudify.routes.components import refused
from stoker.api.cloudify.routes.tenants import operator
from stoker.api.cloudify.routing import PREFIX, router
from stoker.api.error_bodies import ApiError
from stoker.api.request_context import reply

routes = router("permissions")
#: each role Stoker knows, and the roles whose routes it may call (Cloudify's sys_admin is the operator)
GRANTS = {"sys_admin": ("sys_admin", "manager", "user", "viewer"), "manager": ("manager", "user", "viewer"),
          "user": ("user", "viewer"), "viewer": ("viewer",)}


def _needs(route: APIRoute) -> str:
    found = [getattr(d.call, "needs", None) for d in route.dependant.dependencies]
    return next((n for n in found if n), "viewer")


def _permissions(request: Request, role: str | None) -> list[dict]:
    if role is not None and role not in GRANTS:
        raise ApiError(404, f"Requested `Role` with ID `{role[:100]}` was not found", "not_found_error")
    found = []
    for route in request.app.state.cloudify_routes:
        if not isinstance(route, APIRoute) or not route.path.startswith(PREFIX + "/"):
            continue
        needed = _needs(route)
        for method in sorted(route.methods):
            name = f"{method} {route.path.removeprefix(PREFIX)}"
            found.extend({"role": r, "permission": name} for r in GRANTS if needed in GRANTS[r] and role in (None, r))
    return sorted(found, key=lambda p: (p["permission"], p["role"]))


@routes.get("/permissions")
def permission_list(request: Request, who: Caller = Depends(operator)) -> Response:
    return reply(views.page(request, _permissions(request, None), filters=False))


@routes.get("/permissions/{role}")
def role_permissions(role: str, request: Request, who: Caller = Depends(operator)) -> Response:
    return reply(views.page(request, _permissions(request, role), filters=False))


@routes.put("/permissions/{role}/{permission:path}")
@routes.delete("/permissions/{role}/{permission:path}")
def permission_change(role: str, permission: str, who: Caller = Depends(operator)) -> Response:
    raise refused("Stoker's roles are fixed (viewer, user, manager in a tenant; the operator): what each may do is "
                  "listed by `cfy permissions list`")
