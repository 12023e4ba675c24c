"""``POST /searches/deployments`` and ``/searches/blueprints`` (the deployments or blueprints a list would answer that meet filter rules: labels and
attributes, ``stoker.blueprint.filter_rules``; ``cfy deployments list --labels-rule ... --attrs-rule ...``) and
``/filters/deployments`` (``cfy deployments filters create|list|get|update|delete``: saved rules that lists,
searches and deployment groups name by id)."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes import blueprints, deployments
from stoker.api.cloudify.routes.groups import checked_rules
from stoker.api.cloudify.routing import global_for_operator, map_body, router, run
from stoker.blueprint.filter_rules import checked

routes = router("searches")


#: what a search's or a filter's body holds
RULES = "send {\"filter_rules\": [{\"key\": ..., \"values\": [...], \"operator\": ..., \"type\": ...}]}"


@routes.post("/searches/deployments")
async def search_deployments(request: Request, who: Caller = Depends(caller)) -> Response:
    body = await map_body(request, RULES)
    rules = checked_rules(lambda: checked(body.get("filter_rules") or []))
    return await run(request, who, lambda engine: views.page(request, deployments.meeting(
        rules, deployments.listed(request, who, engine))))


@routes.post("/searches/blueprints")
async def search_blueprints(request: Request, who: Caller = Depends(caller)) -> Response:
    """The blueprints a list would answer that meet the rules (``cfy blueprints list --labels-rule ...``)."""
    body = await map_body(request, RULES)
    rules = checked_rules(lambda: checked(body.get("filter_rules") or [], "blueprints"))
    return await run(request, who, lambda engine: views.page(request, deployments.meeting(
        rules, blueprints.listed(request, who, engine))))


def _view(row: dict) -> dict:
    rules = row["filter_rules"]
    return {**views.common(row["project_id"]), "id": row["id"], "value": rules, "visibility": row["visibility"],
            "labels_filter_rules": [r for r in rules if r["type"] == "label"],
            "attrs_filter_rules": [r for r in rules if r["type"] == "attribute"],
            "created_by": row["created_by"], "created_at": row["created_at"], "updated_at": row["updated_at"],
            "is_system_filter": False}


@routes.get("/filters/deployments")
async def list_filters(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _view(row) for row in engine.blueprints.filters.list()]))


@routes.get("/filters/deployments/{filter_id}")
async def get_filter(filter_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: _view(engine.blueprints.filters.get(filter_id)))


@routes.put("/filters/deployments/{filter_id}")
async def create_filter(filter_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, RULES)
    global_for_operator(request, who, body.get("visibility"), "filter")
    return await run(request, who, lambda engine: checked_rules(lambda: _view(engine.blueprints.filters.create(
        filter_id, body.get("filter_rules"), body.get("visibility"), who.user))))


@routes.patch("/filters/deployments/{filter_id}")
async def update_filter(filter_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, RULES)
    global_for_operator(request, who, body.get("visibility"), "filter")
    return await run(request, who, lambda engine: checked_rules(lambda: _view(engine.blueprints.filters.update(
        filter_id, body.get("filter_rules"), body.get("visibility")))))


@routes.delete("/filters/deployments/{filter_id}")
async def delete_filter(filter_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, lambda engine: engine.blueprints.filters.delete(filter_id))
