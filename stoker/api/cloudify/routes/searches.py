"""Cloudify's searches, saved filters and label lists.

``POST /searches/<resource>``: what a list of the resource would answer that meets filter rules (labels and
attributes) or DSL constraints (``stoker.blueprint.filter_rules``): deployments and blueprints (``cfy ... list
--labels-rule ... --attrs-rule ...``), the workflows of the deployments met (``/workflows`` too), a
deployment's or a blueprint's nodes (by id, or by type: ``/searches/node-types``), node instances, secrets,
a deployment's capabilities and scaling groups.
``/filters/deployments`` and ``/filters/blueprints`` (``cfy deployments|blueprints filters
create|list|get|update|delete``): saved rules that lists, searches and deployment groups name by id.
``/labels/deployments`` and ``/labels/blueprints``: the tenant's label keys, and the values of a key.
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes import blueprints, deployments, nodes, secrets
from stoker.api.cloudify.routes.groups import checked_rules
from stoker.api.cloudify.routing import bad, global_for_operator, map_body, router, run
from stoker.api.error_bodies import ApiError
from stoker.blueprint.filter_rules import checked, from_constraints, listed, meeting
from stoker.errors import NotFound

routes = router("searches")


#: what a search's or a filter's body holds
RULES = ("send {\"filter_rules\": [{\"key\": ..., \"values\": [...], \"operator\": ..., \"type\": ...}]} or "
         "{\"constraints\": {...}}")
#: what each kind of saved filter (and label list) covers: the list a search of it starts from
LISTED: dict[str, Callable[[Request, Caller, Any], list[dict]]] = {
    "deployments": deployments.listed, "blueprints": blueprints.listed}


def _kind(kind: str) -> str:
    if kind not in LISTED:
        raise NotFound(f"there are no {kind} filters or labels (only deployments' and blueprints')")
    return kind


async def _search_body(request: Request) -> tuple[list | None, dict]:
    """A search's ``filter_rules`` (None when it sends constraints) and ``constraints`` (the manager's
    checks: one or the other, not both)."""
    body = await map_body(request, RULES)
    rules, constraints = body.get("filter_rules"), body.get("constraints")
    if rules is not None and not isinstance(rules, list):
        raise bad("filter_rules must be a list of filter rules")
    if constraints is not None and not isinstance(constraints, dict):
        raise bad("constraints must be a map")
    if (rules or request.query_params.get("_filter_id")) and constraints:
        raise bad("You should provide either filter_id/filter_rules or DSL constraints, not both")
    return (rules or []) if not constraints else None, dict(constraints or {})


def _rules(rules: list | None, constraints: dict, kind: str, field: str, valid_field: str | None = None) -> list:
    return checked_rules(lambda: checked(rules, kind) if rules is not None
                         else from_constraints(constraints, field, kind, valid_field))


def _target(request: Request, constraints: dict, required: bool) -> tuple[str | None, str | None]:
    """The blueprint or the deployment a search of nodes, node instances or capabilities is about: the query's
    ``blueprint_id``/``deployment_id`` or the constraints' (taken out of them), one of the two at most."""
    found: dict[str, Any] = {}
    for name in ("blueprint_id", "deployment_id"):
        asked = request.query_params.get(name)
        if asked and name in constraints:
            raise bad(f"You should provide either a valid '{name}' parameter or have a '{name}' key in the "
                      "constraints, not both.")
        found[name] = asked or constraints.pop(name, None)
    if (constraints or required) and not found["blueprint_id"] and not found["deployment_id"]:
        raise bad("Please provide a valid 'blueprint_id' or 'deployment_id' parameter or have a relevant key in "
                  "the constraints.")
    if found["blueprint_id"] and found["deployment_id"]:
        raise bad("You should provide either 'blueprint_id' or 'deployment_id' constraints, not both.")
    return found["blueprint_id"], found["deployment_id"]


async def _search(request: Request, who: Caller, kind: str, field: str) -> Response:
    """Deployments or blueprints: the list's rows (its tenants, its ``_filter_id``) meeting the rules, and the
    saved filter the constraints name."""
    rules, constraints = await _search_body(request)
    chosen = _rules(rules, constraints, kind, field)
    return await run(request, who, lambda engine: views.page(request, meeting(chosen, engine.blueprints.filters(
        kind).applied(constraints.get("filter_id"), LISTED[kind](request, who, engine)))))


@routes.post("/searches/deployments")
async def search_deployments(request: Request, who: Caller = Depends(caller)) -> Response:
    return await _search(request, who, "deployments", "display_name")


@routes.post("/searches/blueprints")
async def search_blueprints(request: Request, who: Caller = Depends(caller)) -> Response:
    return await _search(request, who, "blueprints", "id")


def _workflows(request: Request, met: list[dict]) -> dict:
    """The workflows of the deployments met: of any of them, or of every one (``_common_only``)."""
    common = views.text(request.query_params.get("_common_only")).lower() == "true"
    found: dict[str, dict] = {}
    for number, deployment in enumerate(met):
        mine = {w["name"]: w for w in deployment["workflows"]}
        found = ({n: w for n, w in found.items() if n in mine} if common and number else {**found, **mine})
    listed = [found[name] for name in sorted(found)]
    return {"items": listed, "metadata": {"pagination": {"total": len(listed), "size": len(listed), "offset": 0},
                                          "filtered": None}}


@routes.get("/workflows")
async def list_workflows(request: Request, who: Caller = Depends(caller)) -> Response:
    """The workflows of the deployments a list answers (``_filter_id`` too)."""
    return await run(request, who, lambda engine: _workflows(request, deployments.listed(request, who, engine)))


@routes.post("/searches/workflows")
async def search_workflows(request: Request, who: Caller = Depends(caller)) -> Response:
    rules, constraints = await _search_body(request)
    chosen = _rules(rules, constraints, "deployments", "display_name")
    return await run(request, who, lambda engine: _workflows(request, meeting(
        chosen, deployments.listed(request, who, engine))))


@routes.post("/searches/nodes")
async def search_nodes(request: Request, who: Caller = Depends(caller)) -> Response:
    """A deployment's nodes, or a blueprint's (as its plan has them), meeting the rules or constraints."""
    rules, constraints = await _search_body(request)
    blueprint_id, deployment_id = _target(request, constraints, required=True)
    chosen = _rules(rules, constraints, "nodes", "id")

    def work(engine):
        found = engine.blueprints.plan(blueprint_id)["nodes"] if blueprint_id else \
            nodes.listed_nodes(request, who, engine, deployment_id)
        return views.page(request, meeting(chosen, found))

    return await run(request, who, work)


@routes.post("/searches/node-instances")
async def search_node_instances(request: Request, who: Caller = Depends(caller)) -> Response:
    rules, constraints = await _search_body(request)
    _, deployment_id = _target(request, constraints, required=False)
    chosen = _rules(rules, constraints, "node_instances", "id")
    return await run(request, who, lambda engine: views.page(request, meeting(
        chosen, nodes.listed_instances(request, who, engine, deployment_id))))


@routes.post("/searches/secrets")
async def search_secrets(request: Request, who: Caller = Depends(caller)) -> Response:
    rules, constraints = await _search_body(request)
    chosen = _rules(rules, constraints, "secrets", "key")
    return await run(request, who, lambda engine: views.page(request, meeting(
        chosen, secrets.listed(request, who, engine)), searched="key"))


@routes.post("/searches/capabilities")
async def search_capabilities(request: Request, who: Caller = Depends(caller)) -> Response:
    """The capabilities of the deployments whose id holds the one asked for (the manager's substring match),
    by key (``name_pattern``) and value (``valid_values``, ``_search``); a deployment none of whose
    capabilities is met is left out."""
    rules, constraints = await _search_body(request)
    _, deployment_id = _target(request, constraints, required=True)
    if deployment_id is None:
        raise bad("Capabilities are searched by deployment: name its 'deployment_id'.")
    chosen = _rules(rules, constraints, "capabilities", "key", valid_field="value")
    search = request.query_params.get("_search")

    def work(engine):
        found = []
        for deployment in engine.blueprints.deployments.list():
            if deployment_id not in deployment["id"]:
                continue
            held = [{"key": k, "value": v} for k, v in engine.blueprints.deployments.capabilities(
                deployment["id"]).items()]
            met = [{c["key"]: {"value": c["value"]}} for c in meeting(chosen, held)
                   if search is None or views.text(c["value"]) == search]
            if met:
                found.append({"deployment_id": deployment["id"], "capabilities": met})
        return views.page(request, found, filters=False)

    return await run(request, who, work)


def _exactly(request: Request, field: str, rows: list[dict]) -> list[dict]:
    """The rows whose ``field`` is the ``_search`` asked for (a node-type or scaling-group search: the
    manager's exact match, as an input of that type names one)."""
    wanted = request.query_params.get("_search")
    return [row for row in rows if not wanted or row[field] == wanted]


@routes.post("/searches/node-types")
async def search_node_types(request: Request, who: Caller = Depends(caller)) -> Response:
    """``client.nodes.types.list``: a deployment's nodes, or a blueprint's, by type (a ``node_type`` input's
    constraints): ``valid_values`` admits a type and the types derived from it, ``name_pattern`` tests the
    type itself."""
    rules, constraints = await _search_body(request)
    blueprint_id, deployment_id = _target(request, constraints, required=True)
    valid = checked_rules(lambda: listed(constraints, "valid_values"))
    constraints.pop("valid_values", None)
    chosen = _rules(rules, constraints, "nodes", "type")

    def work(engine):
        found = engine.blueprints.plan(blueprint_id)["nodes"] if blueprint_id else \
            nodes.listed_nodes(request, who, engine, deployment_id)
        derived = [n for n in meeting(chosen, found) if not valid or set(valid) & set(n.get("type_hierarchy") or [])]
        return views.page(request, _exactly(request, "type", derived), filters=False)

    return await run(request, who, work)


@routes.post("/searches/scaling-groups")
async def search_scaling_groups(request: Request, who: Caller = Depends(caller)) -> Response:
    """``client.deployments.scaling_groups.list``: a blueprint's scaling groups, or those of the deployments
    a list answers (``_all_tenants`` too) whose id holds the one asked for (the manager's substring match), by
    name (a ``scaling_group`` input's constraints)."""
    rules, constraints = await _search_body(request)
    blueprint_id, deployment_id = _target(request, constraints, required=True)
    chosen = _rules(rules, constraints, "scaling_groups", "name")

    def work(engine):
        if blueprint_id:
            held = engine.blueprints.plan(blueprint_id).get("scaling_groups") or {}
        else:
            held = {name: group for d in deployments.listed(request, who, engine) if deployment_id in d["id"]
                    for name, group in (d.get("scaling_groups") or {}).items()}
        groups = [{"name": name, "members": group.get("members"), "properties": group.get("properties")}
                  for name, group in held.items()]
        return views.page(request, _exactly(request, "name", meeting(chosen, groups)), filters=False)

    return await run(request, who, work)


def _view(row: dict) -> dict:
    rules = row["filter_rules"]
    return {**views.common(row["project_id"]), "id": row["id"], "value": rules, "visibility": row["visibility"],
            "labels_filter_rules": [r for r in rules if r["type"] == "label"],
            "attrs_filter_rules": [r for r in rules if r["type"] == "attribute"],
            "created_by": row["created_by"], "created_at": row["created_at"], "updated_at": row["updated_at"],
            "is_system_filter": False}


@routes.get("/filters/{kind}")
async def list_filters(kind: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _view(row) for row in engine.blueprints.filters(_kind(kind)).list()]))


@routes.get("/filters/{kind}/{filter_id}")
async def get_filter(kind: str, filter_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: _view(engine.blueprints.filters(_kind(kind)).get(filter_id)))


@routes.put("/filters/{kind}/{filter_id}")
async def create_filter(kind: str, filter_id: str, request: Request,
                        who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, RULES)
    global_for_operator(request, who, body.get("visibility"), "filter")
    return await run(request, who, lambda engine: checked_rules(lambda: _view(engine.blueprints.filters(
        _kind(kind)).create(filter_id, body.get("filter_rules"), body.get("visibility"), who.user))))


@routes.patch("/filters/{kind}/{filter_id}")
async def update_filter(kind: str, filter_id: str, request: Request,
                        who: Caller = Depends(requiring("user"))) -> Response:
    body = await map_body(request, RULES)
    if not body:
        raise ApiError(400, "Update a filter request must include at least one parameter to update",
                       "illegal_action_error")
    global_for_operator(request, who, body.get("visibility"), "filter")
    return await run(request, who, lambda engine: checked_rules(lambda: _view(engine.blueprints.filters(
        _kind(kind)).update(filter_id, body.get("filter_rules"), body.get("visibility")))))


@routes.delete("/filters/{kind}/{filter_id}")
async def delete_filter(kind: str, filter_id: str, request: Request,
                        who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, lambda engine: engine.blueprints.filters(_kind(kind)).delete(filter_id))


def _labels(request: Request, who: Caller, engine: Any, kind: str) -> set[tuple[str, str]]:
    """The ``(key, value)`` labels of the tenant's deployments or blueprints."""
    return {(label["key"], label["value"]) for row in LISTED[_kind(kind)](request, who, engine)
            for label in row["labels"]}


def _words(request: Request, words: set[str]) -> dict:
    """A page of label keys or values, as the manager lists them: the words themselves, sorted."""
    found, pagination = views.paged(request, sorted(words))
    return {"items": found, "metadata": {"pagination": pagination, "filtered": None}}


@routes.get("/labels/{kind}")
async def label_keys(kind: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: _words(request, {k for k, _ in _labels(request, who, engine, kind)}))


@routes.get("/labels/{kind}/{key}")
async def label_values(kind: str, key: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """The values of a label key (none for a key no resource has)."""
    return await run(request, who, lambda engine: _words(request, {
        v for k, v in _labels(request, who, engine, kind) if k == key.lower()}))
