"""Stacks: list, create (and adopt), preview, lookup redirects, show, update, delete,
abandon, export, template, environment, files, outputs, actions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from sqlalchemy import select

from stoker.api import extras, stack_request
from stoker.api.body import extract_bool, extract_int, extract_tags, json_object, query_mixed
from stoker.api.request_context import Ctx, context, empty, in_project_pool, reply
from stoker.api.error_bodies import ApiError, bad_request, not_found
from stoker.api.views import stack_record_view, stack_view, with_query
from stoker.engine.updates import declared_only
from stoker.engine.snapshots import view as snapshot_view
from stoker.errors import Conflict, NotFound
from stoker.home import config
from stoker.store.models import RawTemplate
from stoker.template.environment import Environment
from stoker.template.template import Template

router = APIRouter(prefix="/v1/{tenant_id}", tags=["stacks"])

#: Heat's stack filters, and the store columns they mean
FILTERS = {"id": "id", "name": "name", "stack_name": "name", "status": "status", "stack_status": "status",
           "action": "action", "stack_action": "action", "parent": "parent_id"}
#: Heat's default hidden_stack_tags
HIDDEN_STACK_TAGS = "data-processing-cluster"
TAG_PARAMS = {"tags": "all", "tags_any": "any", "not_tags": "not", "not_tags_any": "not-any"}
LOOKUP_SUBPATHS = {"resources": ["GET", "POST"], "events": ["GET", "POST"], "template": ["GET", "POST"],
                   "actions": ["GET", "POST"], "environment": ["GET"], "files": ["GET"], "outputs": ["GET"],
                   "snapshots": ["GET", "POST"]}


# -- the collection ---------------------------------------------------------------------
@router.get("/stacks", summary="List stacks")
def list_stacks(ctx: Ctx = Depends(context)) -> Response:
    request = ctx.request
    query = request.query_params
    if query.get("global_tenant") and extract_bool("global_tenant", query["global_tenant"]):
        raise ApiError(403, "Listing the stacks of every project is not allowed", "Forbidden")
    filters = {FILTERS[k]: v for k, v in query_mixed(request, FILTERS).items()}
    options: dict[str, Any] = {"filters": filters}
    sort_keys = [k for k in query.getlist("sort_keys") if k]
    if sort_keys:
        options["sort_keys"] = [key for value in sort_keys for key in value.split(",") if key]
    if query.get("sort_dir"):
        options["sort_dir"] = query["sort_dir"]
    for flag in ("show_deleted", "show_nested"):
        if query.get(flag):
            options[flag] = extract_bool(flag, query[flag])
    show_hidden = bool(query.get("show_hidden")) and extract_bool("show_hidden", query["show_hidden"])
    limit = extract_int("limit", query.get("limit")) if query.get("limit") else None
    marker = query.get("marker") or None
    tag_filters = [(mode, extract_tags(query[param])) for param, mode in TAG_PARAMS.items() if query.get(param)]
    hidden = [] if show_hidden else hidden_stack_tags()
    if hidden:  # as Heat: stacks holding one of these tags are listed only with show_hidden
        tag_filters.append(("not-any", hidden))
    if tag_filters:
        options["tags"], options["tag_mode"] = tag_filters[0][1], tag_filters[0][0]
    store = ctx.engine.store
    if len(tag_filters) > 1:  # the store matches one tag mode; the others are applied here
        records = [r for r in store.list_stacks(ctx.project, marker=marker, **options)
                   if all(_tags_match(r.tags or [], tags, mode) for mode, tags in tag_filters[1:])]
        records = records[:limit] if limit is not None else records
    else:
        records = store.list_stacks(ctx.project, limit=limit, marker=marker, **options)
    descriptions = _descriptions(store, [r.template_id for r in records])
    stacks = [stack_record_view(ctx.links, r, descriptions.get(r.template_id, "No description"))
              for r in records]
    result: dict[str, Any] = {"stacks": stacks}
    if limit and len(stacks) == limit:
        result["links"] = [{"rel": "next", "href": with_query(str(request.url).split("?")[0], request,
                                                              marker=stacks[-1]["id"])}]
    if query.get("with_count") and extract_bool("with_count", query["with_count"]):
        counting = {k: v for k, v in options.items() if k not in ("sort_keys", "sort_dir")}
        result["count"] = len(store.list_stacks(ctx.project, **counting))
    return reply(result)


def hidden_stack_tags() -> list[str]:
    """Heat's ``hidden_stack_tags``: ``[api] hidden_stack_tags`` in stoker.conf (comma-separated),
    Heat's default ``data-processing-cluster`` when not set."""
    text = config().get("api", "hidden_stack_tags", fallback=HIDDEN_STACK_TAGS)
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _tags_match(have: list, tags: list, mode: str) -> bool:
    present = [t in have for t in tags]
    return {"all": all(present), "any": any(present), "not": not all(present),
            "not-any": not any(present)}[mode]


def _descriptions(store: Any, template_ids: list[int]) -> dict[int, str]:
    if not template_ids:
        return {}
    query = select(RawTemplate.id, RawTemplate.content).where(RawTemplate.id.in_(set(template_ids)))
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    out = {}
    for template_id, content in rows:
        description = content.get("description") if isinstance(content, dict) else None
        out[template_id] = description if isinstance(description, str) else "No description"
    return out


@router.get("/stacks/detail", summary="List stacks with details")
def detail(ctx: Ctx = Depends(context)) -> Response:
    stacks = [stack_view(ctx.links, _show(ctx, r, True)) for r in ctx.engine.store.list_stacks(ctx.project)]
    return reply({"stacks": stacks})


@router.post("/stacks", status_code=201, summary="Create (or adopt) a stack")
@in_project_pool
def create_stack(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    name = stack_request.stack_name(body)
    if body.get("adopt_stack_data") is not None:
        return _adopt(ctx, name, body)
    data = stack_request.parse(body)

    def action(engine: Any) -> Any:
        return engine.create_stack(name, data.template, data.environment, data.parameters,
                                   timeout_mins=data.timeout_mins,
                                   disable_rollback=True if data.disable_rollback is None else data.disable_rollback,
                                   tags=data.tags or ())

    return _created(ctx, name, ctx.state.runner.start(ctx.engine, action))


def _created(ctx: Ctx, name: str, started: Any) -> Response:
    if started.id is None:
        raise ApiError(503, "The stack was not created in time; try again later", "ServiceUnavailable")
    location = ctx.links.stack(name, started.id)
    return reply({"stack": {"id": started.id, "links": [{"href": location, "rel": "self"}]}}, 201,
                 {"Location": location})


def _adopt(ctx: Ctx, name: str, body: dict) -> Response:
    adopt = extras.adopt_data(body["adopt_stack_data"])
    body = {**body, "template": extras.adoption_template(adopt)}
    body.setdefault("files", adopt.get("files") or {})
    if not body.get("environment") and not body.get("environment_files"):
        body["environment"] = adopt.get("environment") or {}
    data = stack_request.parse(body)

    def action(engine: Any) -> Any:
        return engine.create_stack(name, data.template, data.environment, data.parameters,
                                   timeout_mins=data.timeout_mins,
                                   disable_rollback=True if data.disable_rollback is None else data.disable_rollback,
                                   tags=data.tags if data.tags is not None else adopt.get("tags") or (),
                                   adopted_data=extras.adopted_resource_data(adopt))

    return _created(ctx, name, ctx.state.runner.start(ctx.engine, action))


@router.post("/stacks/preview", summary="Preview a stack create")
@in_project_pool
def preview_create(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    name = stack_request.stack_name(body)
    data = stack_request.parse(body)
    previewed = ctx.engine.preview_stack(name, data.template, data.environment, data.parameters)
    template = data.template.data if isinstance(data.template.data, dict) else {}
    description = template.get("description") or "No description"
    resources = _preview_entries(ctx, previewed)
    stack = {
        "id": "None", "stack_name": name, "description": description, "template_description": description,
        "parameters": {**_preview_parameters(template, data), "OS::stack_id": "None", "OS::stack_name": name,
                       "OS::project_id": ctx.project},
        "resources": resources,
        "timeout_mins": data.timeout_mins, "disable_rollback": data.disable_rollback is not False,
        "capabilities": [], "notification_topics": [], "stack_owner": None, "parent": None,
        "links": [{"href": ctx.links.stack(name, "None"), "rel": "self"}],
    }
    return reply({"stack": stack})


def _preview_entries(ctx: Ctx, entries: list) -> list:
    """The engine's preview in Heat's shape: identities (the stack has no id yet, which Heat
    spells "None"), and the fields a resource not yet made has; nested lists kept."""
    shown: list = []
    for entry in entries:
        if isinstance(entry, list):
            shown.append(_preview_entries(ctx, entry))
            continue
        identity = {"tenant": ctx.project, "stack_name": entry["stack_name"], "stack_id": "None", "path": ""}
        rname = entry["resource_name"]
        shown.append({
            **entry, "logical_resource_id": rname, "resource_identity": {**identity, "path": f"/resources/{rname}"},
            "stack_identity": identity, "resource_action": "INIT", "resource_status": "COMPLETE",
            "resource_status_reason": "", "physical_resource_id": "", "metadata": {},
            "creation_time": None, "updated_time": None,
        })
    return shown


def _preview_parameters(template: dict, data: Any) -> dict:
    section = template.get("parameters") or {}
    values = {}
    env = data.environment.parameter_values(set(section)) if data.environment else {}
    env.update(data.parameters)
    for pname, schema in (section.items() if isinstance(section, dict) else ()):
        schema = schema if isinstance(schema, dict) else {}
        value = env.get(pname, schema.get("default"))
        if schema.get("hidden"):
            value = "******"
        values[pname] = value if isinstance(value, str) or value is None else _text(value)
    return values


def _text(value: Any) -> str:
    import json

    return json.dumps(value) if isinstance(value, (dict, list)) else str(value).lower() \
        if isinstance(value, bool) else str(value)


# -- lookups: /stacks/{name} -> 302 /stacks/{name}/{id} --------------------------------------
def _redirect(ctx: Ctx, stack_name: str, path: str = "") -> Response:
    return _found(ctx, extras.lookup(ctx.engine, stack_name), path)


def _found(ctx: Ctx, record: Any, path: str = "") -> Response:
    location = ctx.links.stack(record.name, record.id) + (f"/{path}" if path else "")
    return Response(status_code=302, headers={"Location": with_query(location, ctx.request)})


def _each_method(path: str, handler: Any, methods: list[str], **kwargs: Any) -> None:
    """One route per method, so each has an operation of its own in the OpenAPI document."""
    for method in methods:
        router.add_api_route(path, handler, methods=[method], name=f"{handler.__name__}_{method.lower()}",
                             **kwargs)


def lookup(stack_name: str, ctx: Ctx = Depends(context)) -> Response:
    return _redirect(ctx, stack_name)


_each_method("/stacks/{stack_name}", lookup, ["GET", "POST", "PUT", "PATCH", "DELETE"],
             summary="Find a stack by name or id (redirects to /stacks/{name}/{id})")


def _subpath_lookup(path: str):
    def handler(stack_name: str, ctx: Ctx = Depends(context)) -> Response:
        return _redirect(ctx, stack_name, path)

    handler.__name__ = f"lookup_{path}"
    return handler


for _path, _methods in LOOKUP_SUBPATHS.items():
    _each_method(f"/stacks/{{stack_name}}/{_path}", _subpath_lookup(_path), _methods,
                 summary=f"Find a stack's {_path} by stack name or id (redirect)")


# Heat's stack ARN (what get_resource gives for a nested stack's resource) in place of NAME/ID
ARN_PATH = "/stacks/arn:openstack:heat::{tenant}:stacks/{stack_name}/{stack_id}"
ARN_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def lookup_arn(tenant: str, stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    return _found(ctx, extras.identify(ctx.engine, stack_name, stack_id))


def lookup_arn_subpath(tenant: str, stack_name: str, stack_id: str, path: str,
                       ctx: Ctx = Depends(context)) -> Response:
    return _found(ctx, extras.identify(ctx.engine, stack_name, stack_id), path)


_each_method(ARN_PATH, lookup_arn, ARN_METHODS, summary="Find a stack by its ARN (redirect)")
_each_method(ARN_PATH + "/{path:path}", lookup_arn_subpath, ARN_METHODS,
             summary="Find a stack's resources, events... by the stack's ARN (redirect)")


# -- one stack --------------------------------------------------------------------------
def _show(ctx: Ctx, record: Any, resolve_outputs: bool) -> dict:
    info = None
    if record.deleted_at is None:
        try:
            info = stack_view(ctx.links, ctx.engine.show_stack(record.id, resolve_outputs=resolve_outputs))
        except NotFound:  # a delete finished between the lookup and now: show the deleted stack
            record = ctx.engine.store.get_stack(record.id, record.project_id, show_deleted=True)
    if info is None:
        info = stack_record_view(ctx.links, record)
        info.update({"parameters": {}, "outputs": [], "timeout_mins": record.timeout_mins,
                     "disable_rollback": record.disable_rollback, "tags": list(record.tags or [])})
    info.setdefault("description", "No description")
    info["template_description"] = info["description"]
    info.setdefault("capabilities", [])
    info.setdefault("notification_topics", [])
    return info


@router.get("/stacks/{stack_name}/{stack_id}", summary="Show a stack")
def show_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id, deleted_ok=True)
    value = ctx.request.query_params.get("resolve_outputs")
    resolve = True if value is None else extract_bool("resolve_outputs", value)
    return reply({"stack": _show(ctx, record, resolve)})


def _update(ctx: Ctx, record: Any, body: dict, patch: bool, dry_run: bool) -> Any:
    data = stack_request.parse(body, patch=patch)
    files = dict(data.files)
    if patch:
        old = ctx.engine.store.get_template(record.template_id)
        files = {**(record.files or old.files or {}), **data.files}
        template = data.template or Template(old.content, files)
        template.files = files
        cleared = set(data.clear_parameters)
        params = {k: v for k, v in (record.parameters or {}).items() if k not in cleared}
        params.update(data.parameters)
        environment = Environment.from_dict(record.environment)
        for section in ("parameters", "parameter_defaults"):
            for key in cleared:
                getattr(environment, section).pop(key, None)
        if data.raw_environment:
            environment = _merged(environment, data.raw_environment)
        params = declared_only(template, params, environment)
    else:
        template, params, environment = data.template, data.parameters, data.environment or Environment()
    kwargs = dict(existing=False, disable_rollback=data.disable_rollback, timeout_mins=data.timeout_mins)
    if dry_run:
        value = ctx.request.query_params.get("show_nested")
        show_nested = extract_bool("show_nested", value) if value is not None else False
        return ctx.engine.update_stack(record.id, template, environment, params, dry_run=True,
                                       show_nested=show_nested, **kwargs)

    def action(engine: Any) -> Any:
        return engine.update_stack(record.id, template, environment, params, converge=data.converge, **kwargs)

    if ctx.state.runner.start(ctx.engine, action).given_up.is_set():
        raise ApiError(503, "The stack update did not start in time; try again later", "ServiceUnavailable")
    # as Heat: a PUT without tags clears them, a PATCH keeps them
    tags = data.tags if data.tags is not None else (None if patch else [])
    if tags is not None:
        ctx.engine.store.update_stack(record.id, tags=tags)
    return None


def _merged(environment: Environment, new: dict) -> Environment:
    from stoker.errors import Problems, ValidationFailed

    problems = Problems()
    environment.merge(new, problems)
    if problems.errors:
        raise ValidationFailed(problems.items)
    return environment


@router.put("/stacks/{stack_name}/{stack_id}", status_code=202, summary="Update a stack")
@in_project_pool
def update_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                 body: dict = Depends(json_object)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    _update(ctx, record, body, patch=bool(body.get("existing")), dry_run=False)
    return empty(202)


@router.patch("/stacks/{stack_name}/{stack_id}", status_code=202,
              summary="Update a stack, keeping its template, parameters and environment unless given")
@in_project_pool
def patch_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                body: dict = Depends(json_object)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    _update(ctx, record, body, patch=True, dry_run=False)
    return empty(202)


def _changes(ctx: Ctx, record: Any, plan: dict) -> dict:
    changes = {}
    for kind in ("added", "deleted", "replaced", "unchanged", "updated"):
        entries = []
        for entry in plan.get(kind, []):
            rname = entry["resource_name"]
            owner = {"stack_name": entry.get("stack_name", record.name),
                     "stack_id": entry.get("stack_id", record.id), "tenant": ctx.project}
            entries.append({
                "resource_name": rname, "logical_resource_id": rname,
                "resource_type": entry.get("resource_type"),
                "resource_identity": {**owner, "path": f"/resources/{rname}"},
                "stack_name": owner["stack_name"], "stack_identity": {**owner, "path": ""},
                "resource_action": "INIT", "resource_status": "COMPLETE",
                "resource_status_reason": entry.get("reason", ""), "required_by": [],
                **({"parent_resource": entry["parent_resource"]} if "parent_resource" in entry else {}),
            })
        changes[kind] = entries
    return {"resource_changes": changes}


@router.put("/stacks/{stack_name}/{stack_id}/preview", summary="Preview a stack update")
@in_project_pool
def preview_update(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                   body: dict = Depends(json_object)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply(_changes(ctx, record, _update(ctx, record, body, patch=bool(body.get("existing")),
                                               dry_run=True)))


@router.patch("/stacks/{stack_name}/{stack_id}/preview", summary="Preview a PATCH stack update")
@in_project_pool
def preview_patch(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                  body: dict = Depends(json_object)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply(_changes(ctx, record, _update(ctx, record, body, patch=True, dry_run=True)))


@router.delete("/stacks/{stack_name}/{stack_id}", status_code=204, summary="Delete a stack")
@in_project_pool
def delete_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    ctx.state.runner.start(ctx.engine, lambda engine: engine.delete_stack(record.id))
    return empty(204)


@router.delete("/stacks/{stack_name}/{stack_id}/abandon",
               summary="Forget a stack, keeping its resources; returns the data to adopt it")
@in_project_pool
def abandon_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply(extras.abandon(ctx.engine, record))


@router.get("/stacks/{stack_name}/{stack_id}/export", summary="Export a stack's data")
def export_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    return reply(extras.export(ctx.engine, extras.identify(ctx.engine, stack_name, stack_id)))


@router.get("/stacks/{stack_name}/{stack_id}/template", summary="The stack's template")
def stack_template(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id, deleted_ok=True)
    return reply(ctx.engine.store.get_template(record.template_id).content)


@router.get("/stacks/{stack_name}/{stack_id}/environment", summary="The stack's environment")
def stack_environment(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply(ctx.engine.environment(record.id))


@router.get("/stacks/{stack_name}/{stack_id}/files", summary="The stack's files map")
def stack_files(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    files = record.files or ctx.engine.store.get_template(record.template_id).files or {}
    return reply(files)


@router.get("/stacks/{stack_name}/{stack_id}/outputs", summary="List a stack's outputs")
def list_outputs(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    outputs = [{k: v for k, v in o.items() if k != "output_value"} for o in ctx.engine.outputs(record.id)]
    return reply({"outputs": outputs})


@router.get("/stacks/{stack_name}/{stack_id}/outputs/{output_key}", summary="Show one output")
def show_output(stack_name: str, stack_id: str, output_key: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    for output in ctx.engine.outputs(record.id):
        if output["output_key"] == output_key:
            return reply({"output": output})
    raise not_found(f"Specified output key {output_key} not found.", "NotFound")


# -- actions ----------------------------------------------------------------------------
ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")


@router.post("/stacks/{stack_name}/{stack_id}/actions", status_code=202,
             summary="suspend, resume, check, cancel_update or cancel_without_rollback")
@in_project_pool
def stack_action(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                 body: dict = Depends(json_object)) -> Response:
    if len(body) < 1:
        raise bad_request("No action specified")
    if len(body) > 1:
        raise bad_request("Multiple actions specified")
    action = next(iter(body))
    if action not in ACTIONS:
        raise bad_request(f"Invalid action {action} specified")
    record = extras.identify(ctx.engine, stack_name, stack_id)
    if action in ("suspend", "resume", "check"):
        method = f"{action}_stack"
        ctx.state.runner.start(ctx.engine, lambda engine: getattr(engine, method)(record.id))
        return empty(202)
    allowed = ("UPDATE",) if action == "cancel_update" else ("CREATE", "UPDATE")
    if record.status != "IN_PROGRESS" or record.action not in allowed:
        raise ApiError(400, f"Cancelling {'update' if action == 'cancel_update' else 'the action'} "
                       f"when stack is {record.action}_{record.status} is not supported", "NotSupported")
    try:
        ctx.engine.cancel_stack(record.id, rollback=action == "cancel_update")
    except Conflict as exc:
        raise ApiError(400, str(exc), "NotSupported") from None
    return empty(202)


# -- snapshots ----------------------------------------------------------------------------
@router.post("/stacks/{stack_name}/{stack_id}/snapshots", summary="Take a snapshot of a stack")
@in_project_pool
def snapshot_stack(stack_name: str, stack_id: str, ctx: Ctx = Depends(context),
                   body: dict = Depends(json_object)) -> Response:
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise bad_request("The snapshot's name must be a string")
    record = extras.identify(ctx.engine, stack_name, stack_id)
    row = ctx.engine.snapshots.start(record.id, name)
    ctx.state.runner.start(ctx.engine, lambda engine: engine.snapshots.take(record.id, row["id"]))
    return reply(snapshot_view(row))


@router.get("/stacks/{stack_name}/{stack_id}/snapshots", summary="List a stack's snapshots")
def list_snapshots(stack_name: str, stack_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply({"snapshots": ctx.engine.snapshots.list(record.id)})


@router.get("/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id}", summary="Show a snapshot")
def show_snapshot(stack_name: str, stack_id: str, snapshot_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    return reply({"snapshot": ctx.engine.snapshots.show(record.id, snapshot_id)})


@router.delete("/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id}", status_code=204,
               summary="Delete a snapshot")
def delete_snapshot(stack_name: str, stack_id: str, snapshot_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    _snapshot_request(lambda: ctx.engine.snapshots.delete(record.id, snapshot_id))
    return empty(204)


@router.post("/stacks/{stack_name}/{stack_id}/snapshots/{snapshot_id}/restore", status_code=202,
             summary="Restore a stack to a snapshot")
@in_project_pool
def restore_snapshot(stack_name: str, stack_id: str, snapshot_id: str, ctx: Ctx = Depends(context)) -> Response:
    record = extras.identify(ctx.engine, stack_name, stack_id)
    _snapshot_request(lambda: ctx.engine.snapshots.restorable(record.id, snapshot_id))
    ctx.state.runner.start(ctx.engine, lambda engine: engine.snapshots.restore(record.id, snapshot_id, wait=False))
    return empty(202)


def _snapshot_request(call: Any) -> None:
    """Heat answers a snapshot it cannot act on (in progress, incomplete) with 400 NotSupported."""
    try:
        call()
    except Conflict as exc:
        raise ApiError(400, str(exc), "NotSupported") from None


__all__ = ["router", "NotFound"]
