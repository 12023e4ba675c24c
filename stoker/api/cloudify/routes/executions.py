"""``/executions`` (start, a start scheduled for later, list, get, cancel, force-cancel, kill, resume, delete
of the ended ones) and ``/events``.

A start answers once the execution is stored (Cloudify answers 201 with it
``started``/``pending``) and runs on in the tenant's action pool, or on the
workers with a broker; ``cfy`` then polls the execution and its events.
Script operations run code on the host: over the API a tenant runs them only
when the operator allows local resources for it (the same switch and list as
Heat's local resource types).
"""

from __future__ import annotations

from typing import Any, Iterable

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker import secretbox
from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import asked, engines_listed, projects_listed
from stoker.api.cloudify.identity import Caller, caller, forbidden, requiring
from stoker.api.cloudify.routes import snapshots
from stoker.api.cloudify.routes.plugins_updates import execution_view
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.cloudify.users import may, project_of
from stoker.api.error_bodies import ApiError
from stoker.api.background import START_TIMEOUT
from stoker.blueprint.state import tenant_of
from stoker.errors import NotFound
from stoker.resources.policy import LOCAL_SETTINGS
from stoker.store.models import Execution, iso_time
from stoker.workflows.execution_groups import ENDED, ExecutionGroups
from stoker.workflows.model import runs_on_host
from stoker.workflows.schedule_rules import parse_time
from stoker.workflows.parameters import given_flag

routes = router("executions")


def _in_background(request: Request, who: Caller, engine: Any, action: Any) -> dict:
    """Run ``action(executions)`` in the tenant's action pool; the execution once stored (or its refusal)."""
    service = engine.executions
    service.stopping = engine.stopping  # the server stopping cancels it (resumable), not waits for it
    service.submit = request.app.state.stoker.runner.submitter(who.project)  # what its end starts (groups)
    started = service.begun(action, service.submit, START_TIMEOUT)
    if started.id is None:
        raise ApiError(503, "the execution did not start in time; look for it with cfy executions list")
    execution = service.get(started.id)
    if execution["status"] in ENDED:
        # it ended before this answer (a dry run, no-ops on a loaded machine): shown as it began, as Cloudify
        # answers every start; cfy follows (and prints the events of) only an execution it sees unended
        execution = {**execution, "status": "started", "status_display": "started", "ended_at": None, "error": ""}
    return views.execution(execution, who.project)


def refuse_scripts(policy: Any, engine: Any, project: str, deployment_id: str, coming: Iterable[dict] = ()) -> None:
    """403 when the deployment (or the ``coming`` nodes: an update's) runs scripts on the host and ``project`` may
    not (the operator's switch)."""
    if policy.allows_local(project):
        return
    records = engine.executions.records
    row = records.get_deployment(project, deployment_id)
    if runs_on_host([*(secretbox.unseal(node["definition"]) for node in records.nodes(row["pk"])), *coming]):
        raise forbidden(f"deployment {deployment_id} has script operations, which run on the server host and "
                        f"are off for tenant {tenant_of(project)!r} (turn them on with {LOCAL_SETTINGS})")


def _refuse_scripts(request: Request, who: Caller, engine: Any, deployment_id: str) -> None:
    refuse_scripts(request.app.state.stoker.engine.type_policy, engine, who.project, deployment_id)


@routes.post("/executions", status_code=201)
async def start(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("deployment_id"), str) \
            or not isinstance(body.get("workflow_id"), str):
        raise bad("send {\"deployment_id\": ..., \"workflow_id\": ..., \"parameters\": {...}}")
    parameters = body.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise bad("parameters must be a map")

    flags = {name: given_flag(body, name) for name in ("force", "allow_custom_parameters", "queue", "dry_run")}
    when = body.get("scheduled_time")

    def work(engine):
        _refuse_scripts(request, who, engine, body["deployment_id"])
        if when:  # Cloudify 7: a schedule running it once (queued then); nothing waits meanwhile
            return views.execution(engine.executions.schedule(
                body["workflow_id"], body["deployment_id"], when, parameters, flags["force"],
                flags["allow_custom_parameters"], flags["dry_run"], created_by=who.user), who.project)
        return _in_background(request, who, engine, lambda executions: executions.start(
            body["workflow_id"], body["deployment_id"], parameters, **flags, created_by=who.user))

    return await run(request, who, work, 201)


@routes.delete("/executions")
async def delete(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy executions delete``: ended executions deleted (filtered by ``deployment_id``, ``workflow_id``,
    ``status``), but the newest ``keep_last`` or those created from ``to_datetime`` on; ``{"items": [{"count":
    N}]}``.  With ``_all_tenants``, every tenant where the caller may delete them."""
    body = await json_body(request)
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise bad("send {\"keep_last\": N} or {\"to_datetime\": ...}")
    query = request.query_params

    def work(engine):
        cloudify = request.app.state.cloudify
        roles = {project_of(tenant): role for tenant, role in cloudify.users.tenant_roles(who.user).items()}
        projects = [p for p in projects_listed(request, who, Execution.__table__)
                    if p == who.project or cloudify.operator(who) or may(roles.get(p, "viewer"), "user")]
        count = engine.executions.delete_ended(
            body.get("keep_last"), body.get("to_datetime"), query.get("deployment_id"), query.get("workflow_id"),
            query.get("status"), projects)
        return {"items": [{"count": count}], "metadata": {"pagination": {"total": 1, "size": 1, "offset": 0}}}

    return await run(request, who, work)


def _executions_of(acting: Any, deployment: str | None, strict: bool) -> list[dict]:
    """A tenant's executions (of ``deployment``: one of several tenants listed may not hold it, unless ``strict``)."""
    try:
        return acting.executions.list(deployment)
    except NotFound:
        if strict:
            raise
        return []


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The executions a list (or a summary) covers."""
    deployment = request.query_params.get("deployment_id")
    return [views.execution(e, project) for project, acting in engines_listed(request, who, engine, Execution.__table__)
            for e in _executions_of(acting, deployment, not asked(request))]


@routes.get("/executions")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine)))


@routes.get("/executions/{execution_id}")
async def get(execution_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """A deployment's execution, or a plugins update's (``cfy plugins update`` waits for it), or (to the
    operator) a snapshot's create or restore."""
    def work(engine):
        try:
            found = views.execution(engine.executions.get(execution_id), who.project)
        except NotFound:
            found = execution_view(engine.store, who.project, execution_id)
            if found is None and request.app.state.cloudify.operator(who):
                found = snapshots.execution_view(engine.store, who.project, execution_id)
            if found is None:
                raise
        return views.one(request, found)

    return await run(request, who, work)


@routes.post("/executions/{execution_id}")
async def act(execution_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    action = body.get("action") if isinstance(body, dict) else None
    if action not in ("cancel", "force-cancel", "kill", "resume", "force-resume"):
        raise bad("action is one of cancel, force-cancel, kill, resume, force-resume")

    def work(engine):
        if action.endswith("resume"):
            deployment_id = engine.executions.get(execution_id)["deployment_id"]
            _refuse_scripts(request, who, engine, deployment_id)
            return _in_background(request, who, engine, lambda executions: executions.resume(execution_id))
        engine.executions.cancel(execution_id, force=action != "cancel")
        return views.execution(engine.executions.get(execution_id), who.project)

    return await run(request, who, work)


@routes.get("/events")
async def events(request: Request, who: Caller = Depends(caller)) -> Response:
    """An execution's events (and logs, given ``type=cloudify_log``), or a deployment's, or an execution group's;
    ``_offset`` pages on."""
    query = request.query_params
    types = query.getlist("type") or ["cloudify_event"]
    include_logs = "cloudify_log" in types or query.get("include_logs") in ("true", "True", "1")
    execution_id = query.get("execution_id") or query.get("_execution_id")
    deployment_id = query.get("deployment_id")
    group_id = query.get("execution_group_id")

    def work(engine):
        executions = engine.executions
        found = []
        if execution_id:
            chosen = [execution_id]
        elif group_id:
            groups = ExecutionGroups(executions)
            chosen = groups.execution_ids(group_id)
            found = [views.event({**log, "timestamp": iso_time(log["timestamp"])}) for log in groups.logs(group_id)
                     if include_logs]
        elif deployment_id:
            chosen = [e["id"] for e in executions.list(deployment_id)]
        else:
            raise bad("events are listed by execution_id (or deployment_id, execution_group_id)")
        found += [views.event(e) for eid in chosen for e in executions.events(eid, include_logs)]
        return views.page(request, found, filters=False)

    return await run(request, who, work)


@routes.delete("/events")
async def delete_events(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """Delete a deployment's events, and its logs given ``type=cloudify_log`` (``cfy events delete``), stamped
    in the ``_range=@timestamp,FROM,TO`` asked for; answers how many went."""
    query = request.query_params
    types = query.getlist("type")
    if "cloudify_event" not in types:
        raise bad("At least `type=cloudify_event` filter is expected")
    deployment_id = query.get("deployment_id")
    if not deployment_id:
        raise bad("events are deleted by deployment: name its deployment_id")
    since = until = None
    for spec in query.getlist("_range"):
        field, _, span = spec.partition(",")
        start, _, end = span.partition(",")
        if field != "@timestamp" or "," in end:
            raise bad(f"_range: expected @timestamp,FROM,TO, got {spec[:100]}")
        since = parse_time(start, "_range from") if start else since
        until = parse_time(end, "_range to") if end else until

    def work(engine):
        count = engine.executions.delete_events(deployment_id, "cloudify_log" in types, since, until)
        return {"items": [count], "metadata": {"pagination": {"total": count, "size": count, "offset": 0}}}

    return await run(request, who, work)
