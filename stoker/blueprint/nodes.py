"""Node templates: typed properties, operations, relationships and scaling settings."""

from __future__ import annotations

import copy
from typing import Any

from stoker.blueprint import namespaces
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.functions.base import function_of
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.blueprint.values import schema_default, typed_value
from stoker.errors import Problems

BASE_RELATIONSHIPS = ("cloudify.relationships.depends_on", "cloudify.relationships.contained_in",
                      "cloudify.relationships.connected_to")
CONTAINED_IN = "cloudify.relationships.contained_in"
NODE_KEYS = {"type", "properties", "interfaces", "relationships", "capabilities", "instances", "description"}
RELATIONSHIP_KEYS = {"type", "target", "properties", "source_interfaces", "target_interfaces"}
OPERATION_KEYS = {"implementation", "inputs", "executor", "max_retries", "retry_interval", "timeout",
                  "timeout_recoverable"}
SCRIPT_PLUGIN = "script"
SCRIPT_TASK = "script.script_runner.tasks.run"
#: the script runner's inputs naming the script: a path beside the blueprint, or the script itself
SCRIPT_INPUTS = ("script_path", "script_source")


def typed_properties(owner: tuple, given: Any, schema: dict, data_types: dict, problems: Problems) -> dict:
    """Template properties checked against the schema, with defaults filled in."""
    given = given if isinstance(given, dict) else {}
    result = {}
    for name, value in given.items():
        if name not in schema:
            problems.add(owner + (name,), "unknown-property", f"'{name}' is not a property of this type")
            continue
        result[name] = _checked(owner + (name,), value, schema[name], data_types, problems)
    external = given.get("use_external_resource", _default_of(schema.get("use_external_resource")))
    if function_of(external, FUNCTIONS):  # it decides which properties are required: known when parsing
        problems.add(owner + ("use_external_resource",), "function-not-permitted",
                     "Only boolean values are allowed for `use_external_resource` property, don't use "
                     "intrinsic functions.")
    for name, definition in schema.items():
        if name in result:
            continue
        has_default, default = schema_default(definition, data_types)
        if "default" in definition or has_default:
            result[name] = _checked(owner + (name,), copy.deepcopy(default), definition, data_types, problems)
        elif definition.get("required", True) and not external:
            # an existing resource needs only what finds it: Cloudify waives the rest
            problems.add(owner, "missing-property", f"required property '{name}' is not given")
    return result


def _default_of(definition: Any) -> Any:
    return definition.get("default") if isinstance(definition, dict) else None


def _checked(place: tuple, value: Any, definition: dict, data_types: dict, problems: Problems) -> Any:
    if function_of(value, FUNCTIONS):
        return value  # checked when known, as in Cloudify: not at all
    try:
        return typed_value(value, definition.get("type"), data_types, f"property '{place[-1]}'")
    except BlueprintError as exc:
        problems.add(place, exc.code, exc.message)
        return value


def operations(place: tuple, type_interfaces: dict, own: Any, plugins: dict, problems: Problems,
               where: str = "") -> dict:
    """``{"interface.operation": {implementation, inputs, ...}}``: the type's operations overridden by own
    (``where``: whose they are, in Cloudify's words, for its refusals)."""
    merged = {name: dict(ops) for name, ops in type_interfaces.items()}
    if own is not None and not isinstance(own, dict):
        problems.add(place, "invalid-interfaces", "interfaces must be a mapping")
        own = {}
    for name, ops in (own or {}).items():
        if not isinstance(ops, dict):
            problems.add(place + (name,), "invalid-interfaces", "an interface is a mapping of operations")
            continue
        for op, definition in ops.items():
            merged.setdefault(name, {})[op] = _override(merged.get(name, {}).get(op), definition)
    result = {}
    for name, ops in merged.items():
        for op, definition in ops.items():
            operation = _operation(place + (name, op), definition, plugins, problems,
                                   f"In interface '{name}' {where}")
            if operation is not None:
                result[f"{name}.{op}"] = operation
    return result


def _override(base: Any, own: Any) -> Any:
    """A template's operation over its type's: without an implementation it keeps the type's."""
    if not isinstance(own, dict) or own.get("implementation") or not isinstance(base, (dict, str)):
        return {"__template__": True, **own} if isinstance(own, dict) else own
    base = {"implementation": base} if isinstance(base, str) else base
    inputs = {k: (v.get("default") if isinstance(v, dict) and "default" in v else v)
              for k, v in (base.get("inputs") or {}).items()}
    inputs.update(own.get("inputs") or {})
    return {**base, **own, "inputs": inputs, "__template__": True}


def _operation(place: tuple, definition: Any, plugins: dict, problems: Problems, where: str) -> dict | None:
    if not definition:
        return None  # declared only (as most of the standard lifecycle is): nothing to run
    if isinstance(definition, str):
        definition = {"implementation": definition}
    if not isinstance(definition, dict):
        problems.add(place, "invalid-operation", "an operation is a string or a mapping")
        return None
    from_template = definition.pop("__template__", False)
    problems.unknown_keys(place, definition, OPERATION_KEYS, " in an operation")
    inputs = definition.get("inputs") or {}
    implementation = definition.get("implementation") or ""
    if not implementation and not inputs:
        return None
    if not from_template:  # a type's inputs are schemas: their defaults are the values
        inputs = {k: (v.get("default") if isinstance(v, dict) else v) for k, v in inputs.items()}
    inline = isinstance(implementation, str) and "\n" in implementation.strip()
    plugin = _plugin_of(place, implementation, plugins, problems, where) if not inline else ""
    if plugin is None:
        return None
    operation = {"implementation": implementation, "inputs": copy.deepcopy(inputs) if inputs else {},
                 "executor": definition.get("executor"), "max_retries": definition.get("max_retries"),
                 "retry_interval": definition.get("retry_interval"), "timeout": definition.get("timeout"),
                 "plugin": plugin if plugin in plugins else None}
    if operation["plugin"] and not operation["executor"]:  # dsl_parser's: the plugin's
        operation["executor"] = plugins[plugin].get("executor") if isinstance(plugins[plugin], dict) else None
    if implementation and plugin not in plugins:  # a script beside the blueprint, or written in place
        given = [name for name in SCRIPT_INPUTS if isinstance(operation["inputs"], dict)
                 and name in operation["inputs"]]
        if given:  # Cloudify's error 60
            problems.add(place + ("inputs", given[0]), "script-input-given",
                         f"Cannot define '{given[0]}' property in an operation whose implementation is a script")
        operation["plugin"] = SCRIPT_PLUGIN
        operation["implementation"] = SCRIPT_TASK
        operation["executor"] = operation["executor"] or "auto"
        if isinstance(operation["inputs"], dict):
            operation["inputs"] = {**operation["inputs"], SCRIPT_INPUTS[inline]: implementation}
    return operation


def _plugin_of(place: tuple, implementation: Any, plugins: dict, problems: Problems, where: str) -> str | None:
    """The plugin ``plugin.module.task`` names, as dsl_parser finds it (the plugin whose name and a dot
    begin it); "" for none. A namespaced mapping naming no plugin is refused (None): it can only be its
    namespace's plugin (``namespaces``), never a script."""
    if not isinstance(implementation, str):
        return ""
    candidates = [name for name in plugins if implementation.startswith(f"{name}.")]
    if len(candidates) > 1:  # Cloudify's error 91
        problems.add(place, "ambiguous-operation", f"Ambiguous operation mapping. [operation={place[-1]}, "
                                                   f"plugins={candidates}]")
    if candidates:
        return candidates[0]
    namespace, rest = namespaces.split(implementation)
    if namespace is not None and "." in rest and not namespaces.is_script(rest):  # Cloudify's error 10/19
        problems.add(place, "unknown-plugin", "Could not extract plugin or a script resource is not found from "
                     f"operation mapping/script-path '{implementation}', which is declared for operation "
                     f"'{place[-1]}'.{where}")
        return None
    return implementation.split(".", 1)[0] if "." in implementation else ""


def relationships(place: tuple, own: Any, names: set, rel_types: dict, plugins: dict,
                  data_types: dict, problems: Problems) -> list[dict]:
    if own is None:
        return []
    if not isinstance(own, list):
        problems.add(place, "invalid-relationships", "relationships must be a list")
        return []
    result = []
    for index, rel in enumerate(own):
        where = place + (index,)
        if not isinstance(rel, dict):
            problems.add(where, "invalid-relationship", "a relationship is a mapping with type and target")
            continue
        problems.unknown_keys(where, rel, RELATIONSHIP_KEYS, " in a relationship")
        rel_type, target = rel.get("type"), rel.get("target")
        flat = rel_types.get(rel_type)
        if flat is None:
            problems.add(where + ("type",), "unknown-type", f"relationship type '{rel_type}' is not defined")
            continue
        if not any(base in flat["hierarchy"] for base in BASE_RELATIONSHIPS):
            problems.add(where + ("type",), "unsupported-relationship",
                         f"relationship type '{rel_type}' must derive from one of {', '.join(BASE_RELATIONSHIPS)}")
            continue
        if target not in names:
            problems.add(where + ("target",), "unknown-target", f"relationship target '{target}' is not a node")
            continue
        whose = f"in relationship of type '{rel_type}' in node '{place[1]}'"  # the target side's: the target's
        result.append({
            "type": rel_type, "target_id": target, "type_hierarchy": flat["hierarchy"],
            "properties": typed_properties(where + ("properties",), rel.get("properties"), flat["properties"],
                                           data_types, problems),
            "source_operations": operations(where + ("source_interfaces",), flat["source_interfaces"],
                                            rel.get("source_interfaces"), plugins, problems, whose),
            "target_operations": operations(where + ("target_interfaces",), flat["target_interfaces"],
                                            rel.get("target_interfaces"), plugins, problems,
                                            f"in relationship of type '{rel_type}' in node '{target}'"),
        })
    return result


def scalable(place: tuple, template: dict, problems: Problems) -> dict:
    """``default_instances``/``min_instances``/``max_instances`` (``instances.deploy`` is the old spelling)."""
    properties = {"default_instances": 1, "min_instances": 0, "max_instances": -1}
    deploy = (template.get("instances") or {}).get("deploy") if isinstance(template.get("instances"), dict) else None
    if deploy is not None:
        properties["default_instances"] = deploy
    capabilities = template.get("capabilities") or {}
    given = ((capabilities.get("scalable") or {}).get("properties") or {}) if isinstance(capabilities, dict) else {}
    for key, value in given.items():
        if key not in properties:
            problems.add(place + ("capabilities", "scalable", "properties", key), "unknown-key",
                         f"unknown scaling property '{key}'")
        else:
            properties[key] = value
    return properties


def check_counts(where: str, properties: dict) -> None:
    """Scaling numbers, once they are known (they may come from inputs)."""
    default, low, high = (properties.get(k) for k in ("default_instances", "min_instances", "max_instances"))
    for key, value in (("default_instances", default), ("min_instances", low), ("max_instances", high)):
        if function_of(value, FUNCTIONS):
            return
        if not isinstance(value, int) or isinstance(value, bool) or (value < 0 and key != "max_instances"):
            raise BlueprintError(f"{key} must be a non-negative integer, not {value!r}", where, code="invalid-scaling")
    if high != -1 and default > high:
        raise BlueprintError(f"default_instances ({default}) cannot be greater than max_instances ({high})", where,
                             code="invalid-scaling")
    if default < low:
        raise BlueprintError(f"default_instances ({default}) cannot be less than min_instances ({low})", where,
                             code="invalid-scaling")
