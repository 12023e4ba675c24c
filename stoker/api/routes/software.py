"""``/software_configs`` and ``/software_deployments`` (with ``/metadata/{server_id}``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api.body import extract_int, json_object
from stoker.api.request_context import Ctx, context, empty, reply
from stoker.api.error_bodies import bad_request
from stoker.store.software import outcome

router = APIRouter(prefix="/v1/{tenant_id}", tags=["software"])

CONFIG_KEYS = ("name", "group", "config", "inputs", "outputs", "options")
DEPLOYMENT_STATUSES = ("IN_PROGRESS", "COMPLETE", "FAILED")


def _io_list(body: dict, key: str) -> list:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) and isinstance(v.get("name"), str)
                                              for v in value):
        raise bad_request(f"{key} must be a list of maps, each with a name")
    return value


@router.get("/software_configs", summary="List software configs")
def list_configs(ctx: Ctx = Depends(context)) -> Response:
    query = ctx.request.query_params
    limit = extract_int("limit", query.get("limit")) if query.get("limit") else None
    configs = ctx.state.software.list_configs(ctx.project, limit, query.get("marker") or None)
    return reply({"software_configs": configs})


@router.post("/software_configs", summary="Create a software config")
def create_config(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    unknown = set(body) - set(CONFIG_KEYS)
    if unknown:
        raise bad_request(f"Unknown keys in software config: {sorted(unknown)}")
    name = body.get("name")
    group = body.get("group") or "Heat::Ungrouped"
    if (name is not None and not isinstance(name, str)) or not isinstance(group, str):
        raise bad_request("name and group must be strings")
    config = ctx.state.software.create_config(ctx.project, name, group, body.get("config"),
                                              _io_list(body, "inputs"), _io_list(body, "outputs"),
                                              body.get("options"))
    return reply({"software_config": config})


@router.get("/software_configs/{config_id}", summary="Show a software config")
def show_config(config_id: str, ctx: Ctx = Depends(context)) -> Response:
    return reply({"software_config": ctx.state.software.get_config(ctx.project, config_id)})


@router.delete("/software_configs/{config_id}", status_code=204, summary="Delete a software config")
def delete_config(config_id: str, ctx: Ctx = Depends(context)) -> Response:
    ctx.state.software.delete_config(ctx.project, config_id)
    return empty(204)


def _deployment_fields(body: dict, creating: bool) -> dict[str, Any]:
    allowed = {"config_id", "server_id", "input_values", "output_values", "action", "status",
               "status_reason", "stack_user_project_id", "id"}
    unknown = set(body) - allowed
    if unknown:
        raise bad_request(f"Unknown keys in software deployment: {sorted(unknown)}")
    if creating:
        for key in ("config_id", "server_id"):
            if not isinstance(body.get(key), str) or not body[key]:
                raise bad_request(f"{key} is required")
    for key in ("input_values", "output_values"):
        if body.get(key) is not None and not isinstance(body[key], dict):
            raise bad_request(f"{key} must be a map")
    if body.get("status") is not None and body["status"] not in DEPLOYMENT_STATUSES:
        raise bad_request(f"status must be one of {', '.join(DEPLOYMENT_STATUSES)}")
    return dict(body)


@router.get("/software_deployments", summary="List software deployments")
def list_deployments(ctx: Ctx = Depends(context)) -> Response:
    server_id = ctx.request.query_params.get("server_id")
    return reply({"software_deployments": ctx.state.software.list_deployments(ctx.project, server_id)})


@router.get("/software_deployments/metadata/{server_id}", summary="A server's deployment metadata")
def deployment_metadata(server_id: str, ctx: Ctx = Depends(context)) -> Response:
    return reply({"metadata": ctx.state.software.metadata(ctx.project, server_id)})


@router.post("/software_deployments", summary="Create a software deployment")
def create_deployment(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    deployment = ctx.state.software.create_deployment(ctx.project, _deployment_fields(body, True))
    return reply({"software_deployment": deployment})


@router.get("/software_deployments/{deployment_id}", summary="Show a software deployment")
def show_deployment(deployment_id: str, ctx: Ctx = Depends(context)) -> Response:
    return reply({"software_deployment": ctx.state.software.get_deployment(ctx.project, deployment_id)})


@router.put("/software_deployments/{deployment_id}", summary="Update a software deployment")
def update_deployment(deployment_id: str, ctx: Ctx = Depends(context),
                      body: dict = Depends(json_object)) -> Response:
    fields = _deployment_fields(body, False)
    output_values = fields.get("output_values") or {}
    if "deploy_status_code" in output_values and fields.get("status") is None:
        # as Heat: the agent's exit code decides the deployment's status
        status, reason = outcome(output_values)
        fields["status"] = status
        fields["status_reason"] = fields.get("status_reason") or reason
    deployment = ctx.state.software.update_deployment(ctx.project, deployment_id, fields)
    return reply({"software_deployment": deployment})


@router.delete("/software_deployments/{deployment_id}", status_code=204, summary="Delete a software deployment")
def delete_deployment(deployment_id: str, ctx: Ctx = Depends(context)) -> Response:
    ctx.state.software.delete_deployment(ctx.project, deployment_id)
    return empty(204)
