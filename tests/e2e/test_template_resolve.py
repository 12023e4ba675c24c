"""``stoker template resolve`` over the corpus: typed parameters, conditions, outputs, pending.

``resolve`` prints exactly ``{"parameters", "conditions", "outputs", "pending"}``
(hidden values masked), or exits 1 with ``{"errors": [...]}``.
"""

from __future__ import annotations

import hashlib
import json

import pytest

KEYS = ["parameters", "conditions", "outputs", "pending"]
BOOLEAN_HINT = "use one of t, true, on, y, yes, 1 (true) or f, false, off, n, no, 0 (false)"


def test_resolve_document_has_exactly_four_keys(stoker):
    document = stoker.resolved("valid/all_sections.yaml")
    assert list(document) == KEYS
    assert document == {
        "parameters": {
            "name": "web",
            "port": 8080,
            "password": "******",
            "flags": ["a", "b"],
            "settings": {"debug": False},
            "enabled": True,
        },
        "conditions": {"is_enabled": True, "high_port": True},
        "outputs": {"url": "http://web:8080/"},
        "pending": ["server_value"],
    }


def test_resolve_yaml_format(stoker):
    import yaml

    run = stoker.resolve("valid/all_sections.yaml", fmt="yaml").expect(0)
    assert yaml.safe_load(run.stdout) == stoker.resolved("valid/all_sections.yaml")


# -- parameter types and their conversions -------------------------------------------------

BASE_VALUES = {"a_string": "s", "a_number": "1", "a_list": "x", "a_json": "{}", "a_boolean": "true"}


def _resolve_types(stoker, name: str, raw: str):
    values = dict(BASE_VALUES, **{name: raw})
    return stoker.resolve("valid/parameter_types.yaml", params=[f"{k}={v}" for k, v in values.items()])


@pytest.mark.parametrize("name, raw, expected", [
    ("a_string", "hello world", "hello world"),
    ("a_string", "", ""),
    ("a_string", "with=equals", "with=equals"),
    ("a_string", "42", "42"),
    ("a_number", "42", 42),
    ("a_number", "-7", -7),
    ("a_number", "2.5", 2.5),
    ("a_number", "1e2", 100.0),
    ("a_number", " 5", 5),
    ("a_list", "a,b,c", ["a", "b", "c"]),
    ("a_list", "a, b", ["a", " b"]),  # spaces are kept, as in Heat
    ("a_list", "a,,b", ["a", "", "b"]),
    ("a_list", "single", ["single"]),
    ("a_list", "", []),
    ("a_json", '{"k": [1, 2], "n": null}', {"k": [1, 2], "n": None}),
    ("a_json", "[1, \"two\"]", [1, "two"]),
    ("a_json", "[]", []),
    ("a_boolean", "true", True),
    ("a_boolean", "TRUE", True),
    ("a_boolean", "yes", True),
    ("a_boolean", "on", True),
    ("a_boolean", "t", True),
    ("a_boolean", "y", True),
    ("a_boolean", "1", True),
    ("a_boolean", " Yes ", True),
    ("a_boolean", "false", False),
    ("a_boolean", "No", False),
    ("a_boolean", "off", False),
    ("a_boolean", "f", False),
    ("a_boolean", "n", False),
    ("a_boolean", "0", False),
])
def test_command_line_values_are_converted_to_their_type(stoker, name, raw, expected):
    document = _resolve_types(stoker, name, raw).expect(0).json
    assert document["parameters"][name] == expected
    assert document["outputs"][name] == expected
    assert type(document["parameters"][name]) is type(expected)


TYPES_LINES = {"a_string": 5, "a_number": 6, "a_list": 7, "a_json": 8, "a_boolean": 9}


@pytest.mark.parametrize("name, raw, message", [
    ("a_number", "abc", '"abc" is not a number'),
    ("a_number", "", '"" is not a number'),
    ("a_number", "nan", '"nan" is not a finite number'),
    ("a_number", "inf", '"inf" is not a finite number'),
    ("a_json", "{bad", "the value is not valid JSON: Expecting property name enclosed in double quotes"),
    ("a_json", "[1", "the value is not valid JSON: Expecting ',' delimiter"),
    ("a_json", '"text"', '"text" is not a JSON map or list'),
    ("a_json", "5", "5 is not a JSON map or list"),
    ("a_boolean", "maybe", f'"maybe" is not a boolean; {BOOLEAN_HINT}'),
    ("a_boolean", "2", f'"2" is not a boolean; {BOOLEAN_HINT}'),
    ("a_boolean", "", f'"" is not a boolean; {BOOLEAN_HINT}'),
])
def test_command_line_values_that_do_not_convert(stoker, name, raw, message):
    document = _resolve_types(stoker, name, raw).expect(1).json
    stoker.assert_errors(document["errors"], [
        (f"parameters.{name}", "invalid-parameter-value", TYPES_LINES[name], 3, message),
    ], file="valid/parameter_types.yaml")


def test_every_missing_required_parameter_is_reported(stoker):
    errors = stoker.resolve_errors("valid/parameter_types.yaml")
    stoker.assert_errors(errors, [
        (f"parameters.{name}", "missing-parameter", line, 3,
         f"The Parameter ({name}) was not provided.")
        for name, line in TYPES_LINES.items()
    ], file="valid/parameter_types.yaml")


def test_validate_allows_missing_required_parameters(stoker):
    params = stoker.valid("valid/parameter_types.yaml")["Parameters"]
    assert {name: p["Type"] for name, p in params.items()} == {
        "a_string": "String", "a_number": "Number", "a_list": "CommaDelimitedList",
        "a_json": "Json", "a_boolean": "Boolean",
    }
    assert all("Default" not in p for p in params.values())


def test_undefined_parameter_on_the_command_line(stoker):
    values = [f"{k}={v}" for k, v in BASE_VALUES.items()] + ["colour=blue"]
    errors = stoker.resolve_errors("valid/parameter_types.yaml", params=values)
    stoker.assert_errors(errors, [
        ("parameters.colour", "unknown-parameter", 4, 1,
         "The Parameter (colour) was not defined in template."),
    ])


def test_several_parameters_in_one_option_separated_by_semicolons(stoker):
    document = stoker.resolved("valid/parameter_types.yaml", params=[
        "a_string=s;a_number=3;a_list=p,q", "a_json={}", "a_boolean=no"])
    assert document["parameters"] == {"a_string": "s", "a_number": 3, "a_list": ["p", "q"],
                                      "a_json": {}, "a_boolean": False}


def test_parameter_file_gives_the_file_content(stoker, tmp_path):
    body = tmp_path / "body.txt"
    body.write_text("line one\nline two\n")
    run = stoker.resolve("valid/parameter_types.yaml",
                         params=[f"{k}={v}" for k, v in BASE_VALUES.items() if k != "a_string"],
                         extra=["--parameter-file", f"a_string={body}"])
    assert run.expect(0).json["outputs"]["a_string"] == "line one\nline two\n"


def test_defaults_of_every_type_in_every_spelling(stoker):
    assert stoker.resolved("valid/parameter_defaults.yaml")["parameters"] == {
        "string_from_string": "hello",
        "string_from_int": "42",
        "string_from_float": "1.5",
        "string_from_bool": "True",
        "string_empty": "",
        "number_from_int": 10,
        "number_from_float": 2.5,
        "number_from_string": 17,
        "number_from_float_string": 0.25,
        "number_from_exponent": 1500.0,
        "number_negative": -3,
        "list_from_string": ["a", "b ", " c"],
        "list_from_list": ["x", "1", "True"],
        "list_from_empty_string": [],
        "list_from_single": ["single"],
        "json_from_map": {"key": [1, 2], "nested": {"a": None}},
        "json_from_list": [1, "two"],
        "json_from_string": {"from": "text", "n": 1.5},
        "json_list_from_string": [True, None],
        "bool_true": True,
        "bool_yes_string": True,
        "bool_on": True,
        "bool_t": True,
        "bool_y": True,
        "bool_one": True,
        "bool_one_string": True,
        "bool_false": False,
        "bool_no_string": False,
        "bool_off": False,
        "bool_f": False,
        "bool_n": False,
        "bool_zero": False,
        "bool_false_string": False,
    }


def test_command_line_overrides_a_default(stoker):
    document = stoker.resolved("valid/parameter_defaults.yaml",
                               params=["number_from_int=11", "list_from_list=p,q"])
    assert document["parameters"]["number_from_int"] == 11
    assert document["parameters"]["list_from_list"] == ["p", "q"]


# -- constraints on values -----------------------------------------------------------------

CONSTRAINT_LINES = {
    "length_plain": 5, "length_described": 10, "length_min_only": 16, "length_json": 21,
    "range_plain": 26, "range_described": 31, "range_max_only": 37, "modulo_plain": 42,
    "modulo_described": 47, "values_plain": 53, "values_described": 58, "values_number": 64,
    "values_list": 69, "values_boolean": 74, "pattern_plain": 79, "pattern_described": 84,
    "custom_plain": 90, "custom_described": 95, "several": 101,
}


@pytest.mark.parametrize("name, raw, message", [
    ("length_plain", "a", "length (1) is out of range (min: 2, max: 4)"),
    ("length_plain", "abcde", "length (5) is out of range (min: 2, max: 4)"),
    ("length_described", "a", "Two to four characters"),
    ("length_min_only", "x", "length (1) is out of range (min: 2, max: None)"),
    ("length_json", '{"a": 1, "b": 2}', "length (2) is out of range (min: None, max: 1)"),
    ("range_plain", "0", "0 is out of range (min: 1, max: 10)"),
    ("range_plain", "11", "11 is out of range (min: 1, max: 10)"),
    ("range_described", "11", "From one to ten"),
    ("range_max_only", "1.5", "1.5 is out of range (min: None, max: 1)"),
    ("modulo_plain", "8", "8 is not a multiple of 2 with an offset of 1"),
    ("modulo_described", "8", "An odd number"),
    ("values_plain", "m1.tiny", '"m1.tiny" is not an allowed value ["m1.small", "m1.large"]'),
    ("values_described", "m1.tiny", "A known flavor"),
    ("values_number", "8080", "8080 is not an allowed value [80, 443]"),
    ("values_list", "red,pink", '["red", "pink"] is not an allowed value ["red", "green", "blue"]'),
    ("values_boolean", "false", "false is not an allowed value [true]"),
    ("pattern_plain", "Web-1", '"Web-1" does not match pattern "[a-z]+-[0-9]+"'),
    ("pattern_plain", "web-1x", '"web-1x" does not match pattern "[a-z]+-[0-9]+"'),  # anchored
    ("pattern_described", "x", "name-number"),
    ("custom_plain", "1.2.3.4.5", "Error validating value '1.2.3.4.5': Invalid IP address"),
    ("custom_described", "10.0.0.1", "A network in CIDR notation"),
    # several constraints: the first one broken is reported
    ("several", "abcd", "Short."),
    ("several", "ca", '"ca" is not an allowed value ["ab", "cd"]'),
    ("several", "cd", "Only a, b or c."),
])
def test_values_breaking_a_constraint(stoker, name, raw, message):
    errors = stoker.resolve_errors("valid/constraints.yaml", params=[f"{name}={raw}"])
    stoker.assert_errors(errors, [
        (f"parameters.{name}", "constraint-violation", CONSTRAINT_LINES[name], 3, message),
    ], file="valid/constraints.yaml")
    assert errors[0]["message"] == message


@pytest.mark.parametrize("name, raw, expected", [
    ("length_plain", "ab", "ab"),
    ("length_plain", "abcd", "abcd"),
    ("range_plain", "1", 1),
    ("range_plain", "10", 10),
    ("modulo_plain", "-1", -1),
    ("values_list", "green,blue", ["green", "blue"]),
    ("values_boolean", "yes", True),
    ("pattern_plain", "db-42", "db-42"),
    ("custom_described", "2001:db8::/32", "2001:db8::/32"),
])
def test_values_meeting_their_constraints(stoker, name, raw, expected):
    assert stoker.resolved("valid/constraints.yaml",
                           params=[f"{name}={raw}"])["parameters"][name] == expected


def test_every_broken_constraint_of_every_parameter_is_reported(stoker):
    errors = stoker.resolve_errors("valid/constraints.yaml", params=[
        "length_plain=a", "range_plain=99", "values_plain=x", "pattern_plain=X"])
    assert stoker.places(errors) == [
        ("parameters.length_plain", "constraint-violation", 5, 3),
        ("parameters.range_plain", "constraint-violation", 26, 3),
        ("parameters.values_plain", "constraint-violation", 53, 3),
        ("parameters.pattern_plain", "constraint-violation", 79, 3),
    ]


# -- custom constraints (built-in) -----------------------------------------------------------

CUSTOM_LINES = {"ip": 5, "cidr": 6, "ip_or_cidr": 7, "mac": 8, "dns": 9, "domain": 10,
                "relative": 11, "when": 12, "expires": 13, "cron": 14, "zone": 15, "doc": 16,
                "described": 17}


@pytest.mark.parametrize("name, value", [
    ("ip", "10.0.0.1"), ("ip", "::1"), ("ip", "2001:db8::1"),
    ("cidr", "10.0.0.0/24"), ("cidr", "2001:db8::/32"),
    ("ip_or_cidr", "1.2.3.4"), ("ip_or_cidr", "1.2.3.0/24"),
    ("mac", "fa:16:3e:00:00:01"),
    ("dns", "www.example.com"), ("dns", "example.com."),
    ("domain", "example.com."),
    ("relative", "www"),
    ("when", "2024-01-31T10:00:00Z"), ("when", "2024-01-31"), ("when", "20240131T1000"),
    ("expires", "2999-01-01T00:00:00Z"),
    ("cron", "*/5 * * * *"), ("cron", "0 0 1 1 *"),
    ("zone", "Europe/Paris"), ("zone", "UTC"),
    ("doc", '{"a": 1}'),
])
def test_custom_constraint_accepts(stoker, name, value):
    run = stoker.validate("valid/custom_constraints.yaml", params=[f"{name}={value}"])
    assert run.expect(0).json["Parameters"][name]["Type"] == "String"


@pytest.mark.parametrize("name, value, reason", [
    ("ip", "256.1.1.1", "Invalid IP address"),
    ("ip", "010.0.0.1", "Invalid IP address"),
    ("ip", "10.0.0.1 ", "Invalid IP address"),
    ("cidr", "10.0.0.0", "'10.0.0.0' is not a valid IP subnet"),
    ("cidr", "10.0.0.0/33", "'10.0.0.0/33' is not a valid IP subnet"),
    ("ip_or_cidr", "x", "'x' is not a valid IP address"),
    ("mac", "fa:16:3e:00:00", "Invalid MAC address."),
    ("dns", "Bad_Name", "the label 'Bad_Name' must be 1 to 63 lowercase letters, digits or hyphens"),
    ("dns", "-a.com", "the label '-a' must not start or end with a hyphen"),
    ("domain", "example.com", "'example.com' must end with '.'"),
    ("relative", "www.", "'www.' is a FQDN; it must be a relative name"),
    ("when", "yesterday", "'yesterday' is not an ISO 8601 date and time"),
    ("expires", "2000-01-01T00:00:00Z", "the expiration time 2000-01-01T00:00:00Z is in the past"),
    ("cron", "0 0 * *", "a cron expression has 5, 6 or 7 fields, not 4"),
    ("cron", "61 * * * *", "minute 61 is out of range (0-59)"),
    ("zone", "Mars/Olympus", "'Mars/Olympus' is not a known time zone"),
    ("doc", "{a", "the JSON string is invalid: Expecting property name enclosed in double quotes"),
])
def test_custom_constraint_rejects(stoker, name, value, reason):
    errors = stoker.validate_errors("valid/custom_constraints.yaml", params=[f"{name}={value}"])
    stoker.assert_errors(errors, [
        (f"parameters.{name}", "constraint-violation", CUSTOM_LINES[name], 3,
         f"Error validating value '{value}': {reason}"),
    ], file="valid/custom_constraints.yaml")


def test_custom_constraint_with_a_description_uses_it(stoker):
    errors = stoker.validate_errors("valid/custom_constraints.yaml", params=["described=Nowhere"])
    assert [(e["path"], e["message"]) for e in errors] == [
        ("parameters.described", "Use a name from the tz database, like Europe/Paris"),
    ]


# -- pseudo parameters -----------------------------------------------------------------------

def test_pseudo_parameters(stoker):
    assert stoker.resolved("valid/pseudo_parameters.yaml") == {
        "parameters": {},
        "conditions": {"default_name": True},
        "outputs": {
            "stack_name": "stack",
            "stack_id": "00000000-0000-0000-0000-000000000000",
            "project_id": "default",
            "in_a_string": "stack/00000000-0000-0000-0000-000000000000",
        },
        "pending": [],
    }


def test_pseudo_parameters_cannot_be_set(stoker):
    errors = stoker.resolve_errors("valid/pseudo_parameters.yaml", params=["OS::stack_name=mine"])
    assert [(e["path"], e["code"]) for e in errors] == [
        ("parameters.OS::stack_name", "unknown-parameter")]


# -- hidden parameters -------------------------------------------------------------------------

SECRET = "Sup3rS3cretPassw0rd"


def test_hidden_values_are_masked(stoker):
    run = stoker.resolve("valid/hidden.yaml", params=[f"db_password={SECRET}"]).expect(0)
    assert run.json["parameters"] == {"db_password": "******", "api_token": "******",
                                      "pin": "******", "shown": "visible"}
    for secret in (SECRET, "TokenDefault4242", "1234"):
        assert secret not in run.output


@pytest.mark.parametrize("value, message", [
    ("short", "The length must be at least 8."),
    ("has spaces in it", "The value must match the pattern: [A-Za-z0-9]+"),
])
def test_hidden_value_breaking_a_constraint_is_not_printed(stoker, value, message):
    run = stoker.resolve("valid/hidden.yaml", params=[f"db_password={value}"]).expect(1)
    stoker.assert_errors(run.json["errors"], [
        ("parameters.db_password", "constraint-violation", 5, 3, message),
    ])
    assert run.json["errors"][0]["message"] == message
    assert value not in run.output


def test_hidden_values_not_printed_in_any_format(stoker):
    for fmt in ("json", "yaml", "table", "value"):
        run = stoker.resolve("valid/hidden.yaml", params=[f"db_password={SECRET}"], fmt=fmt)
        assert SECRET not in run.output
        bad = stoker.resolve("valid/hidden.yaml", params=["db_password=short!!"], fmt=fmt)
        assert "short!!" not in bad.output


def test_hidden_value_is_not_printed_in_function_errors(stoker):
    run = stoker.resolve("invalid/hidden_in_function_errors.yaml",
                         params=[f"secret={SECRET}", f"secret_list={SECRET},x"]).expect(1)
    assert [e["path"] for e in run.json["errors"]] == [
        "outputs.merged.value.map_merge",
        "outputs.concatenated.value.list_concat",
        "outputs.repeated.value.repeat",
        "outputs.compared.value.contains",
    ]
    assert SECRET not in run.output


# -- conditions ------------------------------------------------------------------------------

def test_every_condition_function(stoker):
    document = stoker.resolved("valid/conditions.yaml")
    assert document["conditions"] == {
        "always": True,
        "never": False,
        "is_prod": False,
        "not_prod": True,
        "prod_and_debug": False,
        "prod_or_debug": False,
        "three_way_or": True,
        "has_az1": True,
        "many_zones": True,
        "debug_flag": False,
        "nested": True,
        "refers_to_nested": False,
    }


def test_conditions_follow_the_parameters(stoker):
    document = stoker.resolved("valid/conditions.yaml",
                               params=["env=prod", "debug=yes", "zones=az3"])
    assert document["conditions"] == {
        "always": True,
        "never": False,
        "is_prod": True,
        "not_prod": False,
        "prod_and_debug": True,
        "prod_or_debug": True,
        "three_way_or": True,
        "has_az1": False,
        "many_zones": False,
        "debug_flag": True,
        "nested": False,
        "refers_to_nested": True,
    }


@pytest.mark.parametrize("env, outputs, pending", [
    ("test", {
        "mode": "testing",
        "size": "small",
        "inline_if": "not prod",
        "nested_if": "test",
        "prod_value": None,
        "test_value": "only in test",
        "literal_true": "always there",
        "if_resource": "none",
    }, ["needs_resource"]),
    ("prod", {
        "mode": "production",
        "size": "8x16",
        "inline_if": "prod",
        "nested_if": "prod",
        "prod_value": "only in prod",
        "test_value": None,
        "literal_true": "always there",
        # as in Heat: a reference to a resource whose condition is false is null
        "needs_resource": None,
    }, ["if_resource"]),
])
def test_condition_on_outputs_and_if_in_outputs(stoker, env, outputs, pending):
    document = stoker.resolved("valid/conditional.yaml", params=[f"env={env}"])
    assert document["conditions"] == {"is_prod": env == "prod", "is_test": env == "test"}
    assert document["outputs"] == outputs
    assert document["pending"] == pending


def test_circular_conditions_are_reported_by_resolve(stoker):
    errors = stoker.resolve_errors("invalid/condition_cycle.yaml")
    stoker.assert_errors(errors, [
        ("conditions.first", "condition-cycle", 5, 3, 'Circular definition for condition "first"'),
        ("conditions.second", "condition-cycle", 6, 3, 'Circular definition for condition "second"'),
        ("conditions.itself", "condition-cycle", 7, 3, 'Circular definition for condition "itself"'),
    ], file="invalid/condition_cycle.yaml")


def test_condition_errors_are_the_same_in_resolve(stoker):
    validate = stoker.validate_errors("invalid/conditions.yaml")
    assert stoker.resolve_errors("invalid/conditions.yaml") == validate


def test_a_condition_that_is_not_a_boolean_after_evaluation(stoker, tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text(
        "heat_template_version: 2016-10-14\n"
        "parameters:\n"
        "  flag: {type: string, default: maybe}\n"
        "conditions:\n"
        "  from_param: {get_param: flag}\n")
    errors = stoker.resolve_errors(str(template))
    stoker.assert_errors(errors, [
        ("conditions.from_param", "invalid-condition", 5, 3,
         "The definition of condition \"from_param\" is invalid: it evaluates to 'maybe', "
         "not a boolean"),
    ])


# -- functions (latest version) ---------------------------------------------------------------

def test_every_function_of_the_latest_version(stoker):
    document = stoker.resolved("valid/functions.yaml")
    assert document["conditions"] == {"enabled": True, "disabled": False}
    assert document["outputs"] == {
        "get_param_plain": "heat",
        "get_param_path": "10.0.0.2",
        "get_param_list_index": "gamma",
        "get_param_missing_key": "",
        "get_file": "Hello from a file next to the template.\n",
        "get_file_json": '{"port": 8080}\n',
        "list_join": "alpha, beta, gamma, delta",
        "str_replace": "heat serves on 80",
        "str_replace_longest_first": "A B",
        "str_replace_strict": "a-1",
        "str_replace_vstrict": "a-y",
        "str_split": ["a", "b", "", "c"],
        "str_split_index": "c",
        "digest_sha512": hashlib.sha512(b"heat").hexdigest(),
        "repeat": [{"name": "<a>", "port": "1"}, {"name": "<b>", "port": "2"}],
        "map_merge": {"a": 1, "b": 2, "c": 3},
        "map_replace": {"K1": "V1", "k2": "v2", "k3": "V1"},
        "yaql": ["db", "web"],
        "if_true": "T",
        "if_false": "F",
        "if_without_false_value": ["a", "c"],
        "filter": ["alpha", "gamma"],
        "make_url": "http://admin:p%40ss@[::1]:8080/api/v1?limit=10#top",
        "list_concat": [1, 2, 2],
        "list_concat_unique": [1, 2, 3],
        "contains": True,
        "contains_string": True,
    }
    assert document["pending"] == ["get_resource", "get_attr"]


def test_outputs_needing_resources_are_pending(stoker):
    assert stoker.resolved("valid/template.json") == {
        "parameters": {"count": 3, "names": ["a", "b"]},
        "conditions": {"many": True},
        "outputs": {"joined": "a+b"},
        "pending": ["box"],
    }


def test_look_alikes_are_kept_as_data(stoker):
    run = stoker.resolve("valid/look_alikes.yaml").expect(0)
    assert run.json["outputs"] == {
        "kept_as_data": {"get_atr": ["box2", "value"]},
        "too_new_in_output": {"list_concat": [[1], [2]]},
    }
    assert len(run.warnings) == 6


def test_yaml_anchors(stoker):
    assert stoker.resolved("valid/aliases.yaml")["outputs"] == {"sizes": [2, 2]}


# -- environments --------------------------------------------------------------------------------

ENV_TEMPLATE = "environments/template.yaml"


@pytest.mark.parametrize("envs, params, expected", [
    (["base"], [], {"flavor": "m1.small", "image": "ubuntu", "count": 2,
                    "networks": ["private", "public"], "tags": {}}),
    # later files win, for parameters and parameter_defaults alike
    (["base", "override"], [], {"flavor": "m1.large", "image": "ubuntu", "count": 5,
                                "networks": ["private", "public"], "tags": {"team": "blue"}}),
    (["override", "base"], [], {"flavor": "m1.small", "image": "ubuntu", "count": 2,
                                "networks": ["private", "public"], "tags": {"team": "blue"}}),
    # parameter_defaults alone fill a required parameter
    (["defaults_only"], [], {"flavor": "m1.tiny", "image": "cirros", "count": 1,
                             "networks": [], "tags": {}}),
    # the command line wins over every environment
    (["base", "override"], ["flavor=cli", "count=9"],
     {"flavor": "cli", "image": "ubuntu", "count": 9, "networks": ["private", "public"],
      "tags": {"team": "blue"}}),
    # a merge strategy combines values of several files
    (["merge_first", "merge_strategies"], [],
     {"flavor": "m1.small", "image": "cirros", "count": 1,
      "networks": ["private", "management"],
      "tags": {"team": "blue", "owner": "ops", "labels": {"a": "1", "b": "2"}}}),
])
def test_environment_files_merge_in_order(stoker, envs, params, expected):
    document = stoker.resolved(ENV_TEMPLATE, env=[f"environments/{e}.yaml" for e in envs],
                               params=params)
    values = document["parameters"]
    assert values.pop("password") == "******"
    assert values == expected
    assert document["outputs"]["summary"] == (
        f"{expected['count']} x {expected['flavor']} from {expected['image']}")


def test_hidden_value_from_an_environment_is_masked(stoker):
    run = stoker.resolve(ENV_TEMPLATE, env=["environments/defaults_only.yaml"]).expect(0)
    assert run.json["parameters"]["password"] == "******"
    assert "from-the-environment" not in run.output


def test_merge_strategies_follow_heat(stoker, tmp_path):
    first = tmp_path / "first.yaml"
    first.write_text("parameter_defaults:\n  count: 1\n  tags: {team: blue, owner: dev}\n")
    second = tmp_path / "second.yaml"
    second.write_text("parameter_merge_strategies:\n  count: merge\n  tags: deep_merge\n"
                      "parameter_defaults:\n  count: 2\n  tags: {owner: ops}\n")
    values = stoker.resolved(ENV_TEMPLATE, env=[str(first), str(second)],
                             params=["flavor=x"])["parameters"]
    assert values["tags"] == {"team": "blue", "owner": "devops"}
    assert values["count"] == 3


ENV_ERRORS = {
    "unknown_section": [
        ("paramters", "environments/unknown_section.yaml", "unknown-section", 3, 1,
         '"paramters" is not a valid environment section; valid: parameters, parameter_defaults, '
         "resource_registry, event_sinks, encrypted_param_names, parameter_merge_strategies"),
        ("resource_registry", "environments/unknown_section.yaml", "invalid-section", 5, 1,
         'environment section "resource_registry" must be a map'),
    ],
    "syntax_error": [
        ("", "environments/syntax_error.yaml", "invalid-syntax", 3, 1,
         "invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"),
    ],
    "not_a_map": [
        ("", "environments/not_a_map.yaml", "invalid-environment", 1, 1,
         "environments/not_a_map.yaml: an environment must be a map of sections"),
    ],
    "bad_merge_strategy": [
        ("parameter_merge_strategies.networks", "environments/bad_merge_strategy.yaml",
         "invalid-merge-strategy", 2, 3,
         '"append" is not a merge strategy; use one of overwrite, merge, deep_merge'),
    ],
    "bad_value": [
        ("parameters.count", ENV_TEMPLATE, "invalid-parameter-value", 7, 3, '"lots" is not a number'),
    ],
}


@pytest.mark.parametrize("command", ["validate", "resolve"])
@pytest.mark.parametrize("env", sorted(ENV_ERRORS))
def test_environment_errors_name_their_file_and_line(stoker, command, env):
    run = getattr(stoker, command)(ENV_TEMPLATE, env=[f"environments/{env}.yaml"],
                                   params=["flavor=x"] if env != "bad_value" else [])
    document = run.expect(1).json
    errors = document["errors"] if command == "resolve" else document
    assert [(e["path"], e["file"], e["code"], e["line"], e["column"]) for e in errors] == [
        tuple(e[:5]) for e in ENV_ERRORS[env]]
    for error, expected in zip(errors, ENV_ERRORS[env]):
        assert expected[5] in error["message"]


def test_environment_errors_of_several_files_are_all_reported(stoker):
    errors = stoker.validate_errors(ENV_TEMPLATE, env=["environments/unknown_section.yaml",
                                                      "environments/bad_merge_strategy.yaml"])
    assert [(e["file"], e["path"]) for e in errors] == [
        ("environments/unknown_section.yaml", "paramters"),
        ("environments/unknown_section.yaml", "resource_registry"),
        ("environments/bad_merge_strategy.yaml", "parameter_merge_strategies.networks"),
    ]


def test_unknown_parameter_in_an_environment(stoker):
    errors = stoker.resolve_errors(ENV_TEMPLATE, env=["environments/unknown_parameter.yaml"])
    assert [(e["path"], e["code"], e["message"]) for e in errors] == [
        ("parameters.colour", "unknown-parameter", "The Parameter (colour) was not defined in template."),
    ]


def test_parameter_defaults_for_undeclared_parameters_are_ignored(stoker):
    values = stoker.resolved(ENV_TEMPLATE, env=["environments/base.yaml"])["parameters"]
    assert "undeclared_default" not in values


def test_missing_environment_file(stoker):
    errors = stoker.validate_errors(ENV_TEMPLATE, env=["environments/nowhere.yaml"])
    assert [(e["code"], e["message"]) for e in errors] == [
        ("unreadable-file", "cannot read environments/nowhere.yaml: No such file or directory")]


# -- the real command ------------------------------------------------------------------------------

def test_resolve_in_a_subprocess(stoker_process):
    run = stoker_process("template", "resolve", "-t", "valid/conditional.yaml", "-P", "env=prod",
                         "-f", "json").expect(0)
    assert json.loads(run.stdout)["outputs"]["mode"] == "production"


def test_resolve_errors_in_a_subprocess(stoker_process):
    run = stoker_process("template", "resolve", "-t", "valid/hidden.yaml", "-P",
                         "db_password=tiny", "-f", "json").expect(1)
    assert json.loads(run.stdout) == {"errors": [{
        "path": "parameters.db_password",
        "file": "valid/hidden.yaml",
        "line": 5,
        "column": 3,
        "code": "constraint-violation",
        "message": "The length must be at least 8.",
    }]}
    assert "tiny" not in run.stdout + run.stderr
