"""``/deployment-groups`` (``cfy deployments groups ...``) and ``/execution-groups`` (``cfy executions
groups ...``): a workflow run on every deployment of a group, ``concurrency`` executions at a time.

An execution group's start answers once its executions are stored; they run in the tenant's action pool
(or on the workers with a broker), the next starting as one ends.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes.executions import _refuse_scripts
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.error_bodies import ApiError
from stoker.blueprint.deployment_groups import DeploymentGroups
from stoker.blueprint.filter_rules import BadFilterRule
from stoker.store.group_tables import DEPLOYMENT_GROUPS, EXECUTION_GROUPS
from stoker.workflows.execution_groups import DEFAULT_CONCURRENCY, ExecutionGroups, MissingWorkflow
from stoker.workflows.parameters import given_flag

routes = router("groups")

#: what a deployment group's PUT may hold (Cloudify's, less its restore-only fields)
GROUP_FIELDS = {"description", "visibility", "labels", "blueprint_id", "default_inputs", "filter_id", "filter_rules",
                "deployment_ids", "new_deployments", "deployments_from_group"}
#: the actions ``POST /execution-groups/<id>`` takes
GROUP_ACTIONS = ("cancel", "force-cancel", "kill", "resume", "force-resume")


def _deployment_groups(engine: Any, who: Caller) -> DeploymentGroups:
    return DeploymentGroups(engine.blueprints.deployments, who.user)


def _shown(item: dict, project: str) -> dict:
    return {**views.common(project), **item}


def checked_rules(work: Any) -> Any:
    """``work()``, a malformed filter rule answered as the manager answers it."""
    try:
        return work()
    except BadFilterRule as exc:
        raise ApiError(400, str(exc), "invalid_filter_rule") from None


# -- deployment groups --------------------------------------------------------------------------------
@routes.get("/deployment-groups")
async def list_deployment_groups(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _shown(group, project) for project, acting in engines_listed(request, who, engine, DEPLOYMENT_GROUPS)
        for group in _deployment_groups(acting, who).list()]))


@routes.get("/deployment-groups/{group_id}")
async def get_deployment_group(group_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(
        request, _shown(_deployment_groups(engine, who).get(group_id), who.project)))


@routes.put("/deployment-groups/{group_id}")
async def put_deployment_group(group_id: str, request: Request,
                               who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict) or set(body) - GROUP_FIELDS:
        raise bad(f"a deployment group takes {', '.join(sorted(GROUP_FIELDS))}")
    return await run(request, who, lambda engine: checked_rules(
        lambda: _shown(_deployment_groups(engine, who).put(group_id, body), who.project)))


@routes.patch("/deployment-groups/{group_id}")
async def change_deployment_group(group_id: str, request: Request,
                                  who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict) or not set(body) <= {"add", "remove"} \
            or not all(isinstance(body.get(k) or {}, dict) for k in ("add", "remove")):
        raise bad("send {\"add\": {...}} or {\"remove\": {...}} (deployment_ids, filter_rules, deployments_from_group)")
    return await run(request, who, lambda engine: checked_rules(lambda: _shown(
        _deployment_groups(engine, who).change(group_id, body.get("add"), body.get("remove")), who.project)))


@routes.delete("/deployment-groups/{group_id}")
async def delete_deployment_group(group_id: str, request: Request,
                                  who: Caller = Depends(requiring("user"))) -> Response:
    delete_deployments = request.query_params.get("delete_deployments", "").lower() == "true"
    return await run(request, who, lambda engine: _deployment_groups(engine, who).delete(group_id, delete_deployments))


# -- execution groups ---------------------------------------------------------------------------------
def _execution_groups(request: Request, who: Caller, engine: Any) -> ExecutionGroups:
    """The tenant's execution groups; what they start runs in the tenant's action pool."""
    executions = engine.executions
    executions.stopping = engine.stopping  # the server stopping cancels them (resumable), not waits for them
    executions.submit = request.app.state.stoker.runner.submitter(who.project)
    return ExecutionGroups(executions)


def _concurrency(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad(f"concurrency must be a nonnegative number, but got: {value}")
    return value


@routes.get("/execution-groups")
async def list_execution_groups(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _shown(group, project) for project, acting in engines_listed(request, who, engine, EXECUTION_GROUPS)
        for group in ExecutionGroups(acting.executions).list()]))


@routes.get("/execution-groups/{group_id}")
async def get_execution_group(group_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(
        request, _shown(_execution_groups(request, who, engine).get(group_id), who.project)))


@routes.post("/execution-groups")
async def start_execution_group(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("deployment_group_id"), str) \
            or not isinstance(body.get("workflow_id"), str):
        raise bad("send {\"deployment_group_id\": ..., \"workflow_id\": ..., \"default_parameters\": {...}}")
    concurrency = _concurrency(body.get("concurrency", DEFAULT_CONCURRENCY))
    for name in ("default_parameters", "parameters"):
        if not isinstance(body.get(name) or {}, dict):
            raise bad(f"{name} must be a map")

    def work(engine):
        groups = _execution_groups(request, who, engine)
        for deployment_id in _deployment_groups(engine, who).get(body["deployment_group_id"])["deployment_ids"]:
            _refuse_scripts(request, who, engine, deployment_id)
        try:
            started = groups.start(body["deployment_group_id"], body["workflow_id"], body.get("default_parameters"),
                                   body.get("parameters"), concurrency, given_flag(body, "force"), who.user)
        except MissingWorkflow as exc:
            raise ApiError(400, str(exc), "nonexistent_workflow_error") from None
        return _shown(started, who.project)

    return await run(request, who, work)


@routes.post("/execution-groups/{group_id}")
async def act_on_execution_group(group_id: str, request: Request,
                                 who: Caller = Depends(requiring("user"))) -> Response:
    body = await json_body(request)
    action = body.get("action") if isinstance(body, dict) else None
    if action not in GROUP_ACTIONS:
        raise bad(f"Invalid action: {action}, Valid action values are: {list(GROUP_ACTIONS)}")

    def work(engine):
        groups = _execution_groups(request, who, engine)
        if action.endswith("resume"):
            for execution_id in groups.execution_ids(group_id):
                _refuse_scripts(request, who, engine, engine.executions.get(execution_id)["deployment_id"])
            return _shown(groups.resume(group_id), who.project)
        return _shown(groups.cancel(group_id, force=action != "cancel"), who.project)

    return await run(request, who, work)


@routes.patch("/execution-groups/{group_id}")
async def change_execution_group(group_id: str, request: Request,
                                 who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy executions groups set-concurrency``, ``set-success-group`` and ``set-failure-group``."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send a mapping of concurrency, success_group_id and failure_group_id")
    concurrency = None if body.get("concurrency") is None else _concurrency(body["concurrency"])
    targets = [body.get(key) for key in ("success_group_id", "failure_group_id")]
    for key, target in zip(("success_group_id", "failure_group_id"), targets):
        if target is not None and not isinstance(target, str):
            raise bad(f"{key} must be a deployment group id, but got: {target!r}")

    def work(engine):
        groups = _execution_groups(request, who, engine)
        if any(targets):
            groups.set_targets(group_id, *targets)
        if concurrency is not None:
            groups.set_concurrency(group_id, concurrency)
        return _shown(groups.get(group_id), who.project)

    return await run(request, who, work)
