"""``/nodes`` and ``/node-instances`` (runtime properties; an update carries the version it read)."""

from __future__ import annotations

from typing import Any, Callable

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import bad, router, run

routes = router("nodes")


def _deployments(engine: Any, wanted: str | None) -> list[str]:
    return [wanted] if wanted else [d["id"] for d in engine.blueprints.deployments.list()]


def _listed(request: Request, who: Caller, engine: Any, read: str, view: Callable[[dict, str], dict],
            deployment_id: str | None) -> list[dict]:
    """``deployments.<read>(id)`` over the deployment asked for (else the query's, else every one), shown by
    ``view``."""
    deployments = engine.blueprints.deployments
    wanted = deployment_id or request.query_params.get("deployment_id")
    return [view(item, who.project) for d in _deployments(engine, wanted) for item in getattr(deployments, read)(d)]


def listed_nodes(request: Request, who: Caller, engine: Any, deployment_id: str | None = None) -> list[dict]:
    return _listed(request, who, engine, "nodes", views.node, deployment_id)


def listed_instances(request: Request, who: Caller, engine: Any, deployment_id: str | None = None) -> list[dict]:
    return _listed(request, who, engine, "node_instances", views.node_instance, deployment_id)


@routes.get("/nodes")
async def nodes(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed_nodes(request, who, engine)))


@routes.get("/node-instances")
async def node_instances(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed_instances(request, who, engine)))


@routes.get("/node-instances/{instance_id}")
async def node_instance(instance_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, views.node_instance(
        engine.blueprints.deployments.node_instance(instance_id), who.project)))


@routes.patch("/node-instances/{instance_id}")
async def update(instance_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send {\"runtime_properties\": {...}, \"state\": ..., \"version\": N}")
    fields = {k: body[k] for k in ("state", "runtime_properties", "system_properties") if body.get(k) is not None}
    for key in ("runtime_properties", "system_properties"):
        if key in fields and not isinstance(fields[key], dict):
            raise bad(f"{key} must be a map")
    version = body.get("version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise bad("version must be a whole number")
    expected = None if body.get("force") or not version else version

    def work(engine):
        deployments = engine.blueprints.deployments
        found = deployments.update_node_instance(instance_id, None, expected, **fields) if fields else \
            deployments.node_instance(instance_id)
        return views.node_instance(found, who.project)

    return await run(request, who, work)
