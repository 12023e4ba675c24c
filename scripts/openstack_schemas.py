"""Heat's side of scripts/openstack-schemas: every registered resource type's schemas, as facts.

Runs inside .openstack-schemas-venv (the openstack-heat package).  Imports Heat's resource
registry in-process (no service, no database, no configuration file) and writes one JSON
document: ``{"heat_version", "types": {name: {"service", "support_status", "snapshot",
"placeholder", "dynamic_attributes", "properties", "update_policy", "attributes", "renames"}}}``.  A property is ``{"type", "required", "default", "update_allowed",
"immutable", "implemented", "constraints", "schema", "support_status"}`` with the keys at
their default value left out; an attribute is ``{"type", "support_status"}``.  Descriptions are
left out on purpose: Stoker ships names, types and constraints, not Heat's prose.  ``renames``
lists the type's translation rules that move a deprecated property's value to its new name
(REPLACE with a value path), as ``{"from": old path, "to": new path}``; the two paths differ only
in their last keys (a list on the way applies the rule to every item).
"""

from __future__ import annotations

import collections
import json
import logging
import sys
import warnings
from importlib import metadata

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

try:  # newer oslo.service needs a backend chosen before Heat imports it
    from oslo_service import backend

    backend.init_backend(backend.BackendType.THREADING)
except (ImportError, AttributeError):
    pass

from heat.common import config  # noqa: E402,F401 - registers Heat's options
from heat.engine import attributes, constraints, environment, properties, resource, resources, support  # noqa: E402
from heat.engine import translation  # noqa: E402
from heat.engine.resources.openstack.heat import none_resource  # noqa: E402


def support_status(status: support.SupportStatus) -> dict | None:
    """The status when it says anything (not plainly supported since ever)."""
    if status is None:
        return None
    out = {"status": status.status}
    if status.version:
        out["version"] = str(status.version)
    if status.previous_status is not None:
        previous = support_status(status.previous_status)
        if previous:
            out["previous_status"] = previous
    if out == {"status": support.SUPPORTED}:
        return None
    return out


def constraint(item: constraints.Constraint) -> dict:
    if isinstance(item, constraints.AllowedValues):
        return {"allowed_values": list(item.allowed)}
    if isinstance(item, constraints.Length):  # before Range: Heat's Length is a Range
        return {"length": {k: v for k, v in (("min", item.min), ("max", item.max)) if v is not None}}
    if isinstance(item, constraints.Range):
        return {"range": {k: v for k, v in (("min", item.min), ("max", item.max)) if v is not None}}
    if isinstance(item, constraints.Modulo):
        return {"modulo": {"step": item.step, "offset": item.offset}}
    if isinstance(item, constraints.AllowedPattern):
        return {"allowed_pattern": item.pattern}
    if isinstance(item, constraints.CustomConstraint):
        return {"custom_constraint": item.name}
    raise TypeError(f"unknown constraint {item!r}")


def property_schema(schema) -> dict:
    schema = properties.Schema.from_legacy(schema)
    out: dict = {"type": schema.type}
    if schema.required:
        out["required"] = True
    if schema.default is not None:
        out["default"] = schema.default
    if schema.update_allowed:
        out["update_allowed"] = True
    if schema.immutable:
        out["immutable"] = True
    if not schema.implemented:
        out["implemented"] = False
    if schema.constraints:
        out["constraints"] = [constraint(c) for c in schema.constraints]
    status = support_status(schema.support_status)
    if status:
        out["support_status"] = status
    nested = schema.schema
    if nested is not None:
        if isinstance(nested, constraints.AnyIndexDict):
            out["schema"] = {"*": property_schema(nested.value)}
        else:
            out["schema"] = {str(k): property_schema(v) for k, v in nested.items()}
    return out


def attribute_schema(schema) -> dict:
    schema = attributes.Schema.from_attribute(schema)
    out: dict = {}
    if schema.type:
        out["type"] = schema.type
    status = support_status(schema.support_status)
    if status:
        out["support_status"] = status
    return out


def type_entry(cls) -> dict:
    entry: dict = {}
    if cls.default_client_name:
        entry["service"] = cls.default_client_name
    status = support_status(cls.support_status)
    if status:
        entry["support_status"] = status
    if callable(getattr(cls, "handle_snapshot_delete", None)):
        entry["snapshot"] = True  # deletion_policy: Snapshot is allowed
    if issubclass(cls, none_resource.NoneResource):
        entry["placeholder"] = True  # a removed type Heat keeps as OS::Heat::None: any property goes
    if cls.get_attribute is not resource.Resource.get_attribute:
        entry["dynamic_attributes"] = True  # get_attr of any name (a nested stack's outputs, a group's members)
    entry["properties"] = {name: property_schema(s) for name, s in sorted(cls.properties_schema.items())}
    if cls.update_policy_schema:
        entry["update_policy"] = {name: property_schema(s) for name, s in sorted(cls.update_policy_schema.items())}
    attrs = dict(cls.attributes_schema)
    attrs.update(getattr(cls, "base_attributes_schema", {}) or {})
    entry["attributes"] = {name: attribute_schema(s) for name, s in sorted(attrs.items())}
    moved = renames(cls)
    if moved:
        entry["renames"] = moved
    return entry


class _NoClient:
    """What a plug-in's ``translation_rules`` gets for ``client_plugin``: only RESOLVE rules use it."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self


def renames(cls) -> list[dict]:
    """The REPLACE rules of ``cls`` that move an old property's value to a new one, as paths.

    The rules are built by an instance's ``translation_rules(props)``, given no property (a rule
    that only a value turns on, as OS::Heat::RandomString's ``sequence``, replaces by a fixed value
    and is no rename); an instance never initialised (no stack, no client) builds them."""
    if cls.translation_rules is resource.Resource.translation_rules:
        return []
    plugin = object.__new__(cls)
    plugin.client_plugin = plugin.client = _NoClient()
    found = []
    for rule in cls.translation_rules(plugin, collections.defaultdict(lambda: None)) or ():
        if rule.rule != translation.TranslationRule.REPLACE or rule.value is not None:
            continue  # RESOLVE/ADD/DELETE, and a REPLACE by a fixed value, rename nothing
        new = [str(key) for key in rule.translation_path]
        old = [str(key) for key in rule.get_value_absolute_path(full_value_name=True)]
        if old[:len(new) - 1] != new[:-1]:
            raise ValueError(f"{cls.__name__}: rename {old} -> {new} crosses maps")
        found.append({"from": old, "to": new})
    return sorted(found, key=lambda item: (item["to"], item["from"]))


def registered_classes() -> dict:
    """Type name -> class for every class Heat's global environment registers, hidden ones too."""
    resources.initialise()
    registry = resources.global_env().registry._registry
    found = {}
    for name, info in registry.items():
        if isinstance(info, environment.ClassResourceInfo):
            found[name] = info.value
    return found


def main(output: str) -> None:
    classes = registered_classes()
    document = {
        "heat_version": metadata.version("openstack-heat"),
        "types": {name: type_entry(cls) for name, cls in sorted(classes.items())},
    }
    with open(output, "w") as out:
        json.dump(document, out, sort_keys=True, separators=(",", ":"), default=list)
        out.write("\n")
    hidden = sum(1 for t in document["types"].values()
                 if (t.get("support_status") or {}).get("status") in ("HIDDEN", "UNSUPPORTED"))
    moved = sum(len(t.get("renames", ())) for t in document["types"].values())
    print(f"{output}: {len(document['types'])} types ({hidden} hidden or unsupported, "
          f"{moved} property renames) from openstack-heat {document['heat_version']}")


if __name__ == "__main__":
    main(sys.argv[1])
