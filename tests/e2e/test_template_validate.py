"""``stoker template validate`` over the template corpus in ``tests/templates/``.

Each invalid template is checked for *every* error it holds: the exact
``(path, code, line, column)`` of each, in order, and a key part of its message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stoker.template.loader import MAX_EXPANDED_NODES, MAX_TEMPLATE_SIZE

SECTIONS = ("heat_template_version, description, parameter_groups, parameters, resources, "
            "outputs, conditions")
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
KEYS_2016_10_14 = ("type, properties, metadata, depends_on, deletion_policy, update_policy, "
                   "description, external_id, condition")


# -- a valid template: Heat's validate output ------------------------------------------

ALL_SECTIONS_OUTPUT = {
    "Description": "Every section of a HOT template, all of them valid.\n",
    "Parameters": {
        "name": {
            "Type": "String",
            "Description": "The name of the web server",
            "NoEcho": "false",
            "Label": "Server name",
            "Default": "web",
            "Tags": ["naming", "web"],
            "MinLength": 2,
            "MaxLength": 10,
            "AllowedPattern": "[a-z][a-z0-9-]*",
            "ConstraintDescription": "between two and ten characters",
        },
        "port": {
            "Type": "Number",
            "Description": "",
            "NoEcho": "false",
            "Label": "port",
            "Default": 8080,
            "MinValue": 1024,
            "MaxValue": 65535,
        },
        "password": {
            "Type": "String",
            "Description": "",
            "NoEcho": "true",
            "Label": "password",
            "Default": "******",
        },
        "flags": {
            "Type": "CommaDelimitedList",
            "Description": "",
            "NoEcho": "false",
            "Label": "flags",
            "Default": ["a", "b"],
        },
        "settings": {
            "Type": "Json",
            "Description": "",
            "NoEcho": "false",
            "Label": "settings",
            "Default": {"debug": False},
        },
        "enabled": {
            "Type": "Boolean",
            "Description": "",
            "NoEcho": "false",
            "Label": "enabled",
            "Default": True,
        },
    },
    "ParameterGroups": [
        {"label": "Web", "description": "How the web tier looks", "parameters": ["name", "port"]},
        {"label": "Secrets", "parameters": ["password"]},
    ],
}


def test_every_section_validates_to_heats_output(stoker):
    run = stoker.validate("valid/all_sections.yaml").expect(0)
    assert run.json == ALL_SECTIONS_OUTPUT
    assert list(run.json["Parameters"]) == ["name", "port", "password", "flags", "settings", "enabled"]
    assert run.stderr == ""
    assert "not-so-secret" not in run.output


def test_validate_yaml_and_table_formats_print_the_same_document(stoker):
    import yaml

    for fmt in ("yaml", "table"):
        run = stoker.validate("valid/all_sections.yaml", fmt=fmt).expect(0)
        assert yaml.safe_load(run.stdout) == ALL_SECTIONS_OUTPUT


def test_template_without_description_or_parameters(stoker):
    assert stoker.valid("versions/new_in_2015-10-15.yaml") == {
        "Description": "Functions that 2015-10-15 adds.",
        "Parameters": {},
    }
    assert stoker.valid("valid/pseudo_parameters.yaml")["Parameters"] == {}


def test_constraints_show_up_in_the_validate_output(stoker):
    params = stoker.valid("valid/constraints.yaml")["Parameters"]
    base = {"Description": "", "NoEcho": "false"}
    assert params["length_plain"] == {**base, "Type": "String", "Label": "length_plain",
                                      "Default": "abc", "MinLength": 2, "MaxLength": 4}
    assert params["length_described"] == {**base, "Type": "String", "Label": "length_described",
                                          "Default": "abc", "MinLength": 2, "MaxLength": 4,
                                          "ConstraintDescription": "Two to four characters"}
    assert params["length_min_only"] == {**base, "Type": "CommaDelimitedList",
                                         "Label": "length_min_only", "Default": "a,b",
                                         "MinLength": 2}
    assert params["length_json"] == {**base, "Type": "Json", "Label": "length_json",
                                     "Default": {"a": 1}, "MaxLength": 1}
    assert params["range_described"] == {**base, "Type": "Number", "Label": "range_described",
                                         "Default": 5, "MinValue": 1, "MaxValue": 10,
                                         "ConstraintDescription": "From one to ten"}
    assert params["range_max_only"] == {**base, "Type": "Number", "Label": "range_max_only",
                                        "Default": 0.5, "MaxValue": 1}
    assert params["modulo_plain"] == {**base, "Type": "Number", "Label": "modulo_plain",
                                      "Default": 7, "Step": 2, "Offset": 1}
    assert params["modulo_described"]["ConstraintDescription"] == "An odd number"
    assert params["values_plain"]["AllowedValues"] == ["m1.small", "m1.large"]
    assert "ConstraintDescription" not in params["values_plain"]
    assert params["values_described"]["ConstraintDescription"] == "A known flavor"
    assert params["values_number"]["AllowedValues"] == [80, 443]
    assert params["values_boolean"]["AllowedValues"] == [True]
    assert params["pattern_plain"]["AllowedPattern"] == "[a-z]+-[0-9]+"
    assert params["pattern_described"]["ConstraintDescription"] == "name-number"
    assert params["custom_plain"]["CustomConstraint"] == "ip_addr"
    assert params["custom_described"] == {**base, "Type": "String", "Label": "custom_described",
                                          "Default": "10.0.0.0/8", "CustomConstraint": "net_cidr",
                                          "ConstraintDescription": "A network in CIDR notation"}
    # several constraints: every key, descriptions joined in order
    assert params["several"] == {**base, "Type": "String", "Label": "several", "Default": "ab",
                                 "MinLength": 1, "MaxLength": 3, "AllowedValues": ["ab", "cd"],
                                 "AllowedPattern": "[a-c]+",
                                 "ConstraintDescription": "Short. Only a, b or c."}


VALID = sorted(str(p.relative_to(TEMPLATES)) for p in (TEMPLATES / "valid").glob("*.*")) + [
    "environments/template.yaml", "versions/release_names.yaml"]


@pytest.mark.parametrize("template", VALID)
def test_valid_templates_validate(stoker, template):
    """Every template of ``valid/`` passes (required parameters may be missing)."""
    run = stoker.validate(template).expect(0)
    assert set(run.json) <= {"Description", "Parameters", "ParameterGroups", "Warnings"}


def test_a_json_template(stoker):
    assert stoker.valid("valid/template.json") == {
        "Description": "A template written in JSON",
        "Parameters": {
            "count": {"Type": "Number", "Description": "", "NoEcho": "false", "Label": "count",
                      "Default": 3, "MinValue": 1, "MaxValue": 5},
            "names": {"Type": "CommaDelimitedList", "Description": "", "NoEcho": "false",
                      "Label": "names", "Default": ["a", "b"]},
        },
    }


def test_yaml_aliases_are_expanded(stoker):
    params = stoker.valid("valid/aliases.yaml")["Parameters"]
    assert params["other_size"] == {**params["size"], "Label": "other_size"}


# -- invalid templates: every error, with its place ------------------------------------

INVALID = {
    "invalid/unknown_section.yaml": [
        ("resource", "unknown-section", 7, 1,
         f'"resource" is not a valid template section; valid sections: {SECTIONS}'),
        ("mappings", "unknown-section", 13, 1, '"mappings" is not a valid template section'),
    ],
    "invalid/section_types.yaml": [
        ("resources", "invalid-section", 5, 1, 'the "resources" section must be a map'),
        ("outputs", "invalid-section", 6, 1, 'the "outputs" section must be a map'),
        ("conditions", "invalid-section", 7, 1, "Condition definitions must be a map. Found a list instead"),
        ("parameters", "invalid-section", 4, 1, 'the "parameters" section must be a map'),
        ("parameter_groups", "invalid-parameter-groups", 3, 1,
         "parameter_groups must be a list of groups"),
    ],
    "invalid/resources.yaml": [
        ("resources.no_type", "missing-type", 5, 3, 'Resource no_type is missing "type"'),
        ("resources.not_a_map", "invalid-resource", 7, 3,
         'resource "not_a_map" must be a map with at least a "type"'),
        ("resources.numeric_type.type", "invalid-type", 9, 5,
         'Resource numeric_type "type" must be a string'),
        ("resources.typo_keys.propertes", "unknown-key", 12, 5,
         '"propertes" is not a valid keyword inside a resource definition '
         f"(heat_template_version 2016-10-14 allows: {KEYS_2016_10_14})"),
        ("resources.typo_keys.dependson", "unknown-key", 13, 5,
         '"dependson" is not a valid keyword inside a resource definition'),
        ("resources.bad_fields.properties", "invalid-resource-field", 16, 5,
         '"properties" of resource bad_fields must be a map'),
        ("resources.bad_fields.metadata", "invalid-resource-field", 17, 5,
         '"metadata" of resource bad_fields must be a map'),
        ("resources.bad_fields.update_policy", "invalid-resource-field", 18, 5,
         '"update_policy" of resource bad_fields must be a map'),
        ("resources.bad_policy.deletion_policy", "invalid-deletion-policy", 21, 5,
         'Invalid deletion policy "Destroy" (allowed in 2016-10-14: Delete, Retain, Snapshot, '
         "delete, retain, snapshot)"),
        ("resources.bad_depends_on.depends_on", "invalid-depends-on", 24, 5,
         "depends_on must be a resource name or a list of resource names"),
        ("resources.bad_external_id.external_id", "invalid-external-id", 27, 5,
         "external_id must be a string"),
    ],
    "invalid/outputs.yaml": [
        ("outputs.no_value", "missing-value", 5, 3,
         'Each output must contain a value key ("no_value" has none)'),
        ("outputs.not_a_map", "invalid-output", 7, 3, 'output "not_a_map" must be a map with a "value"'),
    ],  # outputs.typo's extra key "valu" is a warning: Heat ignores it
    "invalid/parameters.yaml": [
        ("parameters.not_a_map", "invalid-parameter", 5, 3,
         'parameter "not_a_map" must be a map with at least a type'),
        ("parameters.no_type", "invalid-parameter-type", 6, 3,
         "the parameter has no type; use one of string, number, comma_delimited_list, json, boolean"),
        ("parameters.unknown_type.type", "invalid-parameter-type", 9, 5,
         '"integer" is not a parameter type'),
        ("parameters.typo_key.defualt", "unknown-key", 12, 5,
         '"defualt" is not a valid parameter key; valid keys: type, label, description, default, '
         "hidden, constraints, immutable, tags"),
        ("parameters.bad_hidden.hidden", "invalid-parameter-attribute", 15, 5,
         'hidden must be true or false, not "yes"'),
        ("parameters.bad_immutable.immutable", "invalid-parameter-attribute", 18, 5,
         "immutable must be true or false, not 1"),
        ("parameters.bad_tags.tags", "invalid-parameter-attribute", 21, 5,
         "tags must be a list of strings"),
        ("parameters.constraints_not_a_list.constraints", "invalid-constraint", 24, 5,
         "constraints must be a list"),
        ("parameters.constraint_not_a_map.constraints.0", "invalid-constraint", 27, 19,
         "a constraint must be a map"),
        ("parameters.unknown_constraint.constraints.0.max_length", "invalid-constraint", 31, 9,
         '"max_length" is not a constraint type; use one of length, range, modulo, allowed_values, '
         "allowed_pattern, custom_constraint"),
        ("parameters.two_constraints_in_one.constraints.0", "invalid-constraint", 35, 9,
         "a constraint must have exactly one constraint type (found range, modulo)"),
        ("parameters.no_constraint_type.constraints.0", "invalid-constraint", 40, 9,
         "a constraint must have exactly one constraint type"),
        ("parameters.wrong_type_for_constraint.constraints.0.length", "invalid-constraint", 44, 9,
         "length constraints do not apply to number parameters"),
        ("parameters.wrong_type_for_constraint.constraints.1.allowed_pattern", "invalid-constraint",
         45, 9, "allowed_pattern constraints do not apply to number parameters (only to: string)"),
        ("parameters.range_on_string.constraints.0.range", "invalid-constraint", 49, 9,
         "range constraints do not apply to string parameters (only to: number)"),
        ("parameters.bad_range_arguments.constraints.0.range", "invalid-constraint", 53, 9,
         'the min of a range constraint must be a number, not "one"'),
        ("parameters.bad_range_arguments.constraints.1.range", "invalid-constraint", 54, 9,
         '"minimum" is not valid in a range constraint; use min, max'),
        ("parameters.bad_range_arguments.constraints.2.range", "invalid-constraint", 55, 9,
         "a range constraint must be a map with min and/or max"),
        ("parameters.bad_modulo_arguments.constraints.0.modulo", "invalid-constraint", 59, 9,
         'the step of a modulo constraint must be a number, not "two"'),
        ("parameters.unknown_custom_constraint.constraints.0.custom_constraint",
         "invalid-constraint", 63, 9, '"acme.flavor" is not a known custom constraint'),
        ("parameters.description_not_a_string.constraints.0.description", "invalid-constraint",
         68, 9, "a constraint description must be a string"),
        ("parameters.bad_pattern.constraints.0.allowed_pattern", "invalid-constraint", 72, 9,
         'allowed_pattern "[unclosed" is not a valid regular expression'),
        ("parameters.allowed_values_not_a_list.constraints.0.allowed_values", "invalid-constraint",
         76, 9, 'allowed_values must be a list, not "abc"'),
    ],
    "invalid/constraint_arguments.yaml": [
        ("parameters.modulo_without_offset.constraints.0.modulo", "invalid-constraint", 8, 9,
         "a modulo constraint needs both a step and an offset"),
        ("parameters.modulo_step_zero.constraints.0.modulo", "invalid-constraint", 12, 9,
         "the step of a modulo constraint cannot be 0"),
        ("parameters.modulo_offset_too_big.constraints.0.modulo", "invalid-constraint", 16, 9,
         "the offset of a modulo constraint must be smaller than its step"),
        ("parameters.modulo_not_integral.constraints.0.modulo", "invalid-constraint", 20, 9,
         "must be integers, not 1.5"),
        ("parameters.modulo_signs_differ.constraints.0.modulo", "invalid-constraint", 24, 9,
         "must have the same sign"),
        ("parameters.range_empty.constraints.0.range", "invalid-constraint", 28, 9,
         "a range constraint needs a min value, a max value or both"),
        ("parameters.length_empty.constraints.0.length", "invalid-constraint", 32, 9,
         "a length constraint needs a min value, a max value or both"),
    ],
    "invalid/defaults.yaml": [
        ("parameters.number_default.default", "invalid-default", 7, 5,
         'the default value is invalid: "ten" is not a number'),
        ("parameters.boolean_default.default", "invalid-default", 10, 5,
         'the default value is invalid: "maybe" is not a boolean; use one of t, true, on, y, yes, 1 '
         "(true) or f, false, off, n, no, 0 (false)"),
        ("parameters.json_default.default", "invalid-default", 13, 5,
         "the default value is invalid: the value is not valid JSON"),
        ("parameters.json_scalar_default.default", "invalid-default", 16, 5,
         "the default value is invalid: 42 is not a JSON map or list"),
        ("parameters.list_default.default", "invalid-default", 19, 5,
         'the default value is invalid: {"a": "map"} is neither a comma-delimited string nor a list'),
        ("parameters.string_default.default", "invalid-default", 22, 5,
         'the default value is invalid: {"a": "map"} is not a string'),
        ("parameters.too_long.default", "invalid-default", 25, 5,
         "the default value is invalid: length (6) is out of range (min: None, max: 3)"),
        ("parameters.out_of_range.default", "invalid-default", 30, 5,
         "the default value is invalid: At least one"),
        ("parameters.not_a_multiple.default", "invalid-default", 36, 5,
         "the default value is invalid: 3 is not a multiple of 2 with an offset of 0"),
        ("parameters.not_allowed.default", "invalid-default", 41, 5,
         'the default value is invalid: "purple" is not an allowed value ["red", "green"]'),
        ("parameters.not_matching.default", "invalid-default", 46, 5,
         'the default value is invalid: "ABC" does not match pattern "[a-z]+"'),
        # custom constraints are checked when the default is used, as in Heat
        ("parameters.custom_is_checked_when_used", "constraint-violation", 49, 3,
         "Error validating value 'not-an-ip': Invalid IP address"),
    ],
    "invalid/parameter_groups.yaml": [
        ("parameter_groups.1.parameters.0", "invalid-parameter-groups", 8, 18,
         'the parameter "first" must be in one parameter group only'),
        ("parameter_groups.1.parameters.1", "invalid-parameter-groups", 8, 25,
         '"ghost" does not reference a parameter of the template'),
        ("parameter_groups.1.parameters.2", "invalid-parameter-groups", 8, 32,
         "42 does not reference a parameter of the template"),
        ("parameter_groups.2", "invalid-parameter-groups", 9, 5,
         "each parameter group must have a list of parameters"),
        ("parameter_groups.3.parameters", "invalid-parameter-groups", 12, 5,
         "the parameters of a parameter group must be a list"),
        ("parameter_groups.4", "invalid-parameter-groups", 13, 5,
         "a parameter group must be a map with a list of parameters"),
    ],
    "invalid/parameter_groups_not_a_list.yaml": [
        ("parameter_groups", "invalid-parameter-groups", 2, 1,
         "parameter_groups must be a list of groups"),
    ],
    "invalid/conditions.yaml": [
        ("conditions.a_string", "invalid-condition", 8, 3,
         "The definition of condition \"a_string\" is invalid: 'hello' "
         "(expected a boolean or a condition function)"),
        ("conditions.a_number", "invalid-condition", 9, 3,
         'The definition of condition "a_number" is invalid: 3'),
        ("conditions.a_list", "invalid-condition", 10, 3,
         'The definition of condition "a_list" is invalid'),
        ("conditions.uses_get_resource.equals.0.get_resource", "function-not-allowed-here", 11, 33,
         'The function "get_resource" is not allowed in conditions; conditions may use only '
         "condition functions and may not reference resources"),
        ("conditions.uses_get_attr.not.get_attr", "function-not-allowed-here", 12, 25,
         'The function "get_attr" is not allowed in conditions'),
        ("conditions.uses_str_replace.str_replace", "function-not-allowed-here", 13, 22,
         'The function "str_replace" is not allowed in conditions'),
        ("conditions.uses_if.if", "function-not-allowed-here", 14, 13,
         'The function "if" is not allowed in conditions'),
        ("conditions.unknown_reference.not", "unknown-condition", 15, 23,
         'Invalid condition "nonexistent"'),
        ("conditions.misspelt_reference.or", "unknown-condition", 16, 24,
         'Invalid condition "godo"; did you mean "good"?'),
        ("conditions.equals_one_arg.equals", "invalid-function-arguments", 17, 20,
         'Arguments to "equals" must be of the form: [value_1, value_2]'),
        ("conditions.and_one_arg.and", "invalid-function-arguments", 18, 17,
         'The minimum number of condition arguments to "and" is 2.'),
        ("conditions.or_not_a_list.or", "invalid-function-arguments", 19, 19,
         'Arguments to "or" must be a list of conditions'),
        ("conditions.not_a_number.not", "invalid-condition", 20, 18,
         'Invalid condition 5 in "not"'),
    ],
    "invalid/condition_references.yaml": [
        ("resources.box.condition", "unknown-condition", 10, 5, 'Invalid condition "is_production"'),
        ("resources.other.condition.get_resource", "function-not-allowed-here", 13, 17,
         'The function "get_resource" is not allowed in conditions'),
        ("resources.third.condition", "invalid-condition", 16, 5,
         "a condition must be a condition name, a boolean or a condition function"),
        ("outputs.out.condition", "unknown-condition", 21, 5, 'Invalid condition "missing"'),
        ("outputs.chosen.value.if", "unknown-condition", 23, 13,
         'Invalid condition "is_prd"; did you mean "is_prod"?'),
        ("outputs.not_a_condition.value.if", "invalid-condition", 25, 13,
         'Invalid condition ["is_prod"] in "if"'),
    ],
    "invalid/dependencies.yaml": [
        ("resources.c.depends_on.1", "unknown-resource", 15, 21,
         '"ghost" (in depends_on of c) is not a resource of this template'),
        ("resources.d.depends_on", "unknown-resource", 18, 5,
         '"phantom" (in depends_on of d) is not a resource of this template'),
        ("resources.d.metadata.ref.get_resource", "unknown-resource", 20, 13,
         'The specified reference "nobody" (in get_resource) is incorrect: there is no such resource'),
        ("resources.d.metadata.att.get_attr", "unknown-resource", 21, 13,
         'The specified reference "nothing" (in get_attr) is incorrect'),
        ("resources.a", "dependency-cycle", 5, 3, "Circular Dependency Found: a -> b -> a"),
        ("resources.e", "dependency-cycle", 22, 3, "Circular Dependency Found: e -> f -> g -> e"),
        ("outputs.missing.value.get_attr", "unknown-resource", 34, 21,
         'The specified reference "missing" (in get_attr) is incorrect'),
    ],
    # get_param's arguments are not among them: Heat checks them where it resolves the call
    "invalid/functions.yaml": [
        ("outputs.get_resource_list.value.get_resource", "invalid-function-arguments", 17, 31,
         'Argument to "get_resource" must be a resource name, not a list'),
        ("outputs.get_attr_no_list.value.get_attr", "invalid-function-arguments", 18, 30,
         'Arguments to "get_attr" must be of the form [resource_name, (attribute), (path), ...]'),
        ("outputs.list_join_no_list.value.list_join", "invalid-function-arguments", 19, 31,
         'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"] ...]'),
        ("outputs.list_join_delimiter.value.list_join", "invalid-function-arguments", 20, 33,
         '"list_join" delimiter must be a string, not a number'),
        ("outputs.list_join_number_item.value.list_join", "invalid-function-arguments", 21, 35,
         'Items to join must be string, map or list not 1 (in "list_join")'),
        ("outputs.str_replace_no_params.value.str_replace", "invalid-function-arguments", 22, 35,
         '"str_replace" syntax should be str_replace: {template:'),
        ("outputs.str_replace_params_list.value.str_replace", "invalid-function-arguments", 23, 37,
         '"str_replace" parameters must be a mapping'),
        ("outputs.str_split_short.value.str_split", "invalid-function-arguments", 26, 29,
         'Incorrect arguments to "str_split" should be: "str_split" : [ ",", "apples,pears", <index>]'),
        ("outputs.repeat_no_for_each.value.repeat", "invalid-function-arguments", 28, 32,
         '"repeat" syntax should be repeat:'),
        ("outputs.repeat_for_each_list.value.repeat", "invalid-function-arguments", 29, 34,
         'The "for_each" argument to "repeat" must contain a map'),
        ("outputs.map_merge_list_item.value.map_merge", "invalid-function-arguments", 30, 33,
         'Incorrect arguments: Items to merge must be maps. ["b"] is a list instead of a map'),
        ("outputs.map_replace_bad.value.map_replace", "invalid-function-arguments", 31, 29,
         'Incorrect arguments to "map_replace" should be:'),
        ("outputs.yaql_syntax.value.yaql", "yaql-error", 32, 25,
         'Bad expression in "yaql": Parse error: unexpected end of statement'),
        ("outputs.yaql_no_expression.value.yaql", "invalid-function-arguments", 33, 32,
         '"yaql" syntax should be yaql: {expression:'),
        ("outputs.if_one_arg.value.if", "invalid-function-arguments", 34, 24,
         'Arguments to "if" must be of the form:'),
        ("outputs.if_unknown_condition.value.if", "unknown-condition", 35, 34,
         'Invalid condition "enabld"; did you mean "enabled"?'),
        ("outputs.filter_not_list.value.filter", "invalid-function-arguments", 36, 29,
         '"filter" only works with lists, not a string'),
        ("outputs.make_url_port.value.make_url", "invalid-function-arguments", 37, 27,
         'Invalid URL port 99999 for "make_url", must be in range 1-65535'),
        ("outputs.make_url_unknown_part.value.make_url", "invalid-function-arguments", 38, 35,
         'Invalid arguments to "make_url": user'),
        ("outputs.list_concat_not_lists.value.list_concat", "invalid-function-arguments", 39, 35,
         "Incorrect arguments: Items to concat must be lists."),
        ("outputs.contains_no_sequence.value.contains", "invalid-function-arguments", 40, 34,
         'Second argument to "contains" should be a sequence, not a number.'),
    ],
    "invalid/get_file.yaml": [
        ("outputs.missing.value.get_file", "missing-file", 9, 21,
         'No content found in the "files" section for get_file path: files/no-such-file.txt'),
        ("outputs.computed.value.get_file", "invalid-function-arguments", 10, 22,
         'The argument of "get_file" must be a static path, not a function'),
        ("outputs.not_a_string.value.get_file", "invalid-function-arguments", 11, 26,
         'Argument to "get_file" must be a string (a file path or URL)'),
        ("outputs.remote.value.get_file", "missing-file", 12, 20,
         "get_file path: https://example.com/greeting.txt"),
    ],
    "invalid/everywhere.yaml": [
        ("extras", "unknown-section", 28, 1, '"extras" is not a valid template section'),
        ("parameters.size.type", "invalid-parameter-type", 9, 5, '"integer" is not a parameter type'),
        ("parameters.count.default", "invalid-default", 12, 5,
         'the default value is invalid: "many" is not a number'),
        ("parameter_groups.0.parameters.1", "invalid-parameter-groups", 5, 25,
         '"colour" does not reference a parameter of the template'),
        ("conditions.big.equals", "invalid-function-arguments", 15, 9,
         'Arguments to "equals" must be of the form: [value_1, value_2]'),
        ("resources.server.depends_on.0", "unknown-resource", 20, 18,
         '"database" (in depends_on of server) is not a resource of this template'),
        ("resources.server.properties.value.get_attr", "unknown-resource", 22, 15,
         'The specified reference "server2" (in get_attr) is incorrect'),
        ("outputs.address.value.str_replace", "invalid-function-arguments", 26, 13,
         '"str_replace" syntax should be'),
    ],
    "invalid/template.json": [
        ("parameters.count.default", "invalid-default", 4, 33,
         'the default value is invalid: "three" is not a number'),
        ("resources.box.depends_on.0", "unknown-resource", 7, 54,
         '"ghost" (in depends_on of box) is not a resource of this template'),
        ("outputs.joined.value.list_join", "invalid-function-arguments", 10, 26,
         'Incorrect arguments to "list_join" should be'),
    ],
    # the top level
    "invalid/not_a_map.yaml": [("", "invalid-template", 1, 1, "a template must be a map of sections")],
    "invalid/empty.yaml": [("", "invalid-template", None, None, "a template must be a map of sections")],
    "invalid/missing_version.yaml": [
        ("", "missing-version", 1, 1, "the template has no heat_template_version"),
    ],
    "invalid/unknown_version.yaml": [
        ("heat_template_version", "unknown-version", 1, 1,
         '"2019-01-01" is not a known heat_template_version; known: 2013-05-23, 2014-10-16, '
         "2015-04-30, 2015-10-15, 2016-04-08, 2016-10-14, 2017-02-24, 2017-09-01, 2018-03-02, "
         "2018-08-31, 2021-04-16 (or the release names newton, ocata, pike, queens, rocky, wallaby)"),
    ],
    "invalid/cfn_unknown_version.yaml": [
        ("AWSTemplateFormatVersion", "unknown-version", 1, 1,
         '"2011-01-01" is not a known AWSTemplateFormatVersion; known: 2010-09-09'),
    ],
    # YAML syntax errors: the place PyYAML reports
    "invalid/syntax_error.yaml": [
        ("", "invalid-syntax", 8, 8,
         "invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"),
    ],
    "invalid/bad_indentation.yaml": [
        ("", "invalid-syntax", 5, 4,
         "invalid YAML: did not find expected key (while parsing a block mapping)"),
    ],
    "invalid/tab_indentation.yaml": [
        ("", "invalid-syntax", 3, 1, "invalid YAML: found character that cannot start any token"),
    ],
}


@pytest.mark.parametrize("template", sorted(INVALID))
def test_invalid_template_reports_every_error(stoker, template):
    run = stoker.validate(template).expect(1)
    stoker.assert_errors(run.json, INVALID[template], file=template)


def test_errors_heat_shows_on_an_output_are_warnings(stoker):
    """Heat creates the stack and puts these on the output's ``output_error``."""
    warnings = stoker.validate("invalid/functions.yaml").expect(1).warnings
    for place, code in [("24:39: outputs.str_replace_strict_unused.value.str_replace_strict", "unused-param"),
                        ("25:39: outputs.str_replace_vstrict_empty.value.str_replace_vstrict", "empty-param"),
                        ("27:30: outputs.digest_algorithm.value.digest", "unknown-algorithm"),
                        ("14:31: outputs.get_param_unknown.value.get_param", "unknown-parameter"),
                        # an error inside the arguments of a function is placed at the inner function
                        ("41:51: outputs.nested_inner_error.value.list_join.1.0.get_param", "unknown-parameter")]:
        assert any(f"invalid/functions.yaml:{place}: " in line and line.endswith(f"[{code}]")
                   for line in warnings), (place, warnings)


@pytest.mark.parametrize("template", ["invalid/resources.yaml", "invalid/dependencies.yaml"])
def test_errors_without_json_go_to_stderr_one_line_each(stoker, template):
    run = stoker.validate(template, fmt="table").expect(1)
    assert run.stdout == ""
    errors = stoker.validate(template).json
    assert run.stderr.splitlines() == [
        f"ERROR: {e['file']}:{e['line']}:{e['column']}: {e['path']}: {e['message']} [{e['code']}]"
        for e in errors
    ]


def test_errors_in_yaml_format(stoker):
    import yaml

    run = stoker.validate("invalid/outputs.yaml", fmt="yaml").expect(1)
    assert yaml.safe_load(run.stdout) == stoker.validate("invalid/outputs.yaml").json


def test_static_result_errors_are_reported_by_resolve(stoker):
    errors = stoker.resolve_errors("invalid/static_results.yaml")
    stoker.assert_errors(errors, [
        ("resources.box.properties.value.str_split", "invalid-function-arguments", 8, 15,
         "str_split"),
        ("outputs.collision.value.map_replace", "key-collision", 11, 23,
         'key replacement b collides with a key in the input map (in "map_replace")'),
    ], file="invalid/static_results.yaml")


def test_static_result_errors_are_create_time_warnings_of_validate(stoker):
    """Heat's validate evaluates neither properties nor outputs: it accepts the template,
    and Stoker warns of what the create will refuse, at its place."""
    warnings = stoker.validate_warnings("invalid/static_results.yaml")
    assert stoker.places(warnings) == [
        ("resources.box.properties.value.str_split", "invalid-function-arguments", 8, 15),
        ("outputs.collision.value.map_replace", "key-collision", 11, 23),
    ]
    assert all(w["message"].endswith("(an error at create)") for w in warnings)


# -- bugs found on the way (fixed; kept as regression tests) -------------------------------

def test_condition_cycles_are_reported_by_validate(stoker):
    errors = stoker.validate_errors("invalid/condition_cycle.yaml")
    assert [(e["path"], e["code"]) for e in errors] == [
        ("conditions.first", "condition-cycle"),
        ("conditions.second", "condition-cycle"),
        ("conditions.itself", "condition-cycle"),
    ]


def test_a_resource_depending_on_itself_is_a_cycle(stoker):
    errors = stoker.validate_errors("invalid/self_dependency.yaml")
    assert [(e["path"], e["code"]) for e in errors] == [
        ("resources.narcissus", "dependency-cycle"),
        ("resources.echo", "dependency-cycle"),
    ]


def test_a_badly_declared_parameter_is_reported_once(stoker):
    errors = stoker.validate_errors("invalid/bad_parameter_used.yaml")
    assert stoker.places(errors) == [
        ("parameters.size.type", "invalid-parameter-type", 11, 5),
    ]


def test_duplicate_keys_point_at_the_definition_used(stoker):
    errors = stoker.validate_errors("invalid/duplicate_keys.yaml")
    assert stoker.places(errors) == [
        ("resources.box.depends_on", "unknown-resource", 9, 5),
    ]


# -- warnings ------------------------------------------------------------------------------

def test_function_look_alikes_are_warnings_on_stderr(stoker):
    run = stoker.validate("valid/look_alikes.yaml").expect(0)
    file = "valid/look_alikes.yaml"
    assert run.warnings == [
        f'WARNING: {file}:9:21: resources.box.properties.value.typo_attr.get_atr: "get_atr" is not '
        'a function, so it is kept as plain data; did you mean "get_attr"? [function-look-alike]',
        f'WARNING: {file}:10:25: resources.box.properties.value.typo_resource.get_resorce: '
        '"get_resorce" is not a function, so it is kept as plain data; did you mean "get_resource"? '
        "[function-look-alike]",
        f'WARNING: {file}:11:24: resources.box.properties.value.typo_replace.str_replce: '
        '"str_replce" is not a function, so it is kept as plain data; did you mean "str_replace"? '
        "[function-look-alike]",
        f'WARNING: {file}:12:19: resources.box.properties.value.too_new.filter: "filter" is not a '
        "function in heat_template_version 2016-10-14, so it is kept as plain data; it needs "
        "heat_template_version 2017-02-24 or later [function-look-alike]",
        f'WARNING: {file}:18:26: outputs.kept_as_data.value.get_atr: "get_atr" is not a function, '
        'so it is kept as plain data; did you mean "get_attr"? [function-look-alike]',
        f'WARNING: {file}:19:31: outputs.too_new_in_output.value.list_concat: "list_concat" is not '
        "a function in heat_template_version 2016-10-14, so it is kept as plain data; it needs "
        "heat_template_version 2017-09-01 or later [function-look-alike]",
    ]
    # the JSON document on stdout is untouched by the warnings
    assert run.json["Description"].startswith("Maps that look like function calls")


def test_warnings_do_not_hide_errors(stoker):
    run = stoker.validate("versions/condition_functions_2016-10-14.yaml").expect(1)
    assert run.warnings == [
        "WARNING: versions/condition_functions_2016-10-14.yaml:8:13: conditions.has_az1.contains: "
        '"contains" is not a function in heat_template_version 2016-10-14, so it is kept as plain '
        "data; it needs heat_template_version 2017-09-01 or later [function-look-alike]",
    ]
    assert stoker.places(run.json) == [
        ("conditions.has_az1", "invalid-condition", 8, 3),
        ("conditions.two_zones.yaql", "function-not-allowed-here", 9, 15),
    ]


# -- loading limits ------------------------------------------------------------------------

def test_yaml_alias_bomb_is_rejected_by_counting_nodes(stoker):
    run = stoker.validate("invalid/alias_bomb.yaml").expect(1)
    stoker.assert_errors(run.json, [
        ("", "invalid-syntax", None, None,
         f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes; refusing a possible alias bomb"),
    ], file="invalid/alias_bomb.yaml")


def test_yaml_alias_bomb_is_rejected_by_the_real_command(stoker_process):
    run = stoker_process("template", "validate", "-t", "invalid/alias_bomb.yaml", "-f", "json",
                         timeout=30).expect(1)
    assert [(e["code"], e["message"]) for e in run.json] == [(
        "invalid-syntax", f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes; refusing a possible alias bomb")]


def _template_of_size(size: int) -> str:
    head = "heat_template_version: 2016-10-14\ndescription: "
    text = head + "x" * (size - len(head) - 1) + "\n"
    assert len(text.encode()) == size
    return text


def test_template_over_512_kib_is_rejected(stoker, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(_template_of_size(MAX_TEMPLATE_SIZE + 1))
    run = stoker.validate(str(path)).expect(1)
    stoker.assert_errors(run.json, [
        ("", "invalid-syntax", None, None,
         f"template is {MAX_TEMPLATE_SIZE + 1} bytes, over the limit of 524288 bytes "
         "(max_template_size)"),
    ], file=str(path))


def test_template_of_exactly_512_kib_is_accepted(stoker, tmp_path):
    assert MAX_TEMPLATE_SIZE == 512 * 1024
    path = tmp_path / "limit.yaml"
    path.write_text(_template_of_size(MAX_TEMPLATE_SIZE))
    assert stoker.valid(str(path))["Parameters"] == {}


def test_size_limit_counts_bytes_not_characters(stoker, tmp_path):
    """A template of fewer characters than the limit but more bytes (é is 2 bytes)."""
    head = "heat_template_version: 2016-10-14\ndescription: "
    text = head + "é" * (MAX_TEMPLATE_SIZE // 2) + "\n"
    assert len(text) < MAX_TEMPLATE_SIZE < len(text.encode())
    path = tmp_path / "wide.yaml"
    path.write_text(text, encoding="utf-8")
    errors = stoker.validate_errors(str(path))
    assert [e["code"] for e in errors] == ["invalid-syntax"]
    assert "over the limit of 524288 bytes" in errors[0]["message"]


def test_missing_template_file(stoker):
    errors = stoker.validate_errors("no/such/template.yaml")
    assert [(e["code"], e["message"]) for e in errors] == [
        ("unreadable-file", "cannot read no/such/template.yaml: No such file or directory"),
    ]


# -- get_file -----------------------------------------------------------------------------

def test_get_file_reads_files_next_to_the_template_from_any_directory(stoker, monkeypatch,
                                                                       tmp_path):
    template = TEMPLATES / "valid" / "get_file.yaml"
    monkeypatch.chdir(tmp_path)  # nowhere near the template
    assert stoker.resolved(str(template))["outputs"] == {
        "greeting": "Hello from a file next to the template.\n",
        "dot_path": "Hello from a file next to the template.\n",
        "in_a_string": 'settings: {"port": 8080}\n',
    }


def test_get_file_of_a_missing_file_from_another_directory(stoker, monkeypatch, tmp_path):
    template = TEMPLATES / "invalid" / "get_file.yaml"
    monkeypatch.chdir(tmp_path)
    errors = stoker.validate_errors(str(template))
    stoker.assert_errors(errors, INVALID["invalid/get_file.yaml"], file=str(template))


# -- hidden parameters: never printed ------------------------------------------------------

SECRET = "Sup3rS3cretPassw0rd"


@pytest.mark.parametrize("value", [SECRET, "short", "has space!"])
def test_hidden_value_is_never_printed_by_validate(stoker, value):
    for fmt in ("json", "yaml", "table"):
        run = stoker.validate("valid/hidden.yaml", params=[f"db_password={value}"], fmt=fmt)
        assert value not in run.output
        assert "TokenDefault4242" not in run.output


def test_hidden_value_breaking_constraints_is_not_printed(stoker):
    errors = stoker.validate_errors("valid/hidden.yaml", params=["db_password=short!"])
    stoker.assert_errors(errors, [
        ("parameters.db_password", "constraint-violation", 5, 3,
         "The length must be at least 8."),
    ], file="valid/hidden.yaml")
    assert "short!" not in str(errors)


def test_hidden_number_that_is_not_a_number_is_not_printed(stoker):
    run = stoker.validate("valid/hidden.yaml", params=["pin=NotANumber99"]).expect(1)
    stoker.assert_errors(run.json, [
        ("parameters.pin", "invalid-parameter-value", 15, 3,
         "the value (hidden) is not a valid number"),
    ])
    assert "NotANumber99" not in run.output


# -- environments and the real command ---------------------------------------------------------

def test_validate_with_environments(stoker):
    plain = stoker.valid("environments/template.yaml")
    with_env = stoker.valid("environments/template.yaml",
                            env=["environments/base.yaml", "environments/override.yaml"])
    assert with_env == plain  # the declarations are shown, not the values
    assert plain["Parameters"]["password"]["Default"] == "******"


def test_validate_in_a_subprocess(stoker_process):
    run = stoker_process("template", "validate", "-t", "valid/look_alikes.yaml", "-f", "json")
    run.expect(0)
    document = run.json
    warnings = document.pop("Warnings")
    assert document == {
        "Description": "Maps that look like function calls but are not; kept as data, with a warning.",
        "Parameters": {},
    }
    assert len(run.warnings) == len(warnings) == 6
    assert all(w.endswith("[function-look-alike]") for w in run.warnings)
    assert {w["code"] for w in warnings} == {"function-look-alike"}


def test_validate_errors_in_a_subprocess(stoker_process):
    run = stoker_process("template", "validate", "-t", "invalid/dependencies.yaml", "-f", "json")
    run.expect(1)
    assert [e["code"] for e in run.json] == [
        "unknown-resource", "unknown-resource", "unknown-resource", "unknown-resource",
        "dependency-cycle", "dependency-cycle", "unknown-resource"]
    assert run.stderr == ""


def test_validate_table_errors_in_a_subprocess(stoker_process):
    run = stoker_process("template", "validate", "-t", "invalid/syntax_error.yaml")
    run.expect(1)
    assert run.stdout == ""
    assert run.stderr == (
        "ERROR: invalid/syntax_error.yaml:8:8: invalid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence) [invalid-syntax]\n")


def test_invalid_hidden_defaults_are_not_printed(stoker):
    for fmt in ("json", "table"):
        run = stoker.validate("invalid/hidden_defaults.yaml", fmt=fmt).expect(1)
        assert "DefaultS3cret" not in run.output
    errors = stoker.validate_errors("invalid/hidden_defaults.yaml")
    stoker.assert_errors(errors, [
        ("parameters.not_allowed.default", "invalid-default", 8, 5,
         'the default value is invalid: Allowed values: "alpha", "beta"'),
        ("parameters.too_short.default", "invalid-default", 14, 5,
         "the default value is invalid: at least twenty characters"),
        ("parameters.not_a_number.default", "invalid-default", 21, 5,
         "the default value is invalid: the value (hidden) is not a valid number"),
        ("parameters.not_json.default", "invalid-default", 25, 5,
         "the default value is invalid: the value (hidden) is not a valid json"),
    ], file="invalid/hidden_defaults.yaml")


def test_unknown_resource_types_and_properties(stoker):
    errors = stoker.validate_errors("invalid/resource_types.yaml")
    assert [(e["path"], e["line"], e["column"]) for e in errors] == [
        ("resources.server.type", 6, 5),
        ("resources.value.properties.nonsense", 11, 7),
    ]
