"""Templates and types: validate, template versions and their functions, resource types,
a type's schema and a template generated from it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api import stack_request
from stoker.api.body import extract_bool, json_object
from stoker.api.request_context import Ctx, context, in_project_pool, reply
from stoker.api.error_bodies import ApiError, bad_request, not_found
from stoker.errors import Problems, StokerError, ValidationFailed
from stoker.resources import type_info
from stoker.template.definition import build_definition
from stoker.engine.nested_parameters import nested_parameters
from stoker.engine.type_checks import type_refusal
from stoker.resources.openstack import inventory
from stoker.template.environment import Environment
from stoker.template.versions import find_version, function_rows, listed_versions

router = APIRouter(prefix="/v1/{tenant_id}", tags=["templates"])



# -- validate ---------------------------------------------------------------------------
@router.post("/validate", summary="Validate a template")
@in_project_pool
def validate(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    query = ctx.request.query_params
    ignored = {c.strip() for c in (query.get("ignore_errors") or "").split(",") if c.strip()}
    show_nested = bool(query.get("show_nested")) and extract_bool("show_nested", query["show_nested"])
    data = stack_request.parse(body)
    template, environment = data.template, data.environment or Environment()
    declared = template.section("parameters")
    declared = set(declared) if isinstance(declared, dict) else set()
    values = environment.parameter_values(declared)
    values.update(data.parameters)
    given = {**environment.parameters, **data.parameters}  # Heat's user values: not parameter_defaults
    try:
        definition = ctx.engine.validate_template(template, environment, data.parameters,
                                                  missing_parameters_ok=True, at_validate=True)
    except ValidationFailed as exc:
        errors = [p for p in exc.problems if p.code not in ignored]
        if errors:
            raise ValidationFailed(errors) from None
        definition = build_definition(template, values, problems=Problems(), missing_parameters_ok=True)
        if definition is None:
            raise
    result: dict[str, Any] = {
        "Description": template.description,
        "Parameters": {name: _with_value(schema.as_validate_output(mask_hidden=False), given.get(name))
                       for name, schema in definition.parameter_schemas.items()},
    }
    groups = template.section("parameter_groups")
    if groups:
        result["ParameterGroups"] = groups
    if show_nested:
        nested = nested_parameters(ctx.engine, template, environment, values)
        if nested:
            result["NestedParameters"] = nested
    result["Environment"] = _environment_view(environment, definition, given)
    return reply(result)


def _with_value(shown: dict, given: Any) -> dict:
    """Heat adds the user's value (the environment's or the request's), when there is one."""
    if given not in (None, "", [], {}):
        shown["Value"] = given
    return shown


def _environment_view(environment: Environment, definition: Any, given: dict) -> dict:
    """The environment in the shape Heat's validate gives it (its user environment): the
    registry always has ``resources``, an entry of its own for each template file a resource
    names as its type (Heat registers them as it looks them up), the request's parameters merged
    into ``parameters`` (``given``), and no section but these four."""
    view = environment.as_dict()
    registry = {"resources": {}, **(view.get("resource_registry") or {})}
    for resource in definition.resources.values():
        if isinstance(resource.type, str) and resource.type.endswith((".yaml", ".template")) \
                and not definition.switched_off(resource):
            registry.setdefault(resource.type, resource.type)
    return {"parameters": given,
            "parameter_defaults": view.get("parameter_defaults") or {},
            "resource_registry": registry,
            "event_sinks": view.get("event_sinks") or []}


# -- template versions --------------------------------------------------------------------
@router.get("/template_versions", summary="List template versions")
def template_versions(ctx: Ctx = Depends(context)) -> Response:
    return reply({"template_versions": listed_versions()})


@router.get("/template_versions/{template_version}/functions", summary="List a version's functions")
def template_functions(template_version: str, ctx: Ctx = Depends(context)) -> Response:
    version = find_version(template_version)
    if version is None:
        raise not_found(f"Template with version {template_version} not found", "NotFound")
    value = ctx.request.query_params.get("with_condition_func")
    with_conditions = extract_bool("with_condition_func", value) if value is not None else False
    return reply({"template_functions": function_rows(version, with_conditions)})


# -- resource types ---------------------------------------------------------------------
def _flag(ctx: Ctx, name: str) -> bool:
    value = ctx.request.query_params.get(name)
    return extract_bool(name, value) if value is not None else False


@router.get("/resource_types", summary="List resource types")
def resource_types(ctx: Ctx = Depends(context)) -> Response:
    query = ctx.request.query_params
    def usable(type_name: str, cls: type) -> bool:
        return type_refusal(ctx.engine, (type_name,), cls) is None and inventory.unavailable(cls, type_name) is None

    return reply({"resource_types": type_info.list_types(
        ctx.engine.registry, name=query.get("name"), support_status=query.get("support_status"),
        version=query.get("version"), with_description=_flag(ctx, "with_description"), usable=usable)})


def _type_class(ctx: Ctx, type_name: str) -> Any:
    try:
        return ctx.engine.registry.get(type_name)
    except StokerError:
        raise not_found(f"The Resource Type ({type_name}) could not be found.", "ResourceTypeNotFound") from None


@router.get("/resource_types/{type_name}", summary="A resource type's schema")
def resource_schema(type_name: str, ctx: Ctx = Depends(context)) -> Response:
    return reply(type_info.type_schema(_type_class(ctx, type_name), type_name, _flag(ctx, "with_description")))


@router.get("/resource_types/{type_name}/template", summary="A template using a resource type")
def resource_type_template(type_name: str, ctx: Ctx = Depends(context)) -> Response:
    cls = _type_class(ctx, type_name)
    kind = ctx.request.query_params.get("template_type") or "cfn"
    if kind not in type_info.TEMPLATE_TYPES:
        raise bad_request(f"Template type is not supported: Invalid template type \"{kind}\", "
                          "valid types are: cfn, hot.")
    return reply(type_info.type_template(cls, type_name, kind))


__all__ = ["router", "ApiError"]
