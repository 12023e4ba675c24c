"""The DSL as Cloudify reads it: what real blueprints (and every plugin YAML) rely on.

Each behaviour here was checked against cloudify-common 7.0.5's dsl_parser.
"""

from __future__ import annotations

import pytest

from stoker.blueprint.parser import parse_file
from stoker.errors import ValidationFailed

HEAD = "tosca_definitions_version: cloudify_dsl_1_4\n"
TYPES = "imports: [http://www.getcloudify.org/spec/cloudify/7.0.0/types.yaml]\n"


def _problems(path) -> dict:
    with pytest.raises(ValidationFailed) as failure:
        parse_file(path)
    return {(".".join(map(str, p.path)), p.code): p.message for p in failure.value.problems}


def test_labels_from_several_imports_keep_the_first(write):
    plugin = HEAD + "blueprint_labels:\n  obj-type: {values: [aws]}\nlabels:\n  obj-type: {values: [aws]}\n"
    write("p1/plugin_1_4.yaml", plugin)
    write("p2/plugin_1_4.yaml", plugin.replace("aws", "azure"))
    plan = parse_file(write("b.yaml", HEAD + "imports: [p1/plugin_1_4.yaml, p2/plugin_1_4.yaml]\n"
                                             "labels:\n  env: {values: [prod]}\n"))
    assert plan["labels"] == {"env": {"values": ["prod"]}, "obj-type": {"values": ["aws"]}}
    assert plan["blueprint_labels"] == {"obj-type": {"values": ["aws"]}}


def test_dsl_definitions_belong_to_their_file(write):
    write("common.yaml", HEAD + "dsl_definitions:\n  conf: &conf {port: 1}\n"
                                "node_types:\n  t:\n    properties:\n      conf: {default: *conf}\n")
    plan = parse_file(write("b.yaml", HEAD + "imports: [common.yaml]\n"
                                             "dsl_definitions:\n  conf: &conf {port: 2}\n"
                                             "node_templates:\n  n: {type: t}\n  m:\n    type: t\n"
                                             "    properties: {conf: *conf}\n"))
    nodes = {n["name"]: n["properties"] for n in plan["nodes"]}
    assert nodes == {"n": {"conf": {"port": 1}}, "m": {"conf": {"port": 2}}}


DATA_TYPES = HEAD + """\
data_types:
  conn:
    properties:
      host: {type: string, default: localhost}
      port: {type: integer, default: 22}
      extra: {type: opts}
  opts:
    properties:
      verbose: {type: boolean, default: false}
  creds:
    properties:
      user: {type: string}
node_types:
  t:
    properties:
      conn: {type: conn}
      creds: {type: creds, required: false}
node_templates:
"""


def test_a_data_type_with_defaults_makes_a_property_optional(write):
    plan = parse_file(write("b.yaml", DATA_TYPES + "  n:\n    type: t\n    properties: {creds: {user: me}}\n"))
    assert plan["nodes"][0]["properties"] == {
        "conn": {"host": "localhost", "port": 22, "extra": {"verbose": False}}, "creds": {"user": "me"}}
    # a data type with a field of its own that has no default is still needed, required: false or not
    problems = _problems(write("c.yaml", DATA_TYPES + "  n: {type: t}\n"))
    assert "missing property 'user'" in problems[("node_templates.n.properties.creds", "missing-property")]


def test_an_external_resource_needs_no_other_property(write):
    text = HEAD + ("node_types:\n  t:\n    properties:\n      use_external_resource: {default: false}\n"
                   "      size: {type: integer}\nnode_templates:\n  n:\n    type: t\n")
    plan = parse_file(write("b.yaml", text + "    properties: {use_external_resource: true}\n"))
    assert plan["nodes"][0]["properties"] == {"use_external_resource": True}
    assert ("node_templates.n.properties", "missing-property") in _problems(write("c.yaml", text))
