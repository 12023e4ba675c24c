"""Templates and types: validate, template versions and their functions, resource types,
a type's schema and a template generated from it."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api import inputs
from stoker.api.body import extract_bool, json_object
from stoker.api.context import Ctx, context, in_project_pool, reply
from stoker.api.errors import ApiError, bad_request, not_found
from stoker.errors import Problems, StokerError, ValidationFailed
from stoker.resources import attributes as attributes_mod
from stoker.resources.properties import AnyIndexDict
from stoker.template.definition import build_definition
from stoker.engine.nested_parameters import nested_parameters
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
    data = inputs.parse(body)
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
def _status(cls: Any) -> Any:
    return getattr(cls, "support_status", None)


@router.get("/resource_types", summary="List resource types")
def resource_types(ctx: Ctx = Depends(context)) -> Response:
    query = ctx.request.query_params
    name = query.get("name")
    status = query.get("support_status")
    version = query.get("version")
    with_description = extract_bool("with_description", query["with_description"]) \
        if query.get("with_description") is not None else False
    pattern = None
    if name:
        try:
            pattern = re.compile(name)
        except re.error:
            pattern = re.compile(re.escape(name))
    registry = ctx.engine.registry
    found = []
    for type_name in registry.types():
        cls = registry.get(type_name)
        support = _status(cls)
        if support is not None and getattr(support, "status", None) == "HIDDEN":
            continue
        if pattern is not None and not pattern.search(type_name):
            continue
        if status and (getattr(support, "status", "SUPPORTED") if support else "SUPPORTED") != status.upper():
            continue
        if version and (getattr(support, "version", None) if support else None) != version:
            continue
        found.append({"resource_type": type_name, "description": _summary(cls)} if with_description
                     else type_name)
    return reply({"resource_types": found})


def _type_class(ctx: Ctx, type_name: str) -> Any:
    try:
        return ctx.engine.registry.get(type_name)
    except StokerError:
        raise not_found(f"The Resource Type ({type_name}) could not be found.", "ResourceTypeNotFound") from None


def property_schema(schema: Any) -> dict:
    """One property as Heat's resource type schema shows it."""
    out: dict[str, Any] = {
        "type": schema.type.lower(),
        "description": schema.description or "",
        "required": bool(schema.required),
        "update_allowed": bool(schema.update_allowed),
        "immutable": bool(schema.immutable),
    }
    if schema.default is not None:
        out["default"] = schema.default
    if schema.constraints:
        out["constraints"] = [c.schema_dict() for c in schema.constraints]
    if schema.schema is not None:
        if isinstance(schema.schema, AnyIndexDict):
            out["schema"] = {"*": property_schema(schema.schema.value)}
        else:
            out["schema"] = {str(k): property_schema(v) for k, v in schema.schema.items()}
    return out


def _properties(cls: Any) -> dict:
    from stoker.resources.properties import schemata

    return {name: s for name, s in schemata(getattr(cls, "properties_schema", {}) or {}).items()
            if getattr(s, "implemented", True)}


def _attributes(cls: Any) -> dict:
    try:
        return cls.attribute_schemata()
    except AttributeError:
        return attributes_mod.schemata(getattr(cls, "attributes_schema", {}) or {})


@router.get("/resource_types/{type_name}", summary="A resource type's schema")
def resource_schema(type_name: str, ctx: Ctx = Depends(context)) -> Response:
    cls = _type_class(ctx, type_name)
    support = _status(cls)
    result = {
        "resource_type": type_name,
        "properties": {name: property_schema(s) for name, s in _properties(cls).items()},
        "attributes": {name: {"description": a.description or "", **({"type": a.type.lower()} if a.type else {})}
                       for name, a in _attributes(cls).items()},
        "support_status": support.to_dict() if support is not None else
        {"status": "SUPPORTED", "message": None, "version": None, "previous_status": None},
    }
    if ctx.request.query_params.get("with_description") and \
            extract_bool("with_description", ctx.request.query_params["with_description"]):
        result["description"] = (cls.__doc__ or "").strip()
    return reply(result)


#: property type -> HOT parameter type (for generated templates)
PARAMETER_TYPES = {"String": "string", "Integer": "number", "Number": "number", "Boolean": "boolean",
                   "Map": "json", "List": "comma_delimited_list", "Any": "json"}
CFN_TYPES = {"String": "String", "Integer": "Number", "Number": "Number", "Boolean": "String",
             "Map": "Json", "List": "CommaDelimitedList", "Any": "Json"}


def _parameter_type(schema: Any) -> str:
    kind = PARAMETER_TYPES.get(schema.type, "string")
    if kind == "comma_delimited_list" and schema.schema is not None:
        items = schema.schema.value if isinstance(schema.schema, AnyIndexDict) else None
        if items is None or items.type != "String":
            return "json"
    return kind


@router.get("/resource_types/{type_name}/template", summary="A template using a resource type")
def resource_type_template(type_name: str, ctx: Ctx = Depends(context)) -> Response:
    cls = _type_class(ctx, type_name)
    kind = ctx.request.query_params.get("template_type") or "cfn"
    if kind not in ("cfn", "hot"):
        raise bad_request(f"Template type is not supported: Invalid template type \"{kind}\", "
                          "valid types are: cfn, hot.")
    resource_name = type_name.split("::")[-1] or type_name
    properties = _properties(cls)
    attrs = _attributes(cls)
    if kind == "hot":
        params = {}
        for name, schema in properties.items():
            entry: dict[str, Any] = {"type": _parameter_type(schema),
                                     "description": schema.description or ""}
            if schema.default is not None:
                entry["default"] = schema.default
            if schema.constraints:
                entry["constraints"] = [c.schema_dict() for c in schema.constraints]
            params[name] = entry
        template = {
            "heat_template_version": "2016-10-14",
            "description": f"Initial template of {resource_name}",
            "parameters": params,
            "resources": {resource_name: {"type": type_name,
                                          "properties": {n: {"get_param": n} for n in properties}}},
            "outputs": {name: {"description": a.description or "",
                               "value": {"get_attr": [resource_name, name]}} for name, a in attrs.items()},
        }
        template["outputs"]["OS::stack_id"] = {"value": {"get_resource": resource_name}}
        return reply(template)
    params = {}
    for name, schema in properties.items():
        entry = {"Type": CFN_TYPES.get(schema.type, "String"), "Description": schema.description or ""}
        if schema.default is not None:
            entry["Default"] = schema.default
        params[name] = entry
    template = {
        "HeatTemplateFormatVersion": "2012-12-12",
        "Description": f"Initial template of {resource_name}",
        "Parameters": params,
        "Resources": {resource_name: {"Type": type_name, "Properties": {n: {"Ref": n} for n in properties}}},
        "Outputs": {name: {"Description": a.description or "", "Value": {"Fn::GetAtt": [resource_name, name]}}
                    for name, a in attrs.items() if name != attributes_mod.SHOW},
    }
    return reply(template)


__all__ = ["router", "ApiError"]
