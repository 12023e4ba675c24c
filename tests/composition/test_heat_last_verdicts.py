"""Heat's verdict on the last differences real templates showed (issue 23): each test a
template in through the CLI, validate's and create's outcome and the outputs out."""

from __future__ import annotations

import json


def run_json(cli, *args):
    run = cli(*args, "-f", "json")
    assert run.code == 0, run.output
    return json.loads(run.stdout)


def test_an_output_naming_no_resource_is_that_outputs_error_at_show(cli, tree):
    # Heat's validate never looks up get_resource's resource: the stack is created
    root = tree({"t.yaml": "heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Heat::None}\n"
                 "outputs:\n  bad: {value: {get_resource: nosuch}}\n  good: {value: {get_resource: a}}\n"})
    validated = cli("template", "validate", "-t", root / "t.yaml")
    assert validated.code == 0, validated.output
    warnings = [line for line in validated.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "outputs.bad.value.get_resource" in warnings[0]
    assert "this output shows the error" in warnings[0]
    created = run_json(cli, "stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert created["stack_status"] == "CREATE_COMPLETE"
    shown = {o["output_key"]: o for o in run_json(cli, "stack", "output", "show", "s", "--all")}
    assert shown["bad"]["output_value"] is None
    assert 'The specified reference "nosuch" (in get_resource) is incorrect' in shown["bad"]["output_error"]
    assert shown["good"]["output_value"] and "output_error" not in shown["good"]


def test_an_output_get_attr_of_no_resource_is_still_refused(cli, tree):
    # Heat's GetAtt.validate looks the resource up (heat's test_incorrect_outputs_incorrect_reference)
    root = tree({"t.yaml": "heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Heat::None}\n"
                 "outputs:\n  bad: {value: {get_attr: [nosuch, x]}}\n"})
    refused = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert refused.code == 1 and 'The specified reference "nosuch" (in get_attr) is incorrect' in refused.output


ODD = "we+ird @dir %20 #x"


def test_files_in_folders_with_odd_names_are_read(cli, tree):
    root = tree({
        f"{ODD}/sub/nested.yaml": "heat_template_version: 2018-08-31\nresources:\n"
                                  "  v: {type: OS::Heat::Value, properties: {value: {get_file: 'da ta%.txt'}}}\n"
                                  "outputs:\n  o: {value: {get_attr: [v, value]}}\n",
        f"{ODD}/sub/da ta%.txt": "inner",
        f"{ODD}/f#1.txt": "top",
        f"{ODD}/env.yaml": "resource_registry:\n  My::T: sub/nested.yaml\n",
        f"{ODD}/top.yaml": "heat_template_version: 2018-08-31\nresources:\n  n: {type: sub/nested.yaml}\n"
                           "  m: {type: My::T}\noutputs:\n  n: {value: {get_attr: [n, o]}}\n"
                           "  m: {value: {get_attr: [m, o]}}\n  f: {value: {get_file: 'f#1.txt'}}\n",
    })
    folder = root / ODD
    assert cli("template", "validate", "-t", folder / "top.yaml", "-e", folder / "env.yaml").code == 0
    created = run_json(cli, "stack", "create", "s", "-t", folder / "top.yaml", "-e", folder / "env.yaml", "--wait")
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"n": "inner", "m": "inner", "f": "top"}


def test_all_attributes_of_a_stub_are_those_the_template_reads_whole(cli, tree):
    # Heat's get_attr: [res]: the schema's attributes and those read elsewhere by name
    # alone (a path read is not one), never show
    root = tree({"env.yaml": "resource_registry:\n  OS::Nova::Server: OS::Heat::None\n",
                 "t.yaml": """\
heat_template_version: 2018-08-31
resources:
  srv: {type: OS::Nova::Server}
  r: {type: OS::Heat::RandomString, properties: {length: 4}}
  user:
    type: OS::Heat::Value
    properties: {value: [{get_attr: [srv, first_address]}, {get_attr: [srv, show]}]}
outputs:
  all: {value: {get_attr: [srv]}}
  net: {value: {get_attr: [srv, networks, private]}}
  name: {value: {get_attr: [srv, name]}}
  rall: {value: {get_attr: [r]}}
"""})
    created = run_json(cli, "stack", "create", "s", "-t", root / "t.yaml", "-e", root / "env.yaml", "--wait")
    got = {o["output_key"]: o.get("output_value") for o in created["outputs"]}
    assert got["all"] == {"first_address": None, "name": None}
    assert set(got["rall"]) == {"value"} and len(got["rall"]["value"]) == 4


def test_a_resource_whose_condition_is_false_is_never_looked_up(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2018-08-31\nconditions:\n  never: false\nresources:\n"
                 "  x: {type: OS::No::Such, condition: never, properties: {anything: 1}}\n"
                 "  y: {type: OS::Heat::None}\n"})
    assert cli("template", "validate", "-t", root / "t.yaml").code == 0
    created = run_json(cli, "stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert created["stack_status"] == "CREATE_COMPLETE"
    # the same type under a true condition is refused
    on = tree({"on.yaml": "heat_template_version: 2018-08-31\nconditions:\n  always: true\nresources:\n"
               "  x: {type: OS::No::Such, condition: always}\n"})
    refused = cli("stack", "create", "t", "-t", on / "on.yaml", "--wait")
    assert refused.code == 1 and "The Resource Type (OS::No::Such) could not be found." in refused.output


MEMBER_NEEDS = "heat_template_version: 2018-08-31\nparameters:\n  needed: {type: string}\n" \
               "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: needed}}}\n"


def test_an_empty_autoscaling_group_checks_no_member(cli, tree):
    group = ("heat_template_version: 2018-08-31\nresources:\n  g:\n    type: OS::Heat::AutoScalingGroup\n"
             "    properties: {{min_size: 0, max_size: 3, desired_capacity: {n}, resource: {{type: member.yaml}}}}\n")
    root = tree({"member.yaml": MEMBER_NEEDS, "empty.yaml": group.format(n=0), "one.yaml": group.format(n=1)})
    created = run_json(cli, "stack", "create", "s", "-t", root / "empty.yaml", "--wait")
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    refused = cli("stack", "create", "t", "-t", root / "one.yaml", "--wait")
    assert refused.code == 1 and "Property needed not assigned" in refused.output


def test_an_empty_external_id_fails_the_create(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2018-08-31\nresources:\n"
                 "  n: {type: OS::Heat::None, external_id: ''}\n"})
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait", "-f", "json")
    assert created.code == 1
    shown = run_json(cli, "stack", "show", "s")
    assert shown["stack_status"] == "CREATE_FAILED"
    assert "Resource ID was not provided." in shown["stack_status_reason"]
    resource = run_json(cli, "stack", "resource", "show", "s", "n")
    assert resource["resource_status"] == "ADOPT_FAILED"


def test_a_group_member_of_unknown_type_is_refused_while_its_values_wait(cli, tree):
    # Heat's ResourceGroup resolves the member type at create's validation, whatever
    # the member's properties wait for
    root = tree({"t.yaml": "heat_template_version: 2018-08-31\nresources:\n"
                 "  v: {type: OS::Heat::Value, properties: {value: 2}}\n  g:\n    type: OS::Heat::ResourceGroup\n"
                 "    properties:\n      count: 2\n"
                 "      resource_def: {type: OS::No::Such, properties: {x: {get_attr: [v, value]}}}\n"})
    refused = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert refused.code == 1
    assert "resources.g.properties.resource_def.type" in refused.output
    assert "The Resource Type (OS::No::Such) could not be found." in refused.output
    assert "Stack s not found" in cli("stack", "show", "s").output


def test_validate_resolves_a_get_attr_attribute_name_from_a_parameter(cli, tree):
    # Heat's GetAtt.validate resolves the attribute's name: a parameter without a value fails
    for place in ("resources:\n  v: {type: OS::Heat::Value, properties: {value: {a: 1}}}\n"
                  "  w: {type: OS::Heat::Value, properties: {value: {get_attr: [v, {get_param: key}]}}}\n",
                  "resources:\n  v: {type: OS::Heat::Value, properties: {value: {a: 1}}}\n"
                  "outputs:\n  o: {value: {get_attr: [v, {get_param: key}]}}\n"):
        root = tree({"t.yaml": "heat_template_version: 2018-08-31\nparameters:\n  key: {type: string}\n" + place})
        refused = cli("template", "validate", "-t", root / "t.yaml")
        assert refused.code == 1 and "get_attr: The Parameter (key) was not provided." in refused.output
        assert cli("template", "validate", "-t", root / "t.yaml", "-P", "key=value").code == 0


def test_validate_refuses_a_nested_templates_get_file_of_no_file(cli, tree):
    # heatclient reads every file a nested template names before it sends anything
    root = tree({"nested.yaml": "heat_template_version: 2018-08-31\nresources:\n"
                                "  v: {type: OS::Heat::Value, properties: {value: {get_file: nothere.txt}}}\n",
                 "top.yaml": "heat_template_version: 2018-08-31\nresources:\n  n: {type: nested.yaml}\n"})
    refused = cli("template", "validate", "-t", root / "top.yaml")
    assert refused.code == 1
    assert f"Could not fetch contents for {(root / 'nothere.txt').as_uri()}" in refused.output


def test_get_param_argument_types_warn_at_validate_and_refuse_the_create(cli, tree):
    # Heat checks get_param's arguments where it resolves the call: at create's checks
    for args, message in (("42", 'Argument to "get_param" must be string or list'),
                          ("[42]", 'Parameter name in "get_param" must be string')):
        root = tree({"t.yaml": "heat_template_version: 2018-08-31\nresources:\n"
                               f"  v: {{type: OS::Heat::Value, properties: {{value: {{get_param: {args}}}}}}}\n"})
        validated = cli("template", "validate", "-t", root / "t.yaml")
        assert validated.code == 0, validated.output
        assert f"WARNING: {root / 't.yaml'}:3:" in validated.stderr and message in validated.stderr
        assert "ERROR" not in validated.output
        refused = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
        assert refused.code == 1 and message in refused.output
