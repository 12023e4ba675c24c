"""Cloudify's filter rules (``filter_rules`` of a search, a saved filter, a deployment group's members): which
deployments, blueprints, nodes, node instances or secrets a list of ``{"key", "values", "operator", "type"}``
rules selects, all rules at once; and the DSL constraints a search may send instead (``constraints``: the
manager reads them into the same rules).

Label rules (``type: label``) read the resource's labels; attribute rules (``type: attribute``) the
attributes Cloudify allows to filter that resource by that Stoker keeps.  A malformed rule is refused with
the manager's words.
"""

from __future__ import annotations

from typing import Any, Callable

from stoker.errors import StokerError

#: by the values the deployment's labels hold under the rule's key (the manager's queries: ``not_any_of``, a
#: value of the key outside the list; ``is_not``, that or no such key)
LABEL_OPERATORS: dict[str, Callable[[set[str], list], bool]] = {
    "any_of": lambda held, values: bool(held & set(values)),
    "not_any_of": lambda held, values: bool(held - set(values)),
    "is_null": lambda held, _values: not held,
    "is_not_null": lambda held, _values: bool(held),
    "is_not": lambda held, values: not held or bool(held - set(values)),
}
#: the label operators that take no values (the others take at least one)
NULL_OPERATORS = ("is_null", "is_not_null")
ATTRIBUTE_OPERATORS: dict[str, Callable[[str, list], bool]] = {
    "any_of": lambda held, values: held in values,
    "not_any_of": lambda held, values: held not in values,
    "contains": lambda held, values: any(v in held for v in values),
    "not_contains": lambda held, values: not any(v in held for v in values),
    "starts_with": lambda held, values: any(held.startswith(v) for v in values),
    "ends_with": lambda held, values: any(held.endswith(v) for v in values),
    "is_not_empty": lambda held, _values: bool(held),
}
#: the attributes a rule may read, by what is filtered (Cloudify's ``allowed_filter_attrs`` Stoker keeps)
ATTRIBUTES = {"deployments": ("id", "blueprint_id", "created_by", "site_name", "tenant_name", "display_name",
                              "installation_status"),
              "blueprints": ("created_by", "state", "id", "tenant_name"),
              "nodes": ("id", "type"), "node_instances": ("id",), "secrets": ("key", "provider_name"),
              "capabilities": ("key", "value"), "scaling_groups": ("name",)}
#: a constraint's ``name_pattern`` operators, as the attribute operators they become
PATTERN_OPERATORS = {"contains": "contains", "starts_with": "starts_with", "ends_with": "ends_with",
                     "equals_to": "any_of"}


class BadFilterRule(StokerError):
    """A rule the manager would refuse (``invalid_filter_rule``)."""

    def __init__(self, rule: Any, reason: str):
        super().__init__(f"The filter rule {rule} is not in the right format. {reason}")


def checked(rules: Any, kind: str = "deployments") -> list[dict]:
    """The rules filtering ``kind`` (deployments or blueprints), each one checked (the key lower-cased, as the
    manager keeps it)."""
    if not isinstance(rules, list):
        raise BadFilterRule(rules, "The filter rules must be a list")
    found = []
    for rule in rules:
        if not isinstance(rule, dict) or set(rule) != {"key", "values", "operator", "type"}:
            raise BadFilterRule(rule, "Each filter rule must be a dictionary with the keys key, values, operator "
                                      "and type")
        if not isinstance(rule["key"], str):
            raise BadFilterRule(rule, "The filter rule key must be a string")
        if not isinstance(rule["values"], list):
            raise BadFilterRule(rule, "The filter rule values must be a list")
        operators = {"label": LABEL_OPERATORS, "attribute": ATTRIBUTE_OPERATORS}.get(rule["type"])
        if operators is None:
            raise BadFilterRule(rule, "Filter rule type must be one of label, attribute")
        if rule["operator"] not in operators:
            raise BadFilterRule(rule, f"The operator for filtering by {rule['type']}s must be one of "
                                      f"{', '.join(operators)}")
        if rule["type"] == "attribute" and rule["operator"] == "is_not_empty" and rule["values"]:
            raise BadFilterRule(rule, "Values list must be empty if the operator is is_not_empty")
        if rule["type"] == "label" and (rule["operator"] in NULL_OPERATORS) != (not rule["values"]):
            raise BadFilterRule(rule, f"Values list must be empty if the operator is one of {', '.join(NULL_OPERATORS)}"
                                if rule["values"] else "Values list must include at least one item if the operator "
                                "is one of any_of, not_any_of, is_not")
        if rule["type"] == "attribute" and rule["key"] not in ATTRIBUTES[kind]:
            raise BadFilterRule(rule, f"Allowed attributes to filter {kind} by are {', '.join(ATTRIBUTES[kind])}")
        found.append({**rule, "key": rule["key"].lower()})
    return found


def matches(rules: list[dict], deployment: dict, labels: list[tuple[str, str]]) -> bool:
    """Whether the deployment (its row's view and its ``(key, value)`` labels) meets every rule."""
    for rule in rules:
        if rule["type"] == "label":
            held = {value for key, value in labels if key == rule["key"]}
            if not LABEL_OPERATORS[rule["operator"]](held, rule["values"]):
                return False
        elif not ATTRIBUTE_OPERATORS[rule["operator"]](str(deployment.get(rule["key"]) or ""), rule["values"]):
            return False
    return True


def meeting(rules: list[dict], rows: list[dict]) -> list[dict]:
    """The rows (API views; a labelled one with its ``labels``: ``{"key", "value"}`` maps) meeting every rule."""
    return [row for row in rows
            if matches(rules, row, [(label["key"], label["value"]) for label in row.get("labels") or []])]


def from_constraints(constraints: dict, field: str, kind: str, valid_field: str | None = None) -> list[dict]:
    """The checked rules DSL ``constraints`` stand for when they filter ``kind`` by ``field`` (the manager's
    reading: ``name_pattern`` tests ``field``, ``valid_values`` ``valid_field`` (a capability's value) or else
    ``field``; ``labels`` and ``tenants`` are label and tenant rules).  A saved filter they name
    (``filter_id``) is the caller's to add."""
    rules = [{"key": key, "values": [value], "operator": "any_of", "type": "label"}
             for label in listed(constraints, "labels") for key, value in _pair(label)]
    if constraints.get("tenants"):
        rules.append({"key": "tenant_name", "values": listed(constraints, "tenants"), "operator": "any_of",
                      "type": "attribute"})
    if constraints.get("valid_values"):
        rules.append({"key": valid_field or field, "values": listed(constraints, "valid_values"), "operator": "any_of",
                      "type": "attribute"})
    pattern = constraints.get("name_pattern") or {}
    if not isinstance(pattern, dict):
        raise BadFilterRule(pattern, "name_pattern must be a map of operators to values")
    for operator, value in pattern.items():
        if operator not in PATTERN_OPERATORS:
            raise BadFilterRule(pattern, f"Unknown name pattern operator: {operator}")
        rules.append({"key": field, "values": [str(value)], "operator": PATTERN_OPERATORS[operator],
                      "type": "attribute"})
    return checked(rules, kind)


def listed(constraints: dict, name: str) -> list:
    """The constraint ``name``'s list (none: empty)."""
    found = constraints.get(name) or []
    if not isinstance(found, list):
        raise BadFilterRule(found, f"The constraint {name} must be a list")
    return found


def _pair(label: Any) -> list[tuple[str, str]]:
    if not isinstance(label, dict) or len(label) != 1:
        raise BadFilterRule(label, "A labels constraint is a list of one-key maps (key: value)")
    return [(str(key), str(value)) for key, value in label.items()]
