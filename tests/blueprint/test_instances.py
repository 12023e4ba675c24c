"""Laying out node instances: counts, containment, scaling groups and relationship wiring."""

from __future__ import annotations

import re

import pytest

from stoker.blueprint.deployment import prepare
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.parser import parse_blueprint

HEAD = """\
tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
"""


def _instances(text: str, inputs: dict | None = None) -> list[dict]:
    return prepare(parse_blueprint(HEAD + text), inputs)["node_instances"]


def _by_node(instances: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for instance in instances:
        found.setdefault(instance["node_id"], []).append(instance)
    return found


def _targets(instance: dict, node: str) -> list[str]:
    return [r["target_id"] for r in instance["relationships"] if r["target_name"] == node]


def test_ids_indexes_and_hosts():
    instances = _instances("node_templates:\n  vm: {type: cloudify.nodes.Compute, instances: {deploy: 3}}\n"
                           "  app:\n    type: cloudify.nodes.Root\n    relationships:\n"
                           "      - {type: cloudify.relationships.contained_in, target: vm}\n")
    assert len({i["id"] for i in instances}) == 6
    assert all(re.fullmatch(rf"{i['node_id']}_[a-z0-9]{{6}}", i["id"]) for i in instances)
    nodes = _by_node(instances)
    assert [i["index"] for i in nodes["app"]] == [1, 2, 3]
    for vm, app in zip(nodes["vm"], nodes["app"]):
        assert vm["host_id"] == vm["id"] and app["host_id"] == vm["id"] and _targets(app, "vm") == [vm["id"]]


def test_connected_to_all_to_all_and_all_to_one():
    text = ("node_templates:\n  db: {type: cloudify.nodes.Root, instances: {deploy: 3}}\n"
            "  web:\n    type: cloudify.nodes.Root\n    instances: {deploy: 2}\n    relationships:\n"
            "      - {type: cloudify.relationships.connected_to, target: db}\n"
            "  one:\n    type: cloudify.nodes.Root\n    relationships:\n"
            "      - type: cloudify.relationships.connected_to\n        target: db\n"
            "        properties: {connection_type: all_to_one}\n")
    nodes = _by_node(_instances(text))
    db_ids = [i["id"] for i in nodes["db"]]
    assert all(sorted(_targets(web, "db")) == sorted(db_ids) for web in nodes["web"])
    assert len(_targets(nodes["one"][0], "db")) == 1


GROUPED = """\
node_templates:
  vm: {type: cloudify.nodes.Compute}
  app:
    type: cloudify.nodes.Root
    relationships:
      - {type: cloudify.relationships.contained_in, target: vm}
  db: {type: cloudify.nodes.Root}
  cache:
    type: cloudify.nodes.Root
    relationships:
      - {type: cloudify.relationships.connected_to, target: db}
      - {type: cloudify.relationships.connected_to, target: app}
groups:
  pair: {members: [vm, db, cache]}
policies:
  scale_pair:
    type: cloudify.policies.scaling
    properties: {default_instances: {get_input: pairs}}
    targets: [pair]
inputs:
  pairs: {type: integer, default: 2}
"""


def test_groups_scale_members_together_and_keep_links_inside():
    instances = _instances(GROUPED, {"pairs": 3})
    nodes = _by_node(instances)
    assert {node: len(found) for node, found in nodes.items()} == {"vm": 3, "app": 3, "db": 3, "cache": 3}
    group_of = {i["id"]: i["scaling_groups"][0]["id"] for i in instances if i["scaling_groups"]}
    assert all(i["scaling_groups"] == [] for i in nodes["app"])  # in the group through its vm
    assert len(set(group_of.values())) == 3
    for cache in nodes["cache"]:
        (db,) = _targets(cache, "db")
        (app,) = _targets(cache, "app")
        assert group_of[db] == group_of[cache.get("id")]
        (vm,) = [a["relationships"][0]["target_id"] for a in nodes["app"] if a["id"] == app]
        assert group_of[vm] == group_of[cache["id"]]


def test_all_to_one_inside_a_group_is_refused():
    text = GROUPED.replace("target: db}", "target: db, properties: {connection_type: all_to_one}}")
    with pytest.raises(BlueprintError, match="all_to_one"):
        _instances(text)


def test_a_group_of_contained_nodes_sits_on_their_host():
    text = ("node_templates:\n  vm: {type: cloudify.nodes.Compute, instances: {deploy: 2}}\n"
            "  a:\n    type: cloudify.nodes.Root\n    relationships:\n"
            "      - {type: cloudify.relationships.contained_in, target: vm}\n"
            "  b:\n    type: cloudify.nodes.Root\n    relationships:\n"
            "      - {type: cloudify.relationships.contained_in, target: vm}\n"
            "groups:\n  ab: {members: [a, b]}\n"
            "policies:\n  p: {type: cloudify.policies.scaling, properties: {default_instances: 2}, targets: [ab]}\n")
    nodes = _by_node(_instances(text))
    assert len(nodes["a"]) == len(nodes["b"]) == 4  # two group instances on each of two vms
    for a in nodes["a"]:
        assert a["host_id"] in {vm["id"] for vm in nodes["vm"]}
        assert a["scaling_groups"][0]["name"] == "ab"
