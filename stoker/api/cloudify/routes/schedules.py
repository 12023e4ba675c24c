"""``/execution-schedules`` (``cfy deployments schedule create|update|enable|disable|get|list|delete``), and
the runs every server's beat starts when a schedule is due (``fire``).

A schedule of a deployment whose scripts would run on the host is refused, at its making and at each run,
to a tenant the operator has not allowed local resources, as a start of the same workflow would be.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.background import START_TIMEOUT
from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes.executions import refuse_scripts
from stoker.api.cloudify.routing import bad, router, run
from stoker.workflows import schedules
from stoker.store.schedule_records import SCHEDULES

routes = router("execution schedules")


def _view(row: dict, project: str) -> dict:
    return views.schedule(row, project, schedules.upcoming(row))


def _deployment_id(request: Request) -> str:
    deployment_id = request.query_params.get("deployment_id")
    if not deployment_id:
        raise bad("deployment_id is required (as a query parameter)")
    return deployment_id


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The schedules a list (or a summary) covers."""
    return [_view(row, project) for project, acting in engines_listed(request, who, engine, SCHEDULES)
            for row in acting.blueprints.schedules.list()]


@routes.get("/execution-schedules")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine)))


@routes.get("/execution-schedules/{schedule_id}")
async def get(schedule_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    deployment_id = _deployment_id(request)
    return await run(request, who, lambda engine: views.one(request, _view(
        engine.blueprints.schedules.get(schedule_id, deployment_id), who.project)))


@routes.put("/execution-schedules/{schedule_id}", status_code=201)
async def create(schedule_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    deployment_id = _deployment_id(request)
    body = await json_body(request)
    if not isinstance(body, dict) or not body.get("workflow_id"):
        raise bad("send {\"workflow_id\": ..., \"since\": ..., \"recurrence\": ... or \"rrule\": ...}")

    def work(engine):
        refuse_scripts(request.app.state.stoker.engine.type_policy, engine, who.project, deployment_id)
        made = engine.blueprints.schedules.create(schedule_id, deployment_id, body, who.user)
        return _view(made, who.project)

    return await run(request, who, work, 201)


@routes.patch("/execution-schedules/{schedule_id}", status_code=201)
async def update(schedule_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    deployment_id = _deployment_id(request)
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send the fields to change: since, until, recurrence, count, weekdays, rrule, slip, "
                  "stop_on_fail, enabled, workflow_id")
    return await run(request, who, lambda engine: _view(
        engine.blueprints.schedules.update(schedule_id, deployment_id, body), who.project), 201)


@routes.delete("/execution-schedules/{schedule_id}")
async def delete(schedule_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    deployment_id = _deployment_id(request)
    return await run(request, who, lambda engine: engine.blueprints.schedules.delete(schedule_id, deployment_id))


def fire(state: Any) -> list[str]:
    """Start the runs of the schedules due now, of every tenant, each in its tenant's action pool."""
    def start(row: dict) -> str:
        engine = state.engine.for_project(row["project_id"])
        refuse_scripts(state.engine.type_policy, engine, row["project_id"], row["deployment_id"])
        service = engine.executions
        service.stopping = engine.stopping
        arguments = row["execution_arguments"] or {}
        started = service.begun(lambda executions: executions.start(
            row["workflow_id"], row["deployment_id"], row["parameters"] or {}, force=bool(arguments.get("force")),
            allow_custom_parameters=bool(arguments.get("allow_custom_parameters")), queue=True,
            dry_run=bool(arguments.get("is_dry_run")), created_by=row["created_by"]),
            state.runner.submitter(row["project_id"]), START_TIMEOUT)
        if started.id is None:
            raise RuntimeError("the execution did not start in time")
        return started.id

    return schedules.fire_due(state.engine.store, start)
