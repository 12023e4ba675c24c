"""``/deployment-updates``: ``cfy deployments update DEP -b BLUEPRINT [-i ...]`` (``initiate``), ``history``
(the list) and ``get-update``, over ``workflows/deployment_updates.py``.

An initiate answers once the update's ``update`` execution is stored (cfy then follows the execution), or
at once with the steps for a preview, which stores nothing.  While the deployment runs an execution it is
refused as Cloudify's manager refuses it (400 ``existing_running_execution_error``).  As on Cloudify, a
``user`` of the tenant may update (``deployment_update_create``), a viewer only reads.
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
from stoker.api.error_bodies import ApiError
from stoker.store.deployment_updates import DEPLOYMENT_UPDATES
from stoker.store.execution_records import DeploymentBusy
from stoker.workflows.deployment_updates import FLAGS

routes = router("deployment-updates")


def _flag(value: Any) -> bool:
    """A boolean of the body (the rest client may send the strings "true"/"false")."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _options(body: dict) -> dict:
    """What the update was asked besides its blueprint and inputs, as the workflow reads it."""
    options = {name: _flag(body[name]) for name in FLAGS if body.get(name) is not None}
    options["force"] = _flag(body.get("force"))
    if body.get("runtime_only_evaluation") is not None:
        options["runtime_only_evaluation"] = _flag(body["runtime_only_evaluation"])
    if body.get("workflow_id"):
        options["workflow_id"] = body["workflow_id"]
    reinstall = body.get("reinstall_list") or []
    if not isinstance(reinstall, list):
        raise bad("parameter `reinstall_list` must be of type `list`")
    options["reinstall_list"] = reinstall
    return options


async def _initiate(deployment_id: str, request: Request, who: Caller) -> Response:
    body = await json_body(request) if await request.body() else {}
    if not isinstance(body, dict):
        raise bad("send {\"blueprint_id\": ..., \"inputs\": {...}, ...}")
    inputs = body.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise bad("parameter `inputs` must be of type `dict`")
    options = _options(body)

    def work(engine):
        blueprint_id = body.get("blueprint_id")
        refuse_scripts(request.app.state.stoker.engine.type_policy, engine, who.project, deployment_id,
                       engine.blueprints.plan(blueprint_id)["nodes"] if blueprint_id else ())
        executions = engine.executions
        executions.stopping = engine.stopping  # the server stopping cancels the update (resumable)
        try:
            found, started = executions.updates.begin(
                deployment_id, blueprint_id, inputs, _flag(body.get("preview")), created_by=who.user,
                submit=request.app.state.stoker.runner.submitter(who.project), timeout=START_TIMEOUT, **options)
        except DeploymentBusy as exc:
            running = exc.running
            raise ApiError(400, "The following executions are currently running for this deployment: "
                           f"[{running['id']} ({running['workflow_id']}, {running['status']})]. To execute this "
                           "workflow anyway, pass \"force=true\" as a query parameter to this request",
                           "existing_running_execution_error") from None
        if started is not None and started.id is None:
            raise ApiError(503, "the update's execution did not start in time; look for it with cfy executions list")
        return found

    return await run(request, who, work)


@routes.post("/deployment-updates/{deployment_id}/update/initiate")
async def initiate(deployment_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await _initiate(deployment_id, request, who)


@routes.put("/deployment-updates/{deployment_id}/update/initiate")
async def initiate_put(deployment_id: str, request: Request,
                       who: Caller = Depends(requiring("user"))) -> Response:
    """Older cloudify-rest-clients initiate with PUT."""
    return await _initiate(deployment_id, request, who)


@routes.post("/deployment-updates/{update_id}/update/finalize")
async def finalize(update_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """Kept for older clients: the update is already final (as on Cloudify's manager)."""
    return await run(request, who, lambda engine: engine.executions.updates.get(update_id))


@routes.get("/deployment-updates")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        row for _project, acting in engines_listed(request, who, engine, DEPLOYMENT_UPDATES)
        for row in acting.executions.updates.list()]))


@routes.get("/deployment-updates/{update_id}")
async def get(update_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, engine.executions.updates.get(update_id)))
