"""A create gives Heat's outcome and outputs on what real templates do (issue 12, "Real
templates": the differences ``scripts/heat-corpus --create`` found).

Each test: a template in, the create's status and outputs out, as Heat's legacy engine
gives them for the same template.
"""

from __future__ import annotations

import json

from .conftest import outputs

NULL_MEMBER = """\
heat_template_version: 2016-10-14
parameters:
  name: {type: string}
  size: {type: number}
  tags: {type: comma_delimited_list}
  meta: {type: json}
  flag: {type: boolean, default: true}
  kept: {type: string, default: kept}
outputs:
  all:
    value: [{get_param: name}, {get_param: size}, {get_param: tags}, {get_param: meta},
            {get_param: flag}, {get_param: kept}]
"""


def create(cli, template, *args):
    run = cli("stack", "create", "s", "-t", template, "--wait", "-f", "json", *args)
    assert run.code == 0, run.output
    return outputs(json.loads(run.stdout))


def test_a_null_property_value_is_its_types_empty_value_even_when_required(cli, tree):
    # Heat: an explicit null is "given" (not "not assigned"): the type's empty value, also
    # passed on to a provider template's parameters (replacing their defaults)
    root = tree({"member.yaml": NULL_MEMBER, "top.yaml": """\
heat_template_version: 2016-10-14
resources:
  m:
    type: member.yaml
    properties: {name: null, size: null, tags: null, meta: null, flag: null, kept: null}
  v:
    type: OS::Heat::Value
    properties: {value: null}
  r:
    type: OS::Heat::RandomString
    properties: {length: null}
outputs:
  all: {value: {get_attr: [m, all]}}
  v: {value: {get_attr: [v, value]}}
  r: {value: {get_attr: [r, value]}}
"""})
    got = create(cli, root / "top.yaml")
    assert got["all"] == ["", 0, [], {}, False, ""]
    assert got["v"] is None
    assert len(got["r"]) == 32  # a default still wins over null


def test_a_null_value_is_still_checked_against_the_constraints(cli, tree):
    root = tree({"t.yaml": """\
heat_template_version: 2016-10-14
resources:
  v:
    type: OS::Heat::Value
    properties: {value: 1, type: null}
"""})
    run = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert run.code == 1, run.output
    assert 'resources.v.properties.type: "" is not an allowed value' in run.output


def test_a_description_that_is_not_a_string_is_shown_as_it_is(cli, tree):
    # Heat checks no type for the description (one of its unit tests' templates has a map)
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\ndescription: {purpose: test, owner: 12}\n"
                 "resources:\n  v: {type: OS::Heat::None}\n"})
    run = cli("template", "validate", "-t", root / "t.yaml", "-f", "json")
    assert run.code == 0, run.output
    assert json.loads(run.stdout)["Description"] == {"purpose": "test", "owner": 12}
    assert cli("stack", "create", "s", "-t", root / "t.yaml", "--wait").code == 0


def test_nested_templates_are_read_as_heatclient_sends_them(cli, tree):
    # heatclient parses every template it sends (text stripped first), the top one, the
    # nested ones and a template read by get_file (sent as its JSON); other files go as they are
    member = "heat_template_version: 2016-10-14\noutputs:\n  text:\n    value: |\n      one\n      two\n"
    root = tree({"member.yaml": member, "other.yaml": member, "data.txt": "hello\n\n", "top.yaml": """\
heat_template_version: 2016-10-14
resources:
  m: {type: member.yaml}
outputs:
  nested: {value: {get_attr: [m, text]}}
  file: {value: {get_file: other.yaml}}
  plain: {value: {get_file: data.txt}}
"""})
    got = create(cli, root / "top.yaml")
    assert got["nested"] == "one\ntwo"
    assert json.loads(got["file"]) == {"heat_template_version": "2016-10-14", "outputs": {"text": {"value": "one\ntwo"}}}
    assert got["plain"] == "hello\n\n"


def test_a_member_of_an_empty_group_is_nothing(cli, tree):
    # Heat's own functional test template: a group of none answers resource.N(.attr) with null;
    # a group with members still refuses a member it does not have
    root = tree({"t.yaml": """\
heat_template_version: 2013-05-23
parameters:
  count: {type: number, default: 0}
resources:
  random_group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def: {type: OS::Heat::RandomString, properties: {length: 30}}
outputs:
  random1: {value: {get_attr: [random_group, resource.0.value]}}
  random2: {value: {get_attr: [random_group, resource.1]}}
  all_values: {value: {get_attr: [random_group, value]}}
"""})
    assert create(cli, root / "t.yaml") == {"random1": None, "random2": None, "all_values": []}
    run = cli("stack", "create", "one", "-t", root / "t.yaml", "-P", "count=1", "--wait", "-f", "json")
    assert run.code == 0, run.output
    shown = {o["output_key"]: o for o in json.loads(run.stdout)["outputs"]}
    assert len(shown["random1"]["output_value"]) == 30
    assert "output_error" in shown["random2"]


def test_an_autoscaling_member_of_an_unknown_type_is_refused_up_front(cli, tree):
    # as Heat, even while the member's properties wait for other resources: nothing is created
    root = tree({"t.yaml": """\
heat_template_version: 2016-10-14
parameters:
  member_type: {type: string, default: My::Missing}
resources:
  net: {type: OS::Heat::None}
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 2
      resource:
        type: {get_param: member_type}
        properties: {network: {get_resource: net}}
"""})
    run = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert run.code == 1
    assert "resources.asg.properties.resource.type" in run.output
    assert "The Resource Type (My::Missing) could not be found." in run.output
    assert cli("stack", "show", "s").code == 1  # refused: no stack
    ok = cli("stack", "create", "ok", "-t", root / "t.yaml", "-P", "member_type=OS::Heat::None", "--wait")
    assert ok.code == 0, ok.output


def test_a_deployment_of_a_config_that_does_not_exist_fails(cli, tree):
    # tripleo's config-download-software.yaml with a config id that names nothing: Heat's
    # create fails on it (a delete goes on without it); NO_SIGNAL does not skip the lookup
    root = tree({"t.yaml": """\
heat_template_version: wallaby
parameters:
  config: {type: string}
resources:
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_param: config}, server: fake_server_id, signal_transport: NO_SIGNAL}
"""})
    run = cli("stack", "create", "s", "-t", root / "t.yaml", "-P", "config=nothing", "--wait", "-f", "json")
    assert run.code == 1, run.output
    shown = json.loads(cli("stack", "show", "s", "-f", "json").stdout)
    assert shown["stack_status"] == "CREATE_FAILED"
    assert "resources.deployment" in shown["stack_status_reason"]
    assert "nothing" in shown["stack_status_reason"]
    assert cli("stack", "delete", "s", "--yes", "--wait").code == 0
