"""``/validate`` as Heat answers it: hidden defaults as the template gives them, the
Environment with Heat's four sections only, ``NestedParameters`` with ``show_nested``; and the
function list, each function once."""

from __future__ import annotations

import uuid

from .helpers import heat

NESTED = """\
heat_template_version: 2016-10-14
description: the inner one
parameters:
  p: {type: string, default: a}
  secret: {type: string, hidden: true, default: shh}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: member.yaml, properties: {size: 3}}
"""
MEMBER = "heat_template_version: 2016-10-14\nparameters:\n  size: {type: number}\nresources: {}\n"
TOP = """\
heat_template_version: 2016-10-14
parameters:
  pw: {type: string, hidden: true, default: topsecret}
resources:
  n: {type: nested.yaml, properties: {p: b}}
  plain: {type: OS::Heat::None}
"""


def test_validate_shows_nested_parameters_and_heats_environment(noauth_server):
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    files = {"nested.yaml": NESTED, "member.yaml": MEMBER}
    env = {"parameter_merge_strategies": {"pw": "merge"}, "encrypted_param_names": []}
    flat = client.stacks.validate(template=TOP, files=files, environment=env)
    assert flat["Parameters"]["pw"] == {"Type": "String", "Description": "", "NoEcho": "true", "Label": "pw",
                                        "Default": "topsecret"}
    assert "NestedParameters" not in flat
    assert flat["Environment"] == {"parameters": {}, "parameter_defaults": {}, "event_sinks": [],
                                   "resource_registry": {"resources": {}}}

    nested = client.stacks.validate(template=TOP, files=files, show_nested=True)["NestedParameters"]
    assert set(nested) == {"n"}
    assert nested["n"]["Type"] == "nested.yaml" and nested["n"]["Description"] == "the inner one"
    assert nested["n"]["Parameters"]["p"] == {"Type": "String", "Description": "", "NoEcho": "false",
                                              "Label": "p", "Default": "a", "Value": "b"}
    assert nested["n"]["Parameters"]["secret"]["Default"] == "shh"
    group = nested["n"]["NestedParameters"]["group"]
    assert group["Type"] == "OS::Heat::ResourceGroup"
    assert group["NestedParameters"] == {"0": {"Type": "member.yaml", "Description": "No description",
                                               "Parameters": {"size": {"Type": "Number", "Description": "",
                                                                       "NoEcho": "false", "Label": "size",
                                                                       "Value": 3}}}}


def test_function_list_names_each_function_once_with_heats_descriptions(noauth_server):
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    rows = client.template_versions.get("heat_template_version.2016-10-14", with_condition_func=True)
    names = [row.functions for row in rows]
    assert len(names) == len(set(names)) and {"get_param", "equals", "not"} <= set(names)
    contains = {row.functions: row.description for row in
                client.template_versions.get("heat_template_version.2018-08-31")}["contains"]
    assert contains == "A function for checking whether specific value is in sequence."
