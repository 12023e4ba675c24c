"""CloudFormation-format templates (``AWSTemplateFormatVersion`` / ``HeatTemplateFormatVersion``)
read in HOT's shape.

Heat runs both formats; so that every later step (parameters, conditions,
resources, outputs) has one shape to read, a CFN template's sections and keys
are renamed here to their HOT names (``Resources`` -> ``resources``, ``Type``
-> ``type``, ``NoEcho`` -> ``hidden``, ``MinLength`` -> a ``length``
constraint...).  Function calls are left as written: the version's function
table (template/versions.py) knows ``Ref``, ``Fn::GetAtt`` and the rest.
Keys this module does not know are kept as they are, so the usual checks
report them with their own name.
"""

from __future__ import annotations

from typing import Any

SECTIONS = {"Description": "description", "Mappings": "mappings", "Parameters": "parameters",
            "Resources": "resources", "Outputs": "outputs", "Conditions": "conditions"}
RESOURCE_KEYS = {"Type": "type", "Properties": "properties", "Metadata": "metadata",
                 "DependsOn": "depends_on", "DeletionPolicy": "deletion_policy",
                 "UpdatePolicy": "update_policy", "Description": "description",
                 "Condition": "condition"}
OUTPUT_KEYS = {"Value": "value", "Description": "description", "Condition": "condition"}
PARAMETER_TYPES = {"String": "string", "Number": "number", "CommaDelimitedList": "comma_delimited_list",
                   "Json": "json", "Boolean": "boolean"}
_PLAIN_PARAMETER_KEYS = {"Type": "type", "Default": "default", "Description": "description",
                         "Label": "label", "NoEcho": "hidden", "Immutable": "immutable"}
_CONSTRAINT_KEYS = ("AllowedValues", "AllowedPattern", "MinLength", "MaxLength", "MinValue",
                    "MaxValue", "ConstraintDescription")


def to_hot(data: dict, format_key: str) -> dict:
    """The template ``data`` with HOT section and key names (a new dict; ``data`` is untouched)."""
    hot: dict[str, Any] = {}
    for key, value in data.items():
        if key == format_key:
            continue
        name = SECTIONS.get(key, key)
        if name == "parameters" and isinstance(value, dict):
            value = {n: parameter(p) for n, p in value.items()}
        elif name == "resources" and isinstance(value, dict):
            value = {n: _renamed(r, RESOURCE_KEYS) for n, r in value.items()}
        elif name == "outputs" and isinstance(value, dict):
            value = {n: _renamed(o, OUTPUT_KEYS) for n, o in value.items()}
        hot[name] = value
    return hot


def _renamed(entry: Any, names: dict[str, str]) -> Any:
    if not isinstance(entry, dict):
        return entry
    return {names.get(key, key): value for key, value in entry.items()}


def parameter(schema: Any) -> Any:
    """One CFN parameter declaration as a HOT one."""
    if not isinstance(schema, dict):
        return schema
    hot: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _CONSTRAINT_KEYS:
            continue
        name = _PLAIN_PARAMETER_KEYS.get(key, key)
        if name == "type":
            value = PARAMETER_TYPES.get(value, value) if isinstance(value, str) else value
        elif name == "hidden" and isinstance(value, str):
            value = value.strip().lower() == "true"
        hot[name] = value
    constraints = _constraints(schema)
    if constraints:
        hot["constraints"] = constraints
    return hot


def _constraints(schema: dict) -> list[dict]:
    found: list[dict] = []
    if "AllowedValues" in schema:
        found.append({"allowed_values": schema["AllowedValues"]})
    if "AllowedPattern" in schema:
        found.append({"allowed_pattern": schema["AllowedPattern"]})
    for kind, low, high in (("length", "MinLength", "MaxLength"), ("range", "MinValue", "MaxValue")):
        bounds = {bound: _number(schema[key]) for bound, key in (("min", low), ("max", high))
                  if key in schema}
        if bounds:
            found.append({kind: bounds})
    if "ConstraintDescription" in schema:
        for constraint in found:
            constraint["description"] = schema["ConstraintDescription"]
    return found


def _number(value: Any) -> Any:
    """CFN writes bounds as strings ("1"); a string that is no number is left for the check."""
    if isinstance(value, str):
        for convert in (int, float):
            try:
                return convert(value)
            except ValueError:
                pass
    return value
