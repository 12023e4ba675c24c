"""``/summary/<kind>``: how many blueprints, deployments, nodes, node instances, executions or execution
schedules share a field's value (``_target_field``), optionally split by a second field (``_sub_field``), as
``cfy ... summary`` asks.

The rows are the ones the kind's list would answer (same tenants, labels and equality filters); counted
here, grouped as Cloudify's storage groups them (a page of (value, sub value) groups), shown as its REST
service shows them: ``{TARGET: value, KIND: count, "by SUB": [{SUB: value, KIND: count}, ...]}``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routes import blueprints, deployments, executions, nodes, schedules
from stoker.api.cloudify.routing import bad, router, run

routes = router("summary")

#: kind -> the rows its list covers, and the fields Cloudify summarizes it on
KINDS: dict[str, tuple[Callable[[Request, Caller, Any], list[dict]], tuple[str, ...]]] = {
    "blueprints": (blueprints.listed, ("tenant_name", "visibility")),
    "deployments": (deployments.listed, ("blueprint_id", "tenant_name", "visibility", "site_name",
                                         "deployment_status")),
    "nodes": (nodes.listed_nodes, ("deployment_id", "tenant_name", "visibility")),
    "node_instances": (nodes.listed_instances, ("deployment_id", "index", "node_id", "state", "host_id",
                                                "tenant_name", "visibility")),
    "execution_schedules": (schedules.listed, ("deployment_id", "workflow_id", "tenant_name", "visibility")),
    "executions": (executions.listed, ("status", "status_display", "blueprint_id", "deployment_id", "workflow_id",
                                       "tenant_name", "visibility")),
}


def _field(request: Request, name: str, allowed: tuple[str, ...], required: bool) -> str | None:
    value = request.query_params.get(name)
    if value is None and not required:
        return None
    if value not in allowed:
        raise bad(f"Invalid summary field: {value}. Allowed values: {', '.join(allowed)}")
    return value


def grouped(rows: list[dict], target: str, sub: str | None) -> list[tuple[tuple, int]]:
    """(value, sub value) -> how many rows hold it, in Cloudify's order (by the values)."""
    counts = Counter((row.get(target), row.get(sub)) if sub else (row.get(target),) for row in rows)
    return sorted(counts.items(), key=lambda pair: [views.text(v) for v in pair[0]])


def shown(kind: str, groups: list[tuple[tuple, int]], target: str, sub: str | None) -> list[dict]:
    """Cloudify's summary items: one per target value, its count, and its counts by ``sub``."""
    items: dict[Any, dict] = {}
    for key, count in groups:
        item = items.setdefault(key[0], {target: key[0], kind: 0})
        item[kind] += count
        if sub:
            item.setdefault(f"by {sub}", []).append({sub: key[1], kind: count})
    return list(items.values())


@routes.get("/summary/{kind}")
async def summary(kind: str, request: Request, who: Caller = Depends(caller)) -> Response:
    if kind not in KINDS:
        raise bad(f"there is no summary of {kind}; there are summaries of {', '.join(KINDS)}")
    rows_of, allowed = KINDS[kind]
    target = _field(request, "_target_field", allowed, required=True)
    sub = _field(request, "_sub_field", allowed, required=False)

    def work(engine):
        groups, pagination = views.paged(request, grouped(views.filtered(request, rows_of(request, who, engine)),
                                                          target, sub))
        return {"items": shown(kind, groups, target, sub), "metadata": {"pagination": pagination}}

    return await run(request, who, work)
