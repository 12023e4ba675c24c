"""Events of a stack or of one resource: sort_dir, limit, marker, filters, nested_depth."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api import extras
from stoker.api.body import extract_int, query_mixed
from stoker.api.request_context import Ctx, context, reply
from stoker.api.error_bodies import bad_request, not_found
from stoker.api.views import event_view
from stoker.engine.resource_filters import matches
from stoker.errors import NotFound

router = APIRouter(prefix="/v1/{tenant_id}/stacks/{stack_name}/{stack_id}", tags=["events"])

FILTERS = ("resource_status", "resource_action", "resource_name", "resource_type")


def _fields(event: Any, key: str) -> list:
    """What an event's filter ``key`` (one of ``FILTERS``) matches."""
    if key == "resource_status":
        return [event.status, f"{event.action}_{event.status}"]
    return [{"resource_action": event.action, "resource_name": event.resource_name,
             "resource_type": event.resource_type}[key]]


def _events(ctx: Ctx, stack_name: str, stack_id: str, resource_name: str | None) -> list[dict]:
    query = ctx.request.query_params
    sort_dir = query.get("sort_dir") or "asc"
    if sort_dir not in ("asc", "desc"):
        raise bad_request(f"Invalid sort direction {sort_dir!r}: use asc or desc")
    limit = extract_int("limit", query.get("limit")) if query.get("limit") else None
    depth = extract_int("nested_depth", query.get("nested_depth")) or 0
    marker = query.get("marker") or None
    filters = query_mixed(ctx.request, FILTERS)
    if resource_name is not None:
        filters.pop("resource_name", None)
    record = extras.identify(ctx.engine, stack_name, stack_id, deleted_ok=True)
    store = ctx.engine.store
    simple = depth == 0 and not filters
    if simple:  # paging in the database
        try:
            events = store.list_events(record.id, resource_name=resource_name, sort_dir=sort_dir,
                                       limit=limit, marker=marker)
        except NotFound:
            raise not_found(f"The Event ({marker}) could not be found.") from None
        return [event_view(ctx.links, e, record) for e in events]
    found: list[tuple[Any, Any]] = []
    for stack, _rows, _parent, _kids in extras.walk(ctx.engine, record, depth):
        name = resource_name if stack.id == record.id else None
        if resource_name is not None and stack.id != record.id:
            continue
        found.extend((e, stack) for e in store.list_events(stack.id, resource_name=name)
                     if matches(e, filters, _fields))
    found.sort(key=lambda pair: (pair[0].created_at, pair[0].id), reverse=sort_dir == "desc")
    if marker is not None:
        index = next((i for i, (e, _) in enumerate(found) if e.uuid == marker), None)
        if index is None:
            raise not_found(f"The Event ({marker}) could not be found.")
        found = found[index + 1:]
    if limit is not None:
        found = found[:limit]
    return [event_view(ctx.links, e, stack, root=record) for e, stack in found]


@router.get("/events", summary="List a stack's events")
def stack_events(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    return reply({"events": _events(ctx, stack_name, stack_id, None)})


@router.get("/resources/{resource_name}/events", summary="List one resource's events")
def resource_events(stack_name: str, stack_id: str, resource_name: str, ctx: Ctx = Depends(context)) -> Response:
    events = _events(ctx, stack_name, stack_id, resource_name)
    if not events and not ctx.request.query_params.get("marker"):
        raise not_found(f"No events found for resource {resource_name}")
    return reply({"events": events})


@router.get("/resources/{resource_name}/events/{event_id}", summary="Show one event")
def show_event(stack_name: str, stack_id: str, resource_name: str, event_id: str,
               ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id, deleted_ok=True)
    for event in ctx.engine.store.list_events(record.id, resource_name=resource_name):
        if event.uuid == event_id:
            return reply({"event": event_view(ctx.links, event, record, detail=True)})
    raise not_found(f"No event {event_id} found")
