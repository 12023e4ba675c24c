"""The manager's own parts that ``cfy`` asks about, answered for what Stoker has: the cluster's status (this REST
service and its database), the Celery broker it dispatches to (none without workers), its limits as read-only
config, and no license, LDAP, log bundles or maintenance mode.  A change Stoker cannot make is refused as
Cloudify refuses a feature its edition lacks (405 ``method_not_allowed_error``), naming what Stoker does instead.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import router, run
from stoker.api.error_bodies import ApiError
from stoker.api.request_context import reply
from stoker.limits import DEFAULTS, limit

routes = router("components")
#: a broker URL's port when it names none, per scheme
BROKER_PORTS = {"amqp": 5672, "amqps": 5671, "redis": 6379, "rediss": 6379}


def refused(what: str) -> ApiError:
    return ApiError(405, what, "method_not_allowed_error")


def database_reached(engine) -> bool:
    """Whether the store's database answers one query now."""
    try:
        with engine.store.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        return True
    except Exception:  # any driver error: the database is what is down, not this request
        return False


@routes.get("/cluster-status")
async def cluster_status(request: Request, who: Caller = Depends(caller)) -> Response:
    """``cfy cluster status``: this server as the one manager node, and whether its database answers."""
    host = request.url.hostname or "127.0.0.1"

    def work(engine):
        reached = database_reached(engine)
        state = "OK" if reached else "Fail"
        node = {"status": "OK", "private_ip": host, "public_ip": host}
        return {"status": state, "services": {
            "manager": {"status": "OK", "is_external": False, "nodes": {host: node}},
            "db": {"status": state, "is_external": False,
                   "nodes": {engine.store.engine.url.host or host: {"status": state, "private_ip": host}}}}}

    return await run(request, who, work)


@routes.get("/brokers")
def brokers(request: Request, who: Caller = Depends(caller)) -> Response:
    """The broker the server hands work to (``--broker``); none when it runs everything in-process."""
    url = getattr(request.app.state.stoker.engine.dispatch, "broker_url", None)
    found = []
    if url:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        found.append({"name": host, "host": host, "port": parts.port or BROKER_PORTS.get(parts.scheme),
                      "networks": {"default": host}, "is_external": True, "node_id": host})
    return reply(views.page(request, found, filters=False))


# -- license ------------------------------------------------------------------------------------------
@routes.get("/license")
def license_list(request: Request, who: Caller = Depends(caller)) -> Response:
    """None uploaded: Stoker needs none."""
    return reply(views.page(request, [], filters=False))


@routes.get("/license-check")
def license_check(who: Caller = Depends(caller)) -> Response:
    return reply("OK")


@routes.put("/license")
@routes.delete("/license")
def license_change(who: Caller = Depends(requiring("manager"))) -> Response:
    raise refused("Stoker needs no license: there is none to upload or remove")


# -- LDAP ---------------------------------------------------------------------------------------------
@routes.get("/ldap")
def ldap_status(who: Caller = Depends(caller)) -> Response:
    return reply("disabled")


@routes.post("/ldap")
def ldap_set(who: Caller = Depends(requiring("manager"))) -> Response:
    raise refused("Stoker checks passwords itself (users made with `cfy users create` or `stoker user create`): "
                  "it has no LDAP authenticator to set")


# -- log bundles --------------------------------------------------------------------------------------
@routes.get("/log-bundles")
def log_bundle_list(request: Request, who: Caller = Depends(caller)) -> Response:
    return reply(views.page(request, [], filters=False))


@routes.get("/log-bundles/{bundle_id}")
@routes.get("/log-bundles/{bundle_id}/archive")
@routes.delete("/log-bundles/{bundle_id}")
def log_bundle(bundle_id: str, who: Caller = Depends(caller)) -> Response:
    raise ApiError(404, f"Requested `LogBundle` with ID `{bundle_id}` was not found", "not_found_error")


@routes.put("/log-bundles/{bundle_id}")
def log_bundle_create(bundle_id: str, who: Caller = Depends(requiring("manager"))) -> Response:
    raise refused("Stoker makes no log bundles: its logs are what `stoker api` and `stoker worker` print, and "
                  "each execution's are in `cfy events list`")


# -- maintenance mode ---------------------------------------------------------------------------------
@routes.post("/maintenance/{action}")
def maintenance_switch(action: str, who: Caller = Depends(requiring("manager"))) -> Response:
    if action == "deactivate":  # already off, as it always is
        return reply({"status": "deactivated", "activated_at": None, "activation_requested_at": None,
                      "remaining_executions": None, "requested_by": None})
    if action != "activate":
        raise ApiError(404, f"Maintenance action {action[:50]} is activate or deactivate", "not_found_error")
    raise refused("Stoker has no maintenance mode: to stop it taking work, stop `stoker api` (running actions "
                  "are handed back and resumed at the next start)")


# -- config -------------------------------------------------------------------------------------------
def _config_items() -> list[dict]:
    return [{"name": name, "value": limit(name), "scope": "limits", "schema": {"type": "number", "minimum": 1},
             "is_editable": False, "admin_only": False, "updated_at": None, "updater_name": None}
            for name in DEFAULTS]


@routes.get("/config")
def config_list(request: Request, who: Caller = Depends(caller)) -> Response:
    """Stoker's limits, as this server reads them (``[limits]`` of stoker.conf, ``STOKER_<NAME>``)."""
    scope = request.query_params.get("scope")
    return reply({"metadata": {}, "items": [i for i in _config_items() if scope in (None, i["scope"])]})


def _config_item(name: str) -> dict:
    scope, _, key = name.rpartition(".")
    for item in _config_items():
        if item["name"] == key and scope in ("", item["scope"]):
            return item
    raise ApiError(404, f"Requested `Config` with ID `{name[:100]}` was not found", "not_found_error")


@routes.get("/config/{name}")
def config_get(name: str, who: Caller = Depends(caller)) -> Response:
    return reply(_config_item(name))


@routes.put("/config/{name}")
async def config_put(name: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    await json_body(request)
    item = _config_item(name)
    raise ApiError(409, f"{item['name']} is not editable: set [limits] {item['name']} in stoker.conf (or "
                        f"STOKER_{item['name'].upper()}) and restart the server", "conflict_error")
