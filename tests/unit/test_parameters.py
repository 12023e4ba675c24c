"""Template parameters: schemas, conversions, values, groups, validate output."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from stoker.constraints import custom
from stoker.constraints.base import ConstraintViolation
from stoker.errors import Problems, format_path
from stoker.template.parameters import (
    HIDDEN_MASK,
    ParameterSchema,
    check_parameter_groups,
    masked,
    parse_parameters,
    resolve_values,
)
from stoker.template.versions import get_version

LATEST = get_version("2021-04-16")


def schema(param_type, **data):
    problems = Problems()
    result = ParameterSchema.from_dict("p", {"type": param_type, **data}, LATEST, problems,
                                       ("parameters", "p"))
    assert problems.items == []
    return result


def parse(text, version=LATEST):
    """Parse a YAML ``parameters`` section; the schemas and the problems as (path, code, message)."""
    problems = Problems()
    schemas = parse_parameters(yaml.safe_load(text), version, problems)
    return schemas, found(problems)


def found(problems):
    return [(format_path(p.path), p.code, p.message) for p in problems.items]


def resolve(text, values, **kwargs):
    problems = Problems()
    schemas = parse_parameters(yaml.safe_load(text), LATEST, problems)
    result = resolve_values(schemas, values, problems, **kwargs)
    return result, found(problems)


# -- conversions ---------------------------------------------------------------------

@pytest.mark.parametrize("param_type, value, expected", [
    ("string", "a", "a"),
    ("string", "", ""),
    ("string", 1, "1"),
    ("string", 1.5, "1.5"),
    ("string", True, "True"),
    ("number", "1", 1),
    ("number", " 2 ", 2),
    ("number", "1.5", 1.5),
    ("number", "1e3", 1000.0),
    ("number", 7, 7),
    ("number", 1.0, 1.0),
    ("comma_delimited_list", "one, two", ["one", " two"]),
    ("comma_delimited_list", "", []),
    ("comma_delimited_list", "a,,b", ["a", "", "b"]),
    ("comma_delimited_list", ",", ["", ""]),
    ("comma_delimited_list", ["a", 1, True], ["a", "1", "True"]),
    ("json", '{"a": 1}', {"a": 1}),
    ("json", "[1, 2]", [1, 2]),
    ("json", {"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}),
    ("json", {1: "x"}, {"1": "x"}),
    ("boolean", "On", True),
    ("boolean", " no ", False),
    ("boolean", 1, True),
    ("boolean", 0, False),
    ("boolean", False, False),
])
def test_convert(param_type, value, expected):
    result = schema(param_type).convert(value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("param_type, value, message", [
    ("string", [1], "[1] is not a string"),
    ("string", {"a": 1}, '{"a": 1} is not a string'),
    ("number", "abc", '"abc" is not a number'),
    ("number", "0x10", '"0x10" is not a number'),
    ("number", True, "true is not a number"),
    ("number", [1], "[1] is not a number"),
    ("number", "nan", '"nan" is not a finite number'),
    ("number", float("inf"), "Infinity is not a finite number"),
    ("comma_delimited_list", 5, "5 is neither a comma-delimited string nor a list"),
    ("comma_delimited_list", {"a": 1}, '{"a": 1} is neither a comma-delimited string nor a list'),
    ("comma_delimited_list", ["a", ["b"]], 'item 1 of the list: ["b"] is not a string'),
    ("json", "nope", "the value is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    ("json", "5", "5 is not a JSON map or list"),
    ("json", True, "true is not a JSON map or list"),
    ("boolean", "maybe", '"maybe" is not a boolean; use one of t, true, on, y, yes, 1 (true) '
                         "or f, false, off, n, no, 0 (false)"),
    ("boolean", 2, "2 is not a boolean"),
    ("boolean", 1.0, "1.0 is not a boolean"),
    ("boolean", "", '"" is not a boolean'),
])
def test_convert_errors(param_type, value, message):
    with pytest.raises(ValueError) as info:
        schema(param_type).convert(value)
    assert str(info.value).startswith(message)


def test_an_empty_json_text_stays_empty_as_in_heat():
    assert schema("json").convert("") == ""
    assert schema("json").convert("{}") == {}


def test_convert_of_a_hidden_parameter_never_shows_the_value():
    with pytest.raises(ValueError) as info:
        schema("number", hidden=True).convert("s3cret")
    assert str(info.value) == "the value (hidden) is not a valid number"


comma_free = st.text(alphabet=st.characters(blacklist_characters=","), max_size=10)


@given(st.lists(comma_free, min_size=1))
def test_comma_delimited_list_round_trips(items):
    assert schema("comma_delimited_list").convert(",".join(items)) == (
        [] if items == [""] else items)


@given(st.lists(comma_free))
def test_comma_delimited_list_keeps_a_list_of_strings(items):
    assert schema("comma_delimited_list").convert(items) == items


@given(st.sampled_from(["t", "true", "on", "y", "yes", "1", "f", "false", "off", "n", "no", "0"]),
       st.lists(st.booleans(), min_size=5, max_size=5))
def test_boolean_spellings_in_any_case(word, upper):
    spelled = "".join(c.upper() if up else c for c, up in zip(word, upper))
    assert schema("boolean").convert(spelled) is (word in ("t", "true", "on", "y", "yes", "1"))


@given(st.integers())
def test_number_of_an_int_round_trips(number):
    result = schema("number").convert(str(number))
    assert result == number and type(result) is int


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_of_a_float_round_trips(number):
    assert schema("number").convert(repr(number)) == number
    assert schema("number").convert(number) == number


@given(st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.booleans())
def test_string_of_a_scalar_is_its_python_text(value):
    assert schema("string").convert(value) == str(value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_json_map_round_trips(data):
    json_param = schema("json")
    assert json_param.convert(json.dumps(data)) == data
    assert json_param.convert(data) == data


# -- schemas: what from_dict reports -------------------------------------------------

def test_a_full_parameter():
    schemas, problems = parse("""
        port:
          type: number
          label: Port
          description: The web port
          default: 8080
          hidden: false
          immutable: true
          tags: [network]
          constraints:
            - range: {min: 1, max: 65535}
              description: a TCP port
    """)
    assert problems == []
    port = schemas["port"]
    assert (port.name, port.type, port.label, port.description, port.default) == \
        ("port", "number", "Port", "The web port", 8080)
    assert (port.hidden, port.immutable, port.tags, port.required) == (False, True, ["network"], False)
    assert [c.schema_dict() for c in port.constraints] == \
        [{"range": {"min": 1, "max": 65535}, "description": "a TCP port"}]


def test_empty_section_has_no_parameters():
    assert parse("") == ({}, [])
    assert parse("{}") == ({}, [])


def test_section_must_be_a_map():
    assert parse("[a]") == ({}, [("parameters", "invalid-section",
                                  'the "parameters" section must be a map')])


@pytest.mark.parametrize("text, problem", [
    ("p: string", ("parameters.p", "invalid-parameter",
                   'parameter "p" must be a map with at least a type')),
    ("p: {label: x}", ("parameters.p", "invalid-parameter-type",
                       "the parameter has no type; use one of string, number, "
                       "comma_delimited_list, json, boolean")),
    ("p: {type: String}", ("parameters.p.type", "invalid-parameter-type",
                           '"String" is not a parameter type; use one of string, number, '
                           "comma_delimited_list, json, boolean")),
])
def test_parameters_without_a_usable_type_are_left_out(text, problem):
    assert parse(text) == ({}, [problem])


def test_unknown_keys_name_the_valid_ones():
    schemas, problems = parse("p: {type: string, defualt: x}")
    assert "p" in schemas
    assert problems == [("parameters.p.defualt", "unknown-key",
                         '"defualt" is not a valid parameter key; valid keys: type, label, '
                         "description, default, hidden, constraints, immutable, tags")]


@pytest.mark.parametrize("version, key, needed", [
    ("2017-09-01", "tags: [a]", "2018-03-02"),
])
def test_keys_from_later_versions_name_the_version(version, key, needed):
    _, problems = parse(f"p: {{type: string, {key}}}", get_version(version))
    name = key.split(":")[0]
    assert problems == [(f"parameters.p.{name}", "unknown-key",
                         f'"{name}" is not a valid parameter key; it needs '
                         f"heat_template_version {needed} or later")]


def test_immutable_is_a_parameter_key_in_every_version():
    """Heat accepts ``immutable`` before 2017-02-24, where it was documented."""
    schemas, problems = parse("p: {type: string, immutable: true}", get_version("2013-05-23"))
    assert (schemas["p"].immutable, problems) == (True, [])


@pytest.mark.parametrize("text, problem", [
    ("hidden: 'yes'", ("parameters.p.hidden", "invalid-parameter-attribute",
                       'hidden must be true or false, not "yes"')),
    ("immutable: 1", ("parameters.p.immutable", "invalid-parameter-attribute",
                      "immutable must be true or false, not 1")),
    ("tags: x", ("parameters.p.tags", "invalid-parameter-attribute",
                 "tags must be a list of strings")),
    ("tags: [1]", ("parameters.p.tags", "invalid-parameter-attribute",
                   "tags must be a list of strings")),
])
def test_bad_attributes(text, problem):
    assert parse(f"p: {{type: string, {text}}}")[1] == [problem]


def test_a_badly_flagged_hidden_parameter_stays_hidden():
    schemas, _ = parse("p: {type: string, hidden: 'yes'}")
    assert schemas["p"].hidden is True


@pytest.mark.parametrize("param_type, constraint, path, message", [
    ("string", "{range: {min: 1}}", "0.range",
     "range constraints do not apply to string parameters (only to: number)"),
    ("string", "{modulo: {step: 2, offset: 1}}", "0.modulo",
     "modulo constraints do not apply to string parameters (only to: number)"),
    ("number", "{length: {min: 1}}", "0.length",
     "length constraints do not apply to number parameters "
     "(only to: string, comma_delimited_list, json)"),
    ("number", "{allowed_pattern: x}", "0.allowed_pattern",
     "allowed_pattern constraints do not apply to number parameters (only to: string)"),
    ("json", "{allowed_values: [x]}", "0.allowed_values",
     "allowed_values constraints do not apply to json parameters "
     "(only to: string, number, comma_delimited_list, boolean)"),
    ("json", "{custom_constraint: ip_addr}", "0.custom_constraint",
     "custom_constraint constraints do not apply to json parameters "
     "(only to: string, number, comma_delimited_list, boolean)"),
    ("boolean", "{length: {min: 1}}", "0.length",
     "length constraints do not apply to boolean parameters "
     "(only to: string, comma_delimited_list, json)"),
    ("number", "{range: {}}", "0.range", "a range constraint needs a min value, a max value or both"),
    ("string", "{length: {}}", "0.length", "a length constraint needs a min value, a max value or both"),
    ("string", "{length: {min: a}}", "0.length", 'the min of a length constraint must be a number, not "a"'),
    ("string", "{length: {min: 1.5}}", "0.length",
     "the min and max of a length constraint must be integers, not 1.5"),
    ("string", "{length: {low: 1}}", "0.length", '"low" is not valid in a length constraint; use min, max'),
    ("string", "{length: 3}", "0.length", "a length constraint must be a map with min and/or max"),
    ("number", "{modulo: {step: 2}}", "0.modulo", "a modulo constraint needs both a step and an offset"),
    ("number", "{modulo: {step: 0, offset: 0}}", "0.modulo", "the step of a modulo constraint cannot be 0"),
    ("string", "{allowed_values: ab}", "0.allowed_values", 'allowed_values must be a list, not "ab"'),
    ("string", "{allowed_pattern: 5}", "0.allowed_pattern", "allowed_pattern must be a string, not 5"),
    ("string", "{allowed_pattern: '('}", "0.allowed_pattern",
     'allowed_pattern "(" is not a valid regular expression: missing ), unterminated subpattern '
     "at position 0"),
    ("string", "{custom_constraint: acme.keypair}", "0.custom_constraint",
     '"acme.keypair" is not a known custom constraint'),
    ("string", "{custom_constraint: [x]}", "0.custom_constraint",
     'custom_constraint must be a constraint name, not ["x"]'),
    ("string", "{}", "0", "a constraint must have exactly one constraint type"),
    ("string", "{description: d}", "0", "a constraint must have exactly one constraint type"),
    ("string", "{length: {min: 1}, allowed_pattern: x}", "0",
     "a constraint must have exactly one constraint type (found length, allowed_pattern)"),
    ("string", "{lenght: {min: 1}}", "0.lenght",
     '"lenght" is not a constraint type; use one of length, range, modulo, allowed_values, '
     "allowed_pattern, custom_constraint"),
    ("string", "x", "0", "a constraint must be a map such as {range: {min: 1}}"),
    ("string", "{length: {min: 1}, description: 5}", "0.description",
     "a constraint description must be a string"),
])
def test_constraint_problems(param_type, constraint, path, message):
    schemas, problems = parse(f"p: {{type: {param_type}, constraints: [{constraint}]}}")
    assert schemas["p"].constraints == []
    [(where, code, text)] = problems
    assert (where, code) == (f"parameters.p.constraints.{path}", "invalid-constraint")
    assert text == message


def test_constraints_must_be_a_list():
    assert parse("p: {type: string, constraints: {length: {min: 1}}}")[1] == \
        [("parameters.p.constraints", "invalid-constraint", "constraints must be a list")]


def test_modulo_needs_the_2017_02_24_version():
    _, problems = parse("p: {type: number, constraints: [{modulo: {step: 2, offset: 1}}]}",
                        get_version("2016-10-14"))
    assert problems == [("parameters.p.constraints.0.modulo", "invalid-constraint",
                         "modulo constraints need heat_template_version 2017-02-24 or later")]


def test_numbers_in_constraints_may_be_strings_as_in_heat():
    port = schema("number", constraints=[{"range": {"min": "1", "max": "1.5e3"}}])
    assert port.constraints[0].schema_dict() == {"range": {"min": 1, "max": 1500.0}}


def test_every_problem_is_reported_at_once():
    _, problems = parse("""
        a: {type: string, constraints: [{range: {min: 1}}, {length: {min: -1}}, x]}
        b: {type: nope}
        c: {type: number, default: abc, hidden: 1}
    """)
    assert [(path, code) for path, code, _ in problems] == [
        ("parameters.a.constraints.0.range", "invalid-constraint"),
        ("parameters.a.constraints.2", "invalid-constraint"),
        ("parameters.b.type", "invalid-parameter-type"),
        ("parameters.c.hidden", "invalid-parameter-attribute"),
        ("parameters.c.default", "invalid-default"),
    ]


# -- defaults ------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("{type: number, default: 5, constraints: [{range: {min: 6}}]}",
     "the default value is invalid: 5 is out of range (min: 6, max: None)"),
    ("{type: number, default: abc}", 'the default value is invalid: "abc" is not a number'),
    ("{type: comma_delimited_list, default: 'a,b', constraints: [{allowed_values: [a]}]}",
     'the default value is invalid: ["a", "b"] is not an allowed value ["a"]'),
    ("{type: comma_delimited_list, default: 5}",
     "the default value is invalid: 5 is neither a comma-delimited string nor a list"),
    ("{type: json, default: 'bad'}", "the default value is invalid: the value is not valid JSON"),
    ("{type: string, default: 5, constraints: [{length: {min: 3}}]}",
     "the default value is invalid: length (1) is out of range (min: 3, max: None)"),
    ("{type: string, hidden: true, default: abc, constraints: [{length: {min: 6}}]}",
     "the default value is invalid: The length must be at least 6."),
    ("{type: string, hidden: true, default: s3cret, constraints: [{allowed_values: [a]}]}",
     'the default value is invalid: Allowed values: "a"'),
])
def test_invalid_defaults(text, message):
    schemas, problems = parse(f"p: {text}")
    [(path, code, found_message)] = problems
    assert (path, code) == ("parameters.p.default", "invalid-default")
    assert found_message.startswith(message)
    assert schemas["p"].default_valid is False


def test_a_hidden_default_never_appears_in_messages():
    _, problems = parse("p: {type: number, hidden: true, default: s3cret}")
    assert problems == [("parameters.p.default", "invalid-default",
                         "the default value is invalid: the value (hidden) is not a valid number")]


def test_custom_constraints_are_not_checked_on_the_default_when_parsing():
    schemas, problems = parse(
        "p: {type: string, default: nope, constraints: [{custom_constraint: ip_addr}]}")
    assert problems == [] and schemas["p"].default_valid


# -- validate ------------------------------------------------------------------------

def test_validate_raises_the_first_violation():
    port = schema("number", constraints=[{"range": {"min": 1, "max": 65535}},
                                         {"modulo": {"step": 2, "offset": 0}}])
    port.validate(80)
    with pytest.raises(ConstraintViolation, match=r"^70000 is out of range \(min: 1, max: 65535\)$"):
        port.validate(70000)
    with pytest.raises(ConstraintViolation, match="^81 is not a multiple of 2 with an offset of 0$"):
        port.validate(81)


def test_validate_of_a_hidden_parameter_uses_the_rule_not_the_value():
    secret = schema("string", hidden=True, constraints=[{"allowed_pattern": "[a-z]+"}])
    with pytest.raises(ConstraintViolation) as info:
        secret.validate("S3CRET")
    assert info.value.message == "The value must match the pattern: [a-z]+"


@pytest.mark.parametrize("param_type, allowed, value", [
    ("number", ["1", "2"], "2"),
    ("number", [1, 2], "2.0"),
    ("string", [1, 2], "1"),
    ("boolean", [True], "yes"),
    ("boolean", ["no"], False),
    ("comma_delimited_list", [1, "b"], "1,b"),
])
def test_allowed_values_compare_in_the_parameter_type(param_type, allowed, value):
    param = schema(param_type, constraints=[{"allowed_values": allowed}])
    param.validate(param.convert(value))


def test_boolean_not_allowed():
    param = schema("boolean", constraints=[{"allowed_values": [True]}])
    with pytest.raises(ConstraintViolation, match=r"^false is not an allowed value \[true\]$"):
        param.validate(param.convert("no"))


# -- resolve_values ------------------------------------------------------------------

SECTION = """
    port: {type: number, default: 80, constraints: [{range: {min: 1, max: 65535}}]}
    name: {type: string}
    password: {type: string, hidden: true, constraints: [{length: {min: 8}}]}
    zones: {type: comma_delimited_list, default: "a,b"}
    debug: {type: boolean, default: false}
"""


def test_user_values_win_over_defaults_and_are_typed():
    values, problems = resolve(SECTION, {"port": "8080", "name": "web", "password": "long enough",
                                         "zones": "x", "debug": "on"})
    assert problems == []
    assert values == {"port": 8080, "name": "web", "password": "long enough", "zones": ["x"],
                      "debug": True}


def test_defaults_fill_in_and_missing_parameters_are_reported():
    values, problems = resolve(SECTION, {})
    assert values == {"port": 80, "zones": ["a", "b"], "debug": False}
    assert problems == [
        ("parameters.name", "missing-parameter", "The Parameter (name) was not provided."),
        ("parameters.password", "missing-parameter", "The Parameter (password) was not provided."),
    ]


def test_missing_ok_leaves_missing_parameters_out():
    values, problems = resolve(SECTION, {}, missing_ok=True)
    assert (values, problems) == ({"port": 80, "zones": ["a", "b"], "debug": False}, [])


def test_a_none_user_value_counts_as_not_given():
    values, problems = resolve(SECTION, {"port": None, "name": "n", "password": "12345678"})
    assert problems == [] and values["port"] == 80


def test_a_value_for_a_parameter_without_a_usable_type_is_not_reported_again():
    values, problems = resolve("p: {type: strin}", {"p": "x"})
    assert values == {}
    assert [(path, code) for path, code, _ in problems] == \
        [("parameters.p.type", "invalid-parameter-type")]


def test_unknown_user_parameters_are_reported():
    _, problems = resolve(SECTION, {"name": "n", "password": "12345678", "prot": 1})
    assert problems == [("parameters.prot", "unknown-parameter",
                         "The Parameter (prot) was not defined in template.")]


def test_bad_values_are_reported_without_hidden_values():
    values, problems = resolve(SECTION, {"port": "70000", "name": ["x"], "password": "short",
                                         "debug": "maybe"})
    assert set(values) == {"zones"}
    assert problems == [
        ("parameters.port", "constraint-violation", "70000 is out of range (min: 1, max: 65535)"),
        ("parameters.name", "invalid-parameter-value", '["x"] is not a string'),
        ("parameters.password", "constraint-violation", "The length must be at least 8."),
        ("parameters.debug", "invalid-parameter-value",
         '"maybe" is not a boolean; use one of t, true, on, y, yes, 1 (true) '
         "or f, false, off, n, no, 0 (false)"),
    ]


def test_an_invalid_default_is_reported_once():
    values, problems = resolve("p: {type: number, default: x}", {})
    assert values == {}
    assert [(path, code) for path, code, _ in problems] == [("parameters.p.default", "invalid-default")]


def test_a_user_value_replaces_an_invalid_default_but_the_default_is_still_reported():
    values, problems = resolve("p: {type: number, default: x}", {"p": "3"})
    assert values == {"p": 3}
    assert [code for _, code, _ in problems] == ["invalid-default"]


def test_custom_constraints_check_the_default_when_it_is_used():
    values, problems = resolve(
        "ip: {type: string, default: nope, constraints: [{custom_constraint: ip_addr}]}", {})
    assert values == {}
    assert problems == [("parameters.ip", "constraint-violation",
                         "Error validating value 'nope': Invalid IP address")]


def test_values_from_environment_files_may_be_any_yaml_type():
    values, problems = resolve("""
        n: {type: number}
        l: {type: comma_delimited_list}
        j: {type: json}
        b: {type: boolean}
        s: {type: string}
    """, {"n": 1.5, "l": ["a", 2], "j": {"k": [1]}, "b": True, "s": 42})
    assert problems == []
    assert values == {"n": 1.5, "l": ["a", "2"], "j": {"k": [1]}, "b": True, "s": "42"}


def test_plug_in_custom_constraints_apply_to_parameters(monkeypatch):
    monkeypatch.setattr(custom, "_REGISTRY", dict(custom._REGISTRY))
    custom.register("test.even", lambda v: v % 2 == 0)
    values, problems = resolve("n: {type: number, constraints: [{custom_constraint: test.even}]}",
                               {"n": "3"})
    assert problems == [("parameters.n", "constraint-violation", '"3" does not validate test.even')]


# -- masked, validate output ---------------------------------------------------------

def test_masked_hides_hidden_values_only():
    schemas, _ = parse(SECTION)
    assert masked(schemas, {"password": "s3cret", "name": "web", "other": 1}) == \
        {"password": HIDDEN_MASK, "name": "web", "other": 1}
    assert HIDDEN_MASK == "******"


def test_validate_output_of_a_plain_parameter():
    assert schema("string").as_validate_output() == {
        "Type": "String", "Description": "", "NoEcho": "false", "Label": "p"}


def test_validate_output_with_everything():
    param = schema("number", label="Port", description="web port", default=80, tags=["net"],
                   constraints=[{"range": {"min": 1, "max": 65535}, "description": "a port."},
                                {"modulo": {"step": 2, "offset": 0}, "description": "even."},
                                {"allowed_values": [80, 8080]},
                                {"custom_constraint": "test_constr"}])
    assert param.as_validate_output() == {
        "Type": "Number", "Description": "web port", "NoEcho": "false", "Label": "Port",
        "Default": 80, "Tags": ["net"], "MinValue": 1, "MaxValue": 65535, "Step": 2, "Offset": 0,
        "AllowedValues": [80, 8080], "CustomConstraint": "test_constr",
        "ConstraintDescription": "a port. even.",
    }


def test_validate_output_of_a_hidden_string_with_length_and_pattern():
    param = schema("string", hidden=True, default="s3cretpassword",
                   constraints=[{"length": {"min": 8}}, {"allowed_pattern": "[a-z0-9]+"}])
    assert param.as_validate_output() == {
        "Type": "String", "Description": "", "NoEcho": "true", "Label": "p",
        "Default": HIDDEN_MASK, "MinLength": 8, "AllowedPattern": "[a-z0-9]+"}


@pytest.mark.parametrize("param_type, api_type", [
    ("comma_delimited_list", "CommaDelimitedList"), ("json", "Json"), ("boolean", "Boolean")])
def test_validate_output_type_names(param_type, api_type):
    assert schema(param_type).as_validate_output()["Type"] == api_type


# -- parameter groups ----------------------------------------------------------------

def groups(text, section=SECTION):
    problems = Problems()
    schemas = parse_parameters(yaml.safe_load(section), LATEST, problems)
    check_parameter_groups(yaml.safe_load(text), schemas, problems)
    return found(problems)


def test_valid_parameter_groups():
    assert groups("""
        - label: Web
          description: the web tier
          parameters: [port, name]
        - parameters: [password]
    """) == []
    assert groups("") == []


@pytest.mark.parametrize("text, problem", [
    ("{a: 1}", ("parameter_groups", "parameter_groups must be a list of groups")),
    ("[x]", ("parameter_groups.0", "a parameter group must be a map with a list of parameters")),
    ("[{label: x}]", ("parameter_groups.0", "each parameter group must have a list of parameters")),
    ("[{parameters: port}]", ("parameter_groups.0.parameters",
                              "the parameters of a parameter group must be a list")),
    ("[{parameters: [port, prot]}]", ("parameter_groups.0.parameters.1",
                                      '"prot" does not reference a parameter of the template')),
    ("[{parameters: [[port]]}]", ("parameter_groups.0.parameters.0",
                                  '["port"] does not reference a parameter of the template')),
    ("[{parameters: [port, port]}]", ("parameter_groups.0.parameters.1",
                                      'the parameter "port" must be in one parameter group only')),
    ("[{parameters: [port]}, {parameters: [name, port]}]",
     ("parameter_groups.1.parameters.1", 'the parameter "port" must be in one parameter group only')),
])
def test_parameter_group_problems(text, problem):
    path, message = problem
    assert groups(text) == [(path, "invalid-parameter-groups", message)]
