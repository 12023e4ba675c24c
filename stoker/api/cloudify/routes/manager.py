"""The manager itself: status, version, tokens (as far as ``cfy`` needs them); tenants and users: tenants.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import CloudifyRoute, router, run
from stoker.api.request_context import reply
from stoker.api.error_bodies import ApiError
from stoker.api.routes.info import _version

#: the Cloudify release whose REST API this serves
CLOUDIFY_VERSION = "7.0.5"
#: a user token's life when the request names none (Cloudify's default is 10 hours)
TOKEN_HOURS = 10

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
        database = engine.store.engine
        try:
            with database.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            reached = True
        except Exception:  # any driver error: the database is what is down, not this request
            reached = False
        services = {"Manager Rest-Service": _service(True, version=_version()),
                    "Database": _service(reached, kind=database.dialect.name)}
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


@routes.get("/brokers")
@routes.get("/db-nodes")
def single_nodes(request: Request, who: Caller = Depends(caller)) -> Response:
    host = request.url.hostname or "127.0.0.1"
    return reply(views.page(request, [{"name": host, "host": host, "node_id": host}], filters=False))


# -- tokens -----------------------------------------------------------------------------------------
def _token_view(token_id: str, value: str | None, who: Caller, description: str, expires: datetime | None) -> dict:
    return {"id": token_id, "value": value, "username": who.user, "role": who.role, "description": description,
            "expiration_date": expires.strftime("%Y-%m-%dT%H:%M:%S.000Z") if expires else None,
            "last_used": None}


def _issue(request: Request, who: Caller, description: str = "") -> Response:
    if who.user == "admin" and request.app.state.stoker.auth_mode == "noauth":
        raise ApiError(400, "this server runs without authentication (--auth noauth): it issues no tokens",
                       "bad_parameters_error")
    issued = request.app.state.cloudify.tokens.create(who.project, description[:1000], timedelta(hours=TOKEN_HOURS), user_name=who.user)
    expires = issued.expires_at.replace(tzinfo=timezone.utc) if issued.expires_at else None
    return reply(_token_view(issued.id, issued.token, who, description, expires))


@routes.get("/tokens")
def token_list(request: Request, who: Caller = Depends(caller)) -> Response:
    rows = [r for r in request.app.state.cloudify.tokens.list(who.project) if not r["revoked"]]
    return reply(views.page(request, [{"id": r["id"], "description": r["description"], "username": who.user,
                                       "expiration_date": r["expires_at"], "value": None} for r in rows],
                            filters=False))


@routes.post("/tokens", status_code=200)
async def token_create(request: Request, who: Caller = Depends(caller)) -> Response:
    body = await json_body(request) or {}
    description = body.get("description") if isinstance(body, dict) else None
    return _issue(request, who, description if isinstance(description, str) else "")


@routes.delete("/tokens/{token_id}")
def token_delete(token_id: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    if not request.app.state.cloudify.tokens.revoke(token_id):
        raise ApiError(404, f"Token {token_id} not found", "not_found_error")
    return Response(status_code=204)


#: registered last: any other path under /api answers in Cloudify's shape, naming what is not served
unknown = APIRouter(route_class=CloudifyRoute, include_in_schema=False)


@unknown.api_route("/api/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def not_served(path: str, request: Request) -> Response:
    raise ApiError(404, f"{request.method} /api/{path} is not served by Stoker's Cloudify API", "not_found_error")
