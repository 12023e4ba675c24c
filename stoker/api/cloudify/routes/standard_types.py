"""``/resources/...``: Stoker's built-in standard types where a manager's file server keeps its types.yaml.

``cfy blueprints validate`` parses on the client with dsl-parser and fetches the
types a blueprint imports: ``cloudify/types/types.yaml`` from the manager's
``/resources/cloudify/types/`` (``types_1_4.yaml`` first for a 1_4 blueprint), a
``cloudify.co/spec/cloudify/VERSION/types.yaml`` URL wherever cfy's import rules
point it (``/resources/spec/cloudify/VERSION/types.yaml`` here). What is served is
the definition Stoker's own parser uses, in the form dsl-parser accepts: the
scaling policy (built into dsl-parser) left out, and for DSL 1_3 the typed ids
of 1_4 read as strings. These files are public, as on a manager: no login.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml
from fastapi import APIRouter
from fastapi.responses import Response

from stoker.api.cloudify.routing import CloudifyRoute
from stoker.api.error_bodies import ApiError
from stoker.blueprint.loader import BUILTIN_TYPES

routes = APIRouter(prefix="/resources", route_class=CloudifyRoute, tags=["cloudify: standard types"])
#: property types dsl-parser knows from DSL 1_4 on
_TYPES_SINCE_1_4 = {"deployment_id", "blueprint_id", "secret_key", "capability_value", "scaling_group", "node_id",
                    "node_type", "node_instance", "operation_name", "deployment_name", "string_list"}
_FILE = re.compile(r"^types(?:_(1_[3-5]))?\.yaml$")


def _as_1_3(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "string" if k == "type" and v in _TYPES_SINCE_1_4 else _as_1_3(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_1_3(item) for item in value]
    return value


@functools.lru_cache(maxsize=4)
def types_text(dsl_version: str) -> str:
    """The standard types for a blueprint of ``cloudify_dsl_<dsl_version>``, as YAML text."""
    definition = yaml.safe_load(BUILTIN_TYPES.read_text(encoding="utf-8"))
    policies = definition.get("policy_types") or {}
    policies.pop("cloudify.policies.scaling", None)
    if not policies:
        definition.pop("policy_types", None)
    if dsl_version == "1_3":
        definition = _as_1_3(definition)
    definition["tosca_definitions_version"] = f"cloudify_dsl_{dsl_version}"
    return yaml.safe_dump(definition, sort_keys=False)


def _served(name: str) -> Response:
    found = _FILE.match(name)
    if found is None:
        raise ApiError(404, f"{name} is not served: only Cloudify's standard types (types.yaml, types_1_3.yaml, "
                       "types_1_4.yaml) are", "not_found_error")
    return Response(types_text(found.group(1) or "1_4"), media_type="application/yaml")  # as Cloudify's


@routes.get("/cloudify/types/{name}")
def manager_types(name: str) -> Response:
    return _served(name)


@routes.get("/spec/cloudify/{version}/{name}")
def spec_types(version: str, name: str) -> Response:
    return _served(name)
