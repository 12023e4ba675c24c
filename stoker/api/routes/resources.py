"""Resources of a stack: list (filters, nested_depth, with_detail), show, metadata,
signal, and mark unhealthy (PATCH)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api import extras
from stoker.api.body import extract_bool, extract_int, json_body, json_object, query_mixed
from stoker.api.request_context import Ctx, context, in_project_pool, reply, signal_context
from stoker.api.error_bodies import ApiError, bad_request
from stoker.api.views import current_rows, required_by_map, resource_view
from stoker.engine.resource_filters import FILTERS, matches
from stoker.errors import Conflict, NotFound

router = APIRouter(prefix="/v1/{tenant_id}/stacks/{stack_name}/{stack_id}", tags=["resources"])


@router.get("/resources", summary="List a stack's resources")
def list_resources(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    query = ctx.request.query_params
    unknown = set(query.keys()) - set(FILTERS) - {"nested_depth", "with_detail"}
    if unknown:
        raise bad_request(f"Invalid filter parameters {sorted(unknown)}")
    depth = extract_int("nested_depth", query.get("nested_depth")) or 0
    with_detail = extract_bool("with_detail", query["with_detail"]) if query.get("with_detail") else False
    filters = query_mixed(ctx.request, FILTERS)
    record = extras.identify(ctx.engine, stack_name, stack_id)
    out = []
    for stack, rows, parent_resource, kids in extras.walk(ctx.engine, record, depth):
        rows = current_rows(rows)
        needed = required_by_map(rows)
        for row in rows:
            if not matches(row, filters):
                continue
            entry = resource_view(ctx.links, row, stack, needed.get(row.name), kids.get(row.name),
                                  parent_resource)
            if with_detail:
                entry.update(_details(ctx, stack, row.name))
            out.append(entry)
    return reply({"resources": out})


def _details(ctx: Ctx, record: Any, resource_name: str) -> dict:
    try:
        info = ctx.engine.resource(record.id, resource_name)
    except NotFound:
        return {}
    return {"attributes": info.get("attributes", {}), "description": info.get("description", "")}


def _description(ctx: Ctx, record: Any, resource_name: str) -> str:
    content = ctx.engine.store.get_template(record.template_id).content
    entry = ((content or {}).get("resources") or {}).get(resource_name) if isinstance(content, dict) else None
    description = entry.get("description") if isinstance(entry, dict) else None
    return description if isinstance(description, str) else ""


@router.get("/resources/{resource_name}", summary="Show a resource")
def show_resource(stack_name: str, stack_id: str, resource_name: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    # Heat's with_attr: more attributes to resolve into the answer (repeatable)
    info = ctx.engine.resource(record.id, resource_name, ctx.request.query_params.getlist("with_attr"))
    rows = current_rows(ctx.engine.store.get_resources(record.id))
    row = next((r for r in rows if r.name == resource_name), None)
    if row is None:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
    nested = extras.children(ctx.engine, record).get(resource_name)
    # a resource of a nested stack names the resource that owns its stack, as in Heat
    out = resource_view(ctx.links, row, record, info.get("required_by"), nested,
                        getattr(record, "owner_resource", None))
    out["attributes"] = info.get("attributes", {})
    out["description"] = _description(ctx, record, resource_name)
    return reply({"resource": out})


@router.get("/resources/{resource_name}/metadata", summary="A resource's metadata")
def resource_metadata(stack_name: str, stack_id: str, resource_name: str,
                      ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    rows = current_rows(ctx.engine.store.get_resources(record.id))
    row = next((r for r in rows if r.name == resource_name), None)
    if row is None:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
    return reply({"metadata": row.rsrc_metadata or {}})


@router.post("/resources/{resource_name}/signal", summary="Signal a resource")
@in_project_pool
def signal_resource(stack_name: str, stack_id: str, resource_name: str, ctx: Ctx = Depends(signal_context),
                    body: Any = Depends(json_body)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    try:
        # as Heat, a signal that acts (a scaling policy's resize) goes on in the background
        ctx.state.runner.start(ctx.engine, lambda engine: engine.signal(record.id, resource_name, body))
    except Conflict as exc:
        raise ApiError(400, str(exc), "ResourceActionNotSupported") from None
    return Response(status_code=200)


@router.patch("/resources/{resource_name}", summary="Mark a resource unhealthy (or healthy again)")
@in_project_pool
def mark_unhealthy(stack_name: str, stack_id: str, resource_name: str, ctx: Ctx = Depends(context),
                   body: dict = Depends(json_object)) -> Response:
    invalid = set(body) - {"mark_unhealthy", "resource_status_reason"}
    if invalid:
        raise bad_request(f"Invalid keys in resource mark unhealthy {sorted(invalid)}")
    if "mark_unhealthy" not in body:
        raise bad_request("Missing mandatory (mark_unhealthy) key from mark unhealthy request")
    unhealthy = extract_bool("mark_unhealthy", body["mark_unhealthy"])
    reason = body.get("resource_status_reason") or ""
    if not isinstance(reason, str):
        raise bad_request("resource_status_reason must be a string")
    record = extras.identify(ctx.engine, stack_name, stack_id)
    ctx.engine.mark_unhealthy(record.id, resource_name, unhealthy, reason)
    return Response(status_code=200)
