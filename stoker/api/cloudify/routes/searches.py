"""``POST /searches/deployments``: the deployments a list would answer that meet filter rules (labels and
attributes, ``stoker.blueprint.filter_rules``), as ``cfy deployments list --labels-rule ... --attrs-rule ...``
asks.  Saved filters (``_filter_id``) are not kept by Stoker: naming one is a 404."""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routes import deployments
from stoker.api.cloudify.routes.groups import checked_rules
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.error_bodies import ApiError
from stoker.blueprint.filter_rules import checked, matches

routes = router("searches")


@routes.post("/searches/deployments")
async def search_deployments(request: Request, who: Caller = Depends(caller)) -> Response:
    body = await json_body(request) if await request.body() else {}
    if not isinstance(body, dict):
        raise bad("send {\"filter_rules\": [{\"key\": ..., \"values\": [...], \"operator\": ..., \"type\": ...}]}")
    filter_id = request.query_params.get("_filter_id")
    if filter_id:
        raise ApiError(404, f"Requested `DeploymentsFilter` with ID `{filter_id}` was not found", "not_found_error")
    rules = checked_rules(lambda: checked(body.get("filter_rules") or []))

    def work(engine):
        found = [row for row in deployments.listed(request, who, engine)
                 if matches(rules, row, [(label["key"], label["value"]) for label in row["labels"]])]
        return views.page(request, found)

    return await run(request, who, work)
