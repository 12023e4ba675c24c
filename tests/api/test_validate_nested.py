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
    # as Heat, the template file a resource names as its type is registered as it is looked up
    assert flat["Environment"] == {"parameters": {}, "parameter_defaults": {}, "event_sinks": [],
                                   "resource_registry": {"resources": {}, "nested.yaml": "nested.yaml"}}

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


def test_validate_shows_the_users_values_and_registers_template_types_as_heat(noauth_server):
    # heat-tempest-plugin's test_template_validate_override_default and _nested_off
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    template = ("heat_template_version: 2016-10-14\nparameters:\n  a: {type: number, default: 10}\n"
                "  b: {type: string, default: x}\n  c: {type: string, default: y}\n"
                "conditions:\n  off: false\nresources:\n  n: {type: member.yaml, properties: {size: 1}}\n"
                "  skipped: {type: other.yaml, condition: off}\n")
    files = {"member.yaml": MEMBER, "other.yaml": MEMBER}
    shown = client.stacks.validate(template=template, files=files,
                                   environment={"parameters": {"a": 5}, "parameter_defaults": {"c": "z"}},
                                   parameters={"b": "given"})
    assert shown["Parameters"]["a"] == {"Type": "Number", "Description": "", "NoEcho": "false", "Label": "a",
                                        "Default": 10, "Value": 5}
    assert shown["Parameters"]["b"]["Value"] == "given"
    assert "Value" not in shown["Parameters"]["c"]  # a parameter_default is no user value
    assert shown["Environment"]["resource_registry"] == {"resources": {}, "member.yaml": "member.yaml"}
    assert shown["Environment"]["parameters"] == {"a": 5, "b": "given"}  # the request's merged in, as Heat


def test_nested_parameters_of_a_template_two_levels_down(noauth_server):
    # heat-tempest-plugin's test_template_validate_nested_on_multiple: the inner resource's
    # properties do not fit its template's parameters, and Heat shows those all the same
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    inner = ("heat_template_version: 2014-10-16\nparameters:\n  aparam: {type: number, default: 10}\n"
             "resources:\n  myres: {type: OS::Heat::RandomString, properties: {length: {get_param: aparam}}}\n")
    middle = inner.replace("OS::Heat::RandomString", "mynested2.yaml")
    top = ("heat_template_version: 2014-10-16\nparameters:\n  pparam: {type: number, default: 5}\n"
           "resources:\n  nres: {type: mynested.yaml, properties: {aparam: {get_param: pparam}}}\n")
    shown = client.stacks.validate(template=top, files={"mynested.yaml": middle, "mynested2.yaml": inner},
                                   show_nested=True)
    nres = shown["NestedParameters"]["nres"]
    assert nres["Parameters"]["aparam"]["Value"] == 5
    assert nres["NestedParameters"]["myres"]["Type"] == "mynested2.yaml"
    assert nres["NestedParameters"]["myres"]["Parameters"]["aparam"] == {
        "Type": "Number", "Description": "", "NoEcho": "false", "Label": "aparam", "Default": 10}
