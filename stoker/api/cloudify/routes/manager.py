"""The manager itself: status, version (as far as ``cfy`` needs them).  Elsewhere: tokens in tokens.py, tenants
and users in tenants.py, its other parts (cluster status, brokers, license, LDAP, config...) in components.py."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routes.components import database_reached
from stoker.api.cloudify.routing import CloudifyRoute, router, run
from stoker.api.request_context import reply
from stoker.api.error_bodies import ApiError
from stoker.api.routes.info import _version

#: the Cloudify release whose REST API this serves
CLOUDIFY_VERSION = "7.0.5"

routes = router("manager")
unversioned = APIRouter(prefix="/api", route_class=CloudifyRoute, tags=["cloudify: manager"])


def _version_info() -> dict:
    return {"version": CLOUDIFY_VERSION, "edition": "community", "distribution": "stoker",
            "distro_release": _version(), "build": None, "date": None, "commit": None, "api_version": "v3.1"}


@unversioned.get("/version")
@routes.get("/version")
def version(who: Caller = Depends(caller)) -> Response:
    return reply(_version_info())


def _service(active: bool, **extra: str) -> dict:
    return {"status": "Active" if active else "Inactive", "is_remote": False, "is_external": False,
            "extra_info": extra}


@routes.get("/status")
async def status(request: Request, who: Caller = Depends(caller)) -> Response:
    """What ``cfy status`` lists: this REST service, and the database it reads (asked for one row)."""
    def work(engine):
        reached = database_reached(engine)
        services = {"Manager Rest-Service": _service(True, version=_version()),
                    "Database": _service(reached, kind=engine.store.engine.dialect.name)}
        return {"status": "OK" if reached else "Fail", "services": services}

    return await run(request, who, work)


@routes.get("/maintenance")
def maintenance(who: Caller = Depends(caller)) -> Response:
    """Stoker has no maintenance mode: always off (``cfy status`` asks)."""
    return reply({"status": "deactivated", "activated_at": None, "activation_requested_at": None,
                  "remaining_executions": None, "requested_by": None})


@routes.get("/provider/context")
def provider_context(who: Caller = Depends(caller)) -> Response:
    return reply({"name": "stoker", "context": {}})


@routes.get("/managers")
def managers(request: Request, who: Caller = Depends(caller)) -> Response:
    host = request.url.hostname or "127.0.0.1"
    return reply(views.page(request, [{"id": 1, "hostname": host, "private_ip": host, "public_ip": host,
                                      "version": CLOUDIFY_VERSION, "edition": "community",
                                      "distribution": "stoker", "networks": {"default": host}}], filters=False))


@routes.get("/idp")
def identity_provider(who: Caller = Depends(caller)) -> Response:
    """Who checks passwords: Stoker itself (``cfy idp get``), as a manager without LDAP or SAML."""
    return reply("local")


@routes.get("/agents")
def agents(request: Request, who: Caller = Depends(caller)) -> Response:
    """Stoker runs every operation as a process of the server's host, with no agent: none to list."""
    return reply(views.page(request, [], filters=False))


@routes.get("/db-nodes")
def db_nodes(request: Request, who: Caller = Depends(caller)) -> Response:
    host = request.url.hostname or "127.0.0.1"
    return reply(views.page(request, [{"name": host, "host": host, "node_id": host}], filters=False))


#: registered last: any other path under /api answers in Cloudify's shape, naming what is not served
unknown = APIRouter(route_class=CloudifyRoute, include_in_schema=False)


@unknown.api_route("/api/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def not_served(path: str, request: Request) -> Response:
    raise ApiError(404, f"{request.method} /api/{path} is not served by Stoker's Cloudify API", "not_found_error")
