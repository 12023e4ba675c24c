"""Cloudify's deployment filter rules as a deployment group's members are chosen: the manager's operators over
labels and attributes, and its refusals of malformed rules."""

from __future__ import annotations

import pytest

from stoker.blueprint.filter_rules import BadFilterRule, checked, matches

#: deployment id -> (its row's attributes, its labels)
DEPLOYMENTS = {
    "web1": ({"blueprint_id": "shop", "created_by": "admin"}, [("env", "prod"), ("tier", "web")]),
    "web2": ({"blueprint_id": "shop", "created_by": "eve"}, [("env", "dev"), ("env", "prod")]),
    "db": ({"blueprint_id": "store", "created_by": "admin"}, [("tier", "db")]),
}


def _chosen(*rules: dict) -> list[str]:
    found = checked(list(rules))
    return sorted(name for name, (row, labels) in DEPLOYMENTS.items() if matches(found, row, labels))


def _label(key: str, operator: str, *values: str) -> dict:
    return {"key": key, "values": list(values), "operator": operator, "type": "label"}


def _attribute(key: str, operator: str, *values: str) -> dict:
    return {"key": key, "values": list(values), "operator": operator, "type": "attribute"}


def test_label_operators_as_the_manager_queries_them():
    assert _chosen(_label("ENV", "any_of", "prod")) == ["web1", "web2"]  # keys are lower-cased
    assert _chosen(_label("env", "not_any_of", "prod")) == ["web2"]  # a value of env other than prod
    assert _chosen(_label("env", "is_not", "prod")) == ["db", "web2"]  # that, or no env at all
    assert _chosen(_label("tier", "is_null")) == ["web2"]
    assert _chosen(_label("tier", "is_not_null"), _label("env", "any_of", "prod")) == ["web1"]  # every rule


def test_attribute_operators():
    assert _chosen(_attribute("blueprint_id", "any_of", "shop")) == ["web1", "web2"]
    assert _chosen(_attribute("created_by", "not_any_of", "admin")) == ["web2"]
    assert _chosen(_attribute("blueprint_id", "starts_with", "st")) == ["db"]
    assert _chosen(_attribute("blueprint_id", "contains", "o")) == ["db", "web1", "web2"]


@pytest.mark.parametrize("rule, words", [
    (_label("env", "equals", "prod"), "The operator for filtering by labels must be one of any_of"),
    (_label("env", "any_of"), "Values list must include at least one item"),
    (_label("env", "is_null", "prod"), "Values list must be empty"),
    (_attribute("colour", "any_of", "red"), "Allowed attributes to filter deployments by are id, blueprint_id"),
    ({"key": "env", "values": ["prod"], "operator": "any_of", "type": "tag"}, "Filter rule type must be one of"),
    ({"key": "env", "values": "prod", "operator": "any_of", "type": "label"}, "The filter rule values must be a list"),
])
def test_malformed_rules_are_refused_in_the_managers_words(rule, words):
    with pytest.raises(BadFilterRule, match=words) as refused:
        checked([rule])
    assert str(refused.value).startswith("The filter rule ")
