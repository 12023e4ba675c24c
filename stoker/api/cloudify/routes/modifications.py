"""``/deployment-modifications``: ``cfy deployments modifications list|get|rollback``, and the start and finish
a plugin's or custom workflow's ``ctx.deployment.start_modification(nodes)`` sends, over
``workflows/modifications.py`` (the scale workflow's own go through the same module).

Refusals are Cloudify's: 400 ``existing_started_deployment_modification_error`` while the deployment has a
started one, 400 ``deployment_modification_already_ended_error`` to end one twice, 404 for an unknown id.  As on
Cloudify, a ``user`` of the tenant starts, finishes and rolls back; a viewer reads.
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import bad, map_body, router, run
from stoker.api.error_bodies import ApiError
from stoker.store.modification_records import MODIFICATIONS, ModificationRefused

routes = router("deployment-modifications")


def _refusals(work: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``work``, its refusals answered with Cloudify's codes."""
    def refused(engine: Any) -> Any:
        try:
            return work(engine)
        except ModificationRefused as exc:
            raise ApiError(400, str(exc), exc.error_code) from None

    return refused


@routes.post("/deployment-modifications")
async def start(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, "send {\"deployment_id\": ..., \"nodes\": {...}, \"context\": {...}}")
    deployment_id = body.get("deployment_id")
    if not isinstance(deployment_id, str) or not deployment_id:
        raise bad("Missing deployment_id in json request body")
    return await run(request, who, _refusals(lambda engine: engine.executions.modifications.start(
        deployment_id, body.get("nodes") or {}, body.get("context"), who.user)), status=201)


@routes.get("/deployment-modifications")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        row for _project, acting in engines_listed(request, who, engine, MODIFICATIONS)
        for row in acting.executions.modifications.list()]))


@routes.get("/deployment-modifications/{modification_id}")
async def get(modification_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, engine.executions.modifications.get(
        modification_id)))


@routes.post("/deployment-modifications/{modification_id}/finish")
async def finish(modification_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, _refusals(lambda engine: engine.executions.modifications.finish(modification_id)))


@routes.post("/deployment-modifications/{modification_id}/rollback")
async def rollback(modification_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, _refusals(
        lambda engine: engine.executions.modifications.rollback(modification_id)))
