"""``template validate`` gives Heat's verdict on what real templates do (issue 12, "Real templates").

Heat's validate checks a template's shape; what it can only know once the values are
there is an error at create.  Each test: a template in, validate's verdict (with the
warnings Stoker adds, at their places), then what a create of the same template does.
"""

from __future__ import annotations

import json

import pytest

from stoker.constraints import custom

MEMBER = """\
heat_template_version: 2016-10-14
parameters:
  name: {type: string}
  size: {type: number}
resources:
  value:
    type: OS::Heat::Value
    properties: {value: {get_param: name}}
outputs:
  name: {value: {get_param: name}}
"""


def validate(cli, template, *args):
    return cli("template", "validate", "-t", template, "-f", "json", *args)


def warnings(run) -> list[tuple]:
    assert run.code == 0, run.output
    return [(w["path"], w["code"], w["line"]) for w in json.loads(run.stdout).get("Warnings", [])]


def errors(run) -> list[tuple]:
    assert run.code == 1, run.output
    return [(e["path"], e["code"], e["message"]) for e in json.loads(run.stdout)]


# -- cause 1: what Heat leaves to create ------------------------------------------------

def test_provider_parameters_without_value_validate_and_fail_at_create(cli, tree):
    root = tree({"member.yaml": MEMBER, "top.yaml": "heat_template_version: 2016-10-14\n"
                 "resources:\n  m:\n    type: member.yaml\n"})
    run = validate(cli, root / "top.yaml")
    assert warnings(run) == [("resources.m.properties", "required-property", 3)] * 2
    assert "Property name not assigned" in run.stdout and "(an error at create)" in run.stdout
    created = cli("stack", "create", "s", "-t", root / "top.yaml", "--wait")
    assert created.code == 1 and "Property name not assigned" in created.output
    assert "an error at create" not in created.output


def test_group_count_from_a_parameter_without_value_validates(cli, tree):
    root = tree({"group.yaml": "heat_template_version: 2016-10-14\nparameters:\n  n: {type: number}\n"
                 "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n    properties:\n"
                 "      count: {get_param: n}\n      resource_def: {type: OS::Heat::None}\n"
                 "outputs:\n  refs: {value: {get_attr: [g, refs]}}\n"})
    assert warnings(validate(cli, root / "group.yaml")) == [
        ("resources.g.properties.count", "missing-parameter", 8)]
    created = cli("stack", "create", "s", "-t", root / "group.yaml", "-P", "n=2", "--wait", "-f", "json")
    assert created.code == 0, created.output
    refs = [o["output_value"] for o in json.loads(created.stdout)["outputs"] if o["output_key"] == "refs"]
    assert len(refs[0]) == 2
    refused = cli("stack", "create", "t", "-t", root / "group.yaml", "--wait")
    assert refused.code == 1 and "The Parameter (n) was not provided." in refused.output


def test_a_resolved_property_value_is_type_checked_at_create(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nparameters:\n"
                 "  many: {type: string, default: lots}\nresources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                 "    properties:\n      count: {get_param: many}\n      resource_def: {type: OS::Heat::None}\n"})
    assert warnings(validate(cli, root / "t.yaml")) == [
        ("resources.g.properties.count", "invalid-property-value", 8)]
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert created.code == 1 and "resources.g.properties.count" in created.output


# -- cause 2: Heat's service constraints -------------------------------------------------

SERVICE_CONSTRAINTS = """\
heat_template_version: 2016-10-14
parameters:
  flavor:
    type: string
    constraints: [{custom_constraint: nova.flavor}]
  image:
    type: string
    default: cirros
    constraints: [{custom_constraint: glance.image}]
resources: {}
outputs:
  flavor: {value: {get_param: flavor}}
"""


def test_service_constraints_accept_values_and_say_they_are_unchecked(cli, tree):
    root = tree({"t.yaml": SERVICE_CONSTRAINTS})
    assert warnings(validate(cli, root / "t.yaml")) == [
        ("parameters.flavor.constraints.0.custom_constraint", "unchecked-constraint", 5),
        ("parameters.image.constraints.0.custom_constraint", "unchecked-constraint", 9),
    ]
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "-P", "flavor=m1.anything", "--wait")
    assert created.code == 0, created.output


def test_every_service_constraint_heat_registers_is_known():
    for name in ("nova.flavor", "nova.keypair", "glance.image", "neutron.network", "neutron.lbaas.pool",
                 "cinder.volume", "keystone.role", "octavia.availabilityzoneprofile", "ironic.node",
                 "zaqar.queue", "nova.network"):
        assert custom.is_unchecked(name), name


def test_a_plugin_check_replaces_the_unchecked_one(cli, tree, monkeypatch):
    monkeypatch.setitem(custom._REGISTRY, "nova.flavor",
                        custom.CustomCheck("nova.flavor", lambda value: value.startswith("m1.")))
    root = tree({"t.yaml": SERVICE_CONSTRAINTS})
    assert [w[1] for w in warnings(validate(cli, root / "t.yaml"))] == ["unchecked-constraint"]  # image only
    refused = cli("stack", "create", "s", "-t", root / "t.yaml", "-P", "flavor=big", "--wait")
    assert refused.code == 1 and "nova.flavor" in refused.output
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "-P", "flavor=m1.small", "--wait")
    assert created.code == 0, created.output


# -- cause 5 ------------------------------------------------------------------------------

UNDEFINED_IN_A_BRANCH = """\
heat_template_version: 2016-10-14
parameters:
  flag: {type: boolean, default: false}
conditions:
  enabled: {get_param: flag}
resources:
  r:
    type: OS::Heat::Value
    properties:
      value: {if: [enabled, {get_param: undefined_one}, plain]}
"""


def test_an_undefined_parameter_fails_only_where_it_is_resolved(cli, tree):
    root = tree({"t.yaml": UNDEFINED_IN_A_BRANCH})
    assert warnings(validate(cli, root / "t.yaml")) == [
        ("resources.r.properties.value.if.1.get_param", "unknown-parameter", 10)]
    assert cli("stack", "create", "s", "-t", root / "t.yaml", "--wait").code == 0
    refused = cli("stack", "create", "t", "-t", root / "t.yaml", "-P", "flag=true", "--wait")
    assert refused.code == 1 and "The Parameter (undefined_one) was not provided." in refused.output


def test_a_json_parameter_defaulting_to_empty_text_gives_it(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nparameters:\n  extra: {type: json, default: ''}\n"
                 "resources: {}\noutputs:\n  extra: {value: {get_param: extra}}\n"})
    assert warnings(validate(cli, root / "t.yaml")) == []
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait", "-f", "json")
    assert created.code == 0, created.output
    assert json.loads(created.stdout)["outputs"][0]["output_value"] == ""


def test_an_unknown_key_in_an_output_is_a_warning(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\noutputs:\n  o:\n    value: 1\n    bogus: 2\n"})
    assert warnings(validate(cli, root / "t.yaml")) == [("outputs.o.bogus", "unknown-key", 5)]


# -- cause 6: errors Heat's validate finds ---------------------------------------------------

def test_an_empty_conditions_section_is_refused_in_heats_words(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nconditions:\nresources: {}\n"})
    assert errors(validate(cli, root / "t.yaml")) == [
        ("conditions", "invalid-section", "Condition definitions must be a map. Found a NoneType instead")]


@pytest.mark.parametrize("resource, path", [
    ("type: OS::Heat::None\n    update_policy: {rolling_update: {max_batch_size: 1}}",
     "resources.r.update_policy.rolling_update"),
    ("type: OS::Heat::ResourceGroup\n    update_policy: {bogus: {}}\n"
     "    properties: {resource_def: {type: OS::Heat::None}}", "resources.r.update_policy.bogus"),
    ("type: OS::Heat::ResourceGroup\n    update_policy: {rolling_update: {max_batch: 1}}\n"
     "    properties: {resource_def: {type: OS::Heat::None}}", "resources.r.update_policy.rolling_update.max_batch"),
])
def test_unknown_update_policy_keys_are_refused(cli, tree, resource, path):
    root = tree({"t.yaml": f"heat_template_version: 2016-10-14\nresources:\n  r:\n    {resource}\n"})
    [(where, code, message)] = errors(validate(cli, root / "t.yaml"))
    assert (where, code) == (path, "unknown-property") and message.startswith("Unknown Property")


def test_a_group_update_policy_heat_knows_is_accepted(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources:\n  r:\n    type: OS::Heat::ResourceGroup\n"
                 "    update_policy:\n      rolling_update: {max_batch_size: 2, min_in_service: 1, pause_time: 0}\n"
                 "      batch_create: {max_batch_size: 1}\n"
                 "    properties: {count: 2, resource_def: {type: OS::Heat::None}}\n"})
    assert warnings(validate(cli, root / "t.yaml")) == []


CONDITIONS = """\
heat_template_version: 2016-10-14
parameters:
  env: {type: string}
conditions:
  prod: {equals: [{get_param: env}, prod]}
  unused: {equals: [{get_param: env}, dev]}
resources:
  r:
    type: OS::Heat::None
    condition: prod
"""


def test_a_condition_in_use_that_needs_a_parameter_without_value_is_refused(cli, tree):
    root = tree({"t.yaml": CONDITIONS,
                 "if.yaml": CONDITIONS.replace("    condition: prod\n", "    properties: {a: {if: [prod, 1, 2]}}\n"),
                 "unused.yaml": CONDITIONS.replace("    condition: prod\n", "")})
    assert errors(validate(cli, root / "t.yaml")) == [
        ("resources.r.condition", "missing-parameter", "The Parameter (env) was not provided.")]
    assert errors(validate(cli, root / "if.yaml")) == [
        ("resources.r.properties.a.if.0", "missing-parameter", "The Parameter (env) was not provided.")]
    assert warnings(validate(cli, root / "unused.yaml")) == []
    assert warnings(validate(cli, root / "t.yaml", "-P", "env=prod")) == []


# -- cause 7 ---------------------------------------------------------------------------------

def test_the_cli_strips_the_template_text_as_heatclient_does(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources: {}\noutputs:\n"
                 "  script:\n    value: |\n      echo hi\n"})
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait", "-f", "json")
    assert created.code == 0, created.output
    assert json.loads(created.stdout)["outputs"][0]["output_value"] == "echo hi"


def test_the_cli_reads_a_template_starting_with_a_brace_as_strict_json(cli, tree):
    root = tree({"t.json": '{"heat_template_version": "2016-10-14",\n "resources": {},\n}\n'})
    run = validate(cli, root / "t.json")
    assert run.code == 1 and '"line": 3' in run.stdout and "invalid JSON" in run.stdout


def test_the_cli_refuses_a_template_naming_a_file_that_is_not_there(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                 "    properties: {count: 1, resource_def: {type: gone.yaml}}\n"})
    run = validate(cli, root / "t.yaml")
    assert run.code == 1 and f"Could not fetch contents for {(root / 'gone.yaml').as_uri()}" in run.stdout


def test_a_snapshot_deletion_policy_needs_a_type_that_can_snapshot(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources:\n"
                 "  r: {type: OS::Heat::None, deletion_policy: snapshot}\n"})
    assert errors(validate(cli, root / "t.yaml")) == [
        ("resources.r.deletion_policy", "invalid-deletion-policy", '"Snapshot" deletion policy not supported')]


def test_resource_facade_in_a_top_level_stack_is_an_error_at_create(cli, tree):
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources: {}\noutputs:\n"
                 "  meta: {value: {resource_facade: metadata}}\n"})
    assert warnings(validate(cli, root / "t.yaml")) == [("outputs.meta.value", "no-facade", 4)]
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait", "-f", "json")
    assert created.code == 0, created.output
    [output] = json.loads(created.stdout)["outputs"]
    assert output["output_value"] is None and "top-level stack has no facade" in output["output_error"]


def test_a_none_resource_policies_are_checked_by_validate_only(cli, tree):
    """As Heat: template validate refuses them; a create of a type mapped to None does not look."""
    root = tree({"t.yaml": "heat_template_version: 2016-10-14\nresources:\n  r:\n    type: My::Group\n"
                 "    deletion_policy: Snapshot\n    update_policy: {RollingUpdate: {MaxBatchSize: 1}}\n",
                 "env.yaml": "resource_registry:\n  My::Group: OS::Heat::None\n"})
    assert [e[0] for e in errors(validate(cli, root / "t.yaml", "-e", root / "env.yaml"))] == [
        "resources.r.deletion_policy"]
    created = cli("stack", "create", "s", "-t", root / "t.yaml", "-e", root / "env.yaml", "--wait")
    assert created.code == 0, created.output


CFN = """\
HeatTemplateFormatVersion: '2012-12-12'
Mappings:
  Sizes: {small: {cpu: 1}}
  Broken: [1, 2]
Resources:
  Resource:
    Type: OS::Heat::Value
    Wibble: bar
    Properties:
      value: {"Fn::FindInMap": [Missing, a, b]}
"""


def test_cfn_extras_heat_lets_through_are_warnings(cli, tree):
    """Other keys in a CFN resource, a Mappings entry that is no map, a mapping no one
    defined: Heat accepts all three (the last fails when resolved)."""
    root = tree({"t.yaml": CFN, "ok.yaml": CFN.replace("[Missing, a, b]", "[Sizes, small, cpu]")})
    assert {w[:2] for w in warnings(validate(cli, root / "t.yaml"))} == {
        ("mappings", "invalid-section"), ("resources.Resource.Wibble", "unknown-key"),
        ("resources.Resource.properties.value.Fn::FindInMap", "unknown-mapping")}
    refused = cli("stack", "create", "s", "-t", root / "t.yaml", "--wait")
    assert refused.code == 1 and "Mappings have no Missing" in refused.output
    created = cli("stack", "create", "s", "-t", root / "ok.yaml", "--wait")
    assert created.code == 0, created.output
