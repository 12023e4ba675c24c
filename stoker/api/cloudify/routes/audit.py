"""``/audit`` (``cfy auditlog list|truncate``): the changes made through this API, the operator's to read and
truncate (Cloudify's ``audit_log_view`` and ``audit_log_truncate`` are ``sys_admin``'s).  Filters as Cloudify's:
``creator_name``, ``execution_id``, ``since`` and ``before``; pages by ``offset`` and ``size`` (100; 0: all),
sorted by ``order_by`` (``desc``), oldest first otherwise; ``/audit/stream`` follows it (``audit_stream``)."""

from __future__ import annotations

from datetime import datetime, timezone

from dateutil import parser as time_parser
from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import audit_stream
from stoker.api.cloudify.identity import Caller
from stoker.api.cloudify.routes.tenants import operator
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.error_bodies import ApiError
from stoker.store.audit_records import SORTED, AuditRecords
from stoker.store.models import iso_time

routes = router("audit log")


def _time(query, name: str) -> datetime | None:
    given = query.get(name)
    if not given:
        return None
    try:
        when = time_parser.parse(given)
    except (ValueError, OverflowError):
        raise bad(f"{name}: {given[:100]} is not a time") from None
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def _filters(request: Request) -> dict:
    query = request.query_params
    return {"creator": query.get("creator_name"), "execution": query.get("execution_id"),
            "since": _time(query, "since"), "before": _time(query, "before")}


def _number(query, name: str, default: int) -> int:
    given = query.get(name, str(default))
    if not given.isdigit():
        raise bad(f"{name} is a whole number, not {given[:50]!r}")
    return int(given)


def _entry(row: dict) -> dict:
    return {"_storage_id": row["id"], "id": row["id"], "ref_table": row["ref_table"], "ref_id": None,
            "ref_identifier": row["ref_identifier"], "operation": row["operation"],
            "creator_name": row["creator_name"], "execution_id": row["execution_id"],
            "created_at": iso_time(row["created_at"])}


@routes.get("/audit")
async def list_(request: Request, who: Caller = Depends(operator)) -> Response:
    query = request.query_params
    order = [f for f in (query.get("order_by") or "").split(",") if f]
    unknown = sorted(set(order) - set(SORTED))
    if unknown:
        raise bad(f"audit log entries are sorted by {', '.join(SORTED)}, not {', '.join(unknown)}")
    offset, size = _number(query, "offset", 0), _number(query, "size", 100)
    descending = query.get("desc", "false").lower() == "true"
    filters = _filters(request)

    def work(engine):
        rows, total = AuditRecords(engine.store).page(filters, order, descending, offset, size)
        return {"items": [_entry(r) for r in rows],
                "metadata": {"pagination": {"offset": offset, "size": size or total, "total": total}}}

    return await run(request, who, work)


@routes.get("/audit/stream")
async def follow(request: Request, who: Caller = Depends(operator)) -> Response:
    """``cfy auditlog list --follow``: the entries as they come (``audit_stream``)."""
    return audit_stream.stream(request, who.project, _filters(request), _entry)


@routes.delete("/audit")
async def truncate(request: Request, who: Caller = Depends(operator)) -> Response:
    filters = _filters(request)
    if filters["before"] is None:
        raise ApiError(422, "Mandatory parameter not provided: `before`", "bad_parameters_error")
    return await run(request, who, lambda engine: {"deleted": AuditRecords(engine.store).truncate(filters)})
