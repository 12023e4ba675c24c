"""``/deployments`` (create with inputs and labels, list with label filters and saved filters, get, delete,
outputs, capabilities, workflows, labels, owner)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, forbidden, requiring
from stoker.api.cloudify.routes.blueprints import seen_blueprint
from stoker.api.cloudify.routing import (bad, label_list, labels_in, map_body, new_owner, router, run,
                                        visibility_given, visibility_sent)
from stoker.api.cloudify.viewers import seen, seen_by
from stoker.blueprint import environments
from stoker.blueprint.deployment_groups import member_ids
from stoker.errors import NotFound
from stoker.store.blueprint_records import DEPLOYMENTS
from stoker.store.models import Deployment

routes = router("deployments")


def deployment_view(engine: Any, deployment_id: str, project: str, row: dict | None = None,
                    family: dict | None = None) -> dict:
    """The deployment as cfy sees it (``family``: its part of ``families``, computed here when not given)."""
    deployments = engine.blueprints.deployments
    row = row or deployments.get(deployment_id)
    family = family or families(engine, [deployment_id])[deployment_id]
    plan = deployments.plan(deployment_id)
    plan["scaling_groups"] = engine.executions.modifications.scaling_groups(deployment_id,
                                                                            plan.get("scaling_groups") or {})
    return views.deployment(row, project, plan, deployments.inputs(deployment_id),
                            family, engine.blueprints.sites.site_of(deployment_id))


def families(engine: Any, deployment_ids: list[str]) -> dict[str, dict]:
    """Each deployment's statuses and those of its sub-services and sub-environments."""
    deployments = engine.blueprints.deployments

    def latest(deployment_id: str) -> dict | None:
        executions = engine.executions.list(deployment_id)
        return executions[-1] if executions else None

    return environments.summaries(deployments.records, deployments.project_id, deployment_ids, latest)


def _label_filter(request: Request) -> list[tuple[str, str]]:
    """``_labels=key=value`` or ``_labels=key:value`` filters (``cfy deployments list --labels``)."""
    found = []
    for spec in request.query_params.getlist("_labels"):
        key, _, value = spec.replace("=", ":", 1).partition(":")
        found.append((key.lower(), value))
    return found


@routes.put("/deployments/{deployment_id}")
async def create(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("blueprint_id"), str):
        raise bad("a deployment is created from a blueprint: send {\"blueprint_id\": ..., \"inputs\": {...}}")
    inputs = body.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise bad("inputs must be a map of input names to values")
    labels = label_list(body.get("labels"))
    display_name = body.get("display_name")

    site_name = body.get("site_name")
    shown_to = visibility_given(request, who, body.get("visibility"), "deployment")

    def work(engine):
        blueprint = seen_blueprint(request, who, engine, body["blueprint_id"])  # another's private one: 404
        if shown_to == "global" and blueprint["visibility"] != "global":
            raise forbidden(f"Can't create global deployment {deployment_id} because blueprint {blueprint['id']} is "
                            f"not global")
        if site_name:
            engine.blueprints.sites.get(site_name)  # a site that does not exist: 404, nothing stored
        engine.blueprints.deployments.create(deployment_id, body["blueprint_id"], inputs, labels,
                                             display_name if isinstance(display_name, str) else None,
                                             bool(body.get("runtime_only_evaluation")),
                                             created_by=who.user, shown_to=shown_to)
        if site_name:
            engine.blueprints.sites.set_site(deployment_id, site_name)
        return deployment_view(engine, deployment_id, who.project)

    return await run(request, who, work, 201)


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The deployments a list (or a summary) covers: the tenants asked for, the labels asked for, the deployment
    group asked for (``_group_id``: ``cfy deployments list --group-id``; ``deployment_group_id``: its summary)."""
    wanted = _label_filter(request)
    group_id = request.query_params.get("_group_id") or request.query_params.get("deployment_group_id")
    rows = []
    for project, acting in engines_listed(request, who, engine, Deployment.__table__):
        found = acting.blueprints.deployments
        members = None if group_id is None else member_ids(found, group_id)
        chosen = [d for d in found.list() if members is None or d["id"] in members]
        family = families(acting, [d["id"] for d in chosen])
        rows += [deployment_view(acting, d["id"], project, {**d, "labels": found.labels(d["id"])}, family[d["id"]])
                 for d in chosen]
    if group_id is None:
        rows += _global_elsewhere(engine, who.project)
    sees = seen_by(request, who)
    rows = list({(r["tenant_name"], r["id"]): r for r in rows
                 if all({"key": k, "value": v} in r["labels"] for k, v in wanted) and sees(r)}.values())
    return engine.blueprints.filters().applied(request.query_params.get("_filter_id"), rows)


@routes.get("/deployments")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine)))


@routes.get("/deployments/{deployment_id}")
async def get(deployment_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, seen_deployment(request, who, engine,
                                                                                       deployment_id, True)))


def seen_deployment(request: Request, who: Caller, engine: Any, deployment_id: str, elsewhere: bool = False) -> dict:
    """The deployment as ``who`` sees it (another's private one: 404); ``elsewhere``: else another tenant's
    global one of that id."""
    try:
        shown = deployment_view(engine, deployment_id, who.project)
    except NotFound:
        found = _global_elsewhere(engine, who.project, deployment_id) if elsewhere else []
        if not found:
            raise
        shown = found[0]
    return seen(request, who, shown, "Deployment", deployment_id)


def _global_elsewhere(engine: Any, project: str, wanted: str | None = None) -> list[dict]:
    """Other tenants' global deployments (of id ``wanted``): read from every tenant, changed only from their own."""
    return [deployment_view(engine.for_project(owner), deployment_id, owner)
            for owner, deployment_id in engine.blueprints.records.global_elsewhere(DEPLOYMENTS, project, wanted)]


@routes.delete("/deployments/{deployment_id}")
async def delete(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy deployments delete [-f] [-r]``: ``force`` even while it is a parent; ``recursive`` with its children."""
    force, recursive = (request.query_params.get(name, "").lower() == "true" for name in ("force", "recursive"))
    return await run(request, who, lambda engine: engine.blueprints.deployments.delete(deployment_id, force,
                                                                                         recursive))


@routes.patch("/deployments/{deployment_id}")
async def update(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """Replace the deployment's labels (``cfy deployments labels add|delete`` send the whole new list), or give
    it to another owner (``cfy deployments set-owner DEP -s USER``: ``{"creator": USER}``, the operator's)."""
    body = await map_body(request, "send {\"labels\": [...]} or {\"creator\": USER}")
    creator = new_owner(request, who, body["creator"]) if "creator" in body else None
    wanted = None if creator and "labels" not in body else labels_in(body, "deployment")

    def work(engine):
        deployments = engine.blueprints.deployments
        seen_deployment(request, who, engine, deployment_id)
        if creator:
            deployments.set_owner(deployment_id, creator)
        if wanted is not None:
            for label in deployments.labels(deployment_id):
                if (label["key"], label["value"]) not in wanted:
                    deployments.delete_label(deployment_id, label["key"], label["value"])
            deployments.add_labels(deployment_id, wanted)
        return deployment_view(engine, deployment_id, who.project)

    return await run(request, who, work)


@routes.patch("/deployments/{deployment_id}/set-visibility")
async def set_visibility(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy deployments set-visibility DEP -l tenant|global``: only widens, never past its blueprint's."""
    wanted = await visibility_sent(request, who, "deployment")

    def work(engine):
        seen_deployment(request, who, engine, deployment_id)
        engine.blueprints.deployments.set_visibility(deployment_id, wanted)
        return deployment_view(engine, deployment_id, who.project)

    return await run(request, who, work)


@routes.get("/deployments/{deployment_id}/outputs")
async def outputs(deployment_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: {
        "deployment_id": deployment_id, "outputs": engine.blueprints.deployments.outputs(deployment_id)})


@routes.get("/deployments/{deployment_id}/capabilities")
async def capabilities(deployment_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: {
        "deployment_id": deployment_id, "capabilities": engine.blueprints.deployments.capabilities(deployment_id)})


@routes.get("/deployments/{deployment_id}/workflows")
async def workflows(deployment_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: {
        "deployment_id": deployment_id,
        "workflows": views.workflows(engine.blueprints.deployments.plan(deployment_id))})
