"""Property schemas and the values plug-ins read through them."""

from __future__ import annotations

import pytest

from stoker.constraints import AllowedPattern, AllowedValues, CustomConstraint, Length, Range
from stoker.errors import FunctionError, ResourcePending, ValidationFailed
from stoker.functions.base import Function
from stoker.resources.exceptions import InvalidSchemaError
from stoker.resources.properties import Properties, Schema
from stoker.template.parameters import ParameterSchema

PATH = ("resources", "web", "properties")


class Fake(Function):
    """A parsed function whose result is fixed (or an exception it raises)."""

    def __init__(self, outcome, path=("resources", "web", "properties", "fn")):
        self.outcome = outcome
        super().__init__(parser=None, name="fake", args=None, path=path)

    def parse_args(self, args):
        return args

    def result(self):
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def messages(schema: dict, data, **kwargs) -> list[str]:
    """Every problem ``validate()`` reports, as ``path: message``."""
    with pytest.raises(ValidationFailed) as info:
        Properties(schema, data, path=PATH, **kwargs).validate()
    return [str(p) for p in info.value.problems]


def value(data_type: str, raw, **schema_kwargs):
    return Properties({"p": Schema(data_type, **schema_kwargs)}, {"p": raw})["p"]


# -- types ---------------------------------------------------------------------------------
@pytest.mark.parametrize("data_type, raw, expected", [
    (Schema.INTEGER, 80, 80),
    (Schema.INTEGER, "80", 80),
    (Schema.INTEGER, 80.0, 80),
    (Schema.NUMBER, "1.5", 1.5),
    (Schema.NUMBER, "2", 2),
    (Schema.NUMBER, 7, 7),
    (Schema.STRING, "x", "x"),
    (Schema.STRING, 5, "5"),
    (Schema.STRING, True, "True"),
    (Schema.BOOLEAN, True, True),
    (Schema.BOOLEAN, "TRUE", True),
    (Schema.BOOLEAN, "false", False),
    (Schema.MAP, {"a": 1}, {"a": 1}),
    (Schema.LIST, ["a", 1], ["a", 1]),
    (Schema.LIST, ("a",), ["a"]),
    (Schema.ANY, {"x": [1]}, {"x": [1]}),
])
def test_values_are_converted_to_the_declared_type(data_type, raw, expected):
    result = value(data_type, raw)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("data_type, raw, message", [
    (Schema.INTEGER, "eighty", "Value 'eighty' is not an integer"),
    (Schema.INTEGER, 3.5, "Value '3.5' is not an integer"),
    (Schema.INTEGER, True, "Value 'True' is not an integer"),
    (Schema.NUMBER, "many", "Value 'many' is not a number"),
    (Schema.STRING, [1], "Value must be a string; got [1]"),
    (Schema.STRING, 1.5, "Value must be a string; got 1.5"),
    (Schema.BOOLEAN, "yes", '"yes" is not a valid boolean'),
    (Schema.BOOLEAN, 1, '"1" is not a valid boolean'),
    (Schema.MAP, [1, 2], '"[1, 2]" is not a map'),
    (Schema.LIST, "a,b", "\"'a,b'\" is not a list"),
])
def test_a_value_of_the_wrong_type_is_reported_at_its_path(data_type, raw, message):
    assert messages({"p": Schema(data_type)}, {"p": raw}) == [f"resources.web.properties.p: {message}"]


@pytest.mark.parametrize("data_type, empty", [
    (Schema.INTEGER, 0), (Schema.NUMBER, 0), (Schema.STRING, ""), (Schema.BOOLEAN, False),
    (Schema.MAP, {}), (Schema.LIST, []), (Schema.ANY, None),
])
def test_an_absent_or_null_property_without_default_has_the_empty_value_of_its_type(data_type, empty):
    schema = {"p": Schema(data_type)}
    assert Properties(schema, {})["p"] == empty
    assert Properties(schema, {"p": None})["p"] == empty


def test_empty_containers_are_fresh_for_each_read():
    props = Properties({"p": Schema(Schema.LIST)}, {})
    props["p"].append(1)
    assert props["p"] == []


def test_the_default_is_used_typed_and_a_copy():
    schema = {"port": Schema(Schema.INTEGER, default="8080"), "tags": Schema(Schema.LIST, default=["a"])}
    props = Properties(schema, {"port": None})
    assert props["port"] == 8080
    props["tags"].append("b")
    assert props["tags"] == ["a"] and schema["tags"].default == ["a"]


# -- required, unknown, unimplemented -----------------------------------------------------------
def test_required_and_unknown_properties_are_reported_on_the_properties_path():
    schema = {"name": Schema(Schema.STRING, required=True)}
    assert messages(schema, {"nmae": "x"}) == [
        "resources.web.properties.nmae: Unknown Property nmae; did you mean \"name\"?",
        "resources.web.properties: Property name not assigned",
    ]


def test_a_required_property_given_as_null_is_given_its_types_empty_value():
    # as Heat: an explicit null is a value (the type's empty one), not a missing property
    props = Properties({"name": Schema(Schema.STRING, required=True), "n": Schema(Schema.INTEGER, required=True),
                        "m": Schema(Schema.MAP, required=True)}, {"name": None, "n": None, "m": None})
    props.validate()
    assert (props["name"], props["n"], props["m"]) == ("", 0, {})


def test_a_required_property_with_a_default_may_be_left_out():
    props = Properties({"n": Schema(Schema.INTEGER, required=True, default=3)}, {})
    props.validate()
    assert props["n"] == 3


def test_reading_a_missing_required_property_raises():
    with pytest.raises(ValidationFailed, match="Property name not assigned"):
        Properties({"name": Schema(Schema.STRING, required=True)}, {})["name"]


def test_an_unimplemented_property_may_not_be_given():
    schema = {"old": Schema(Schema.STRING, implemented=False)}
    Properties(schema, {}, path=PATH).validate()
    assert messages(schema, {"old": "x"}) == ["resources.web.properties: Property old not implemented yet"]


def test_reading_a_name_outside_the_schema_is_a_key_error():
    props = Properties({"a": Schema(Schema.STRING)}, {"b": 1})
    with pytest.raises(KeyError, match="Invalid Property b"):
        props["b"]
    assert list(props) == ["a"] and len(props) == 1 and "b" not in props


# -- constraints -----------------------------------------------------------------------------
def test_constraint_messages_carry_the_full_path():
    schema = {"port": Schema(Schema.INTEGER, constraints=[Range(1, 65535)])}
    assert messages(schema, {"port": 70000}) == [
        "resources.web.properties.port: 70000 is out of range (min: 1, max: 65535)"]


def test_constraints_apply_to_the_converted_value_and_all_are_reported():
    schema = {"name": Schema(Schema.STRING, constraints=[
        Length(max=3), AllowedPattern("[a-z]+"), AllowedValues(["ab", "cd"], description="ab or cd")])}
    assert messages(schema, {"name": 12345}) == [
        "resources.web.properties.name: length (5) is out of range (min: None, max: 3)",
        'resources.web.properties.name: "12345" does not match pattern "[a-z]+"',
        "resources.web.properties.name: ab or cd",
    ]


def test_constraints_are_checked_on_defaults_in_use_but_not_when_reading():
    schema = {"n": Schema(Schema.INTEGER, constraints=[Range(5, 10)])}
    assert Properties(schema, {"n": 1})["n"] == 1  # reading converts; validation judges
    Properties(schema, {}).validate()  # the empty value is not a value the user chose


def test_custom_constraints_are_checked_on_validation():
    schema = {"ip": Schema(Schema.STRING, constraints=[CustomConstraint("ip_addr")])}
    Properties(schema, {"ip": "10.0.0.1"}).validate()
    [message] = messages(schema, {"ip": "10.0.0.300"})
    assert message.startswith("resources.web.properties.ip: ")


# -- nested schemas ---------------------------------------------------------------------------
RULE = Schema(Schema.MAP, schema={
    "port": Schema(Schema.INTEGER, required=True, constraints=[Range(1, 65535)]),
    "protocol": Schema(Schema.STRING, default="tcp", constraints=[AllowedValues(["tcp", "udp"])]),
})
NESTED = {
    "rules": Schema(Schema.LIST, schema=RULE),
    "tags": Schema(Schema.MAP, schema={"owner": Schema(Schema.STRING), "ids": Schema(
        Schema.LIST, schema={"*": Schema(Schema.INTEGER)})}),
}


def test_nested_values_are_typed_and_filled_with_defaults():
    props = Properties(NESTED, {"rules": [{"port": "22"}], "tags": {"ids": ["1", 2]}})
    props.validate()
    assert props["rules"] == [{"port": 22, "protocol": "tcp"}]
    assert props["tags"] == {"owner": "", "ids": [1, 2]}


def test_every_nested_problem_is_reported_at_its_path():
    data = {
        "rules": [{"port": 22}, {"port": "x"}, {"protocol": "icmp", "extra": 1}, "not a map"],
        "tags": {"ids": [1, "two"], "colour": "red"},
        "other": True,
    }
    assert messages(NESTED, data) == [
        "resources.web.properties.other: Unknown Property other",
        "resources.web.properties.rules.1.port: Value 'x' is not an integer",
        "resources.web.properties.rules.2.extra: Unknown Property extra",
        "resources.web.properties.rules.2: Property port not assigned",
        'resources.web.properties.rules.2.protocol: "icmp" is not an allowed value ["tcp", "udp"]',
        'resources.web.properties.rules.3: "not a map" is not a map',
        "resources.web.properties.tags.colour: Unknown Property colour",
        "resources.web.properties.tags.ids.1: Value 'two' is not an integer",
    ]


def test_a_list_schema_keyed_by_index_checks_each_position():
    schema = {"pair": Schema(Schema.LIST, schema={0: Schema(Schema.STRING), 1: Schema(Schema.INTEGER)})}
    assert Properties(schema, {"pair": [1, "2"]})["pair"] == ["1", 2]
    assert messages(schema, {"pair": ["a", 1, 2]}) == ["resources.web.properties.pair.2: Unknown Property 2"]


def test_a_list_property_with_a_nested_schema_also_checks_its_own_constraints():
    schema = {"rules": Schema(Schema.LIST, schema=RULE, constraints=[Length(max=1)])}
    assert messages(schema, {"rules": [{"port": 1}, {"port": 2}]}) == [
        "resources.web.properties.rules: length (2) is out of range (min: None, max: 1)"]


# -- functions, pending values ------------------------------------------------------------------
def test_functions_are_resolved_before_conversion():
    props = Properties({"port": Schema(Schema.INTEGER)}, {"port": Fake("8080")})
    assert props["port"] == 8080
    assert props.resolved() == {"port": 8080}
    assert isinstance(props.data["port"], Fake)


def test_the_whole_properties_section_may_be_a_function():
    schema = {"port": Schema(Schema.INTEGER)}
    assert Properties(schema, Fake({"port": "1"}))["port"] == 1
    assert messages(schema, Fake(["no"])) == ['resources.web.properties: "[\'no\']" is not a map']


def test_pending_values_are_skipped_by_validation_but_raise_when_read():
    schema = {"port": Schema(Schema.INTEGER, constraints=[Range(1, 10)]), "name": Schema(Schema.STRING)}
    props = Properties(schema, {"port": Fake(ResourcePending("db")), "name": ["bad"]}, path=PATH)
    with pytest.raises(ValidationFailed) as info:
        props.validate()
    assert [str(p) for p in info.value.problems] == [
        "resources.web.properties.name: Value must be a string; got ['bad']"]
    with pytest.raises(ResourcePending):
        props["port"]


def test_one_pending_list_item_does_not_hide_its_siblings_problems():
    data = {"rules": [{"port": Fake(ResourcePending("db"))}, {"port": 0}]}
    assert messages(NESTED, data) == [
        "resources.web.properties.rules.1.port: 0 is out of range (min: 1, max: 65535)"]


def test_a_function_error_is_reported_at_the_function_path():
    error = FunctionError("bad argument", path=("resources", "web", "properties", "port", "get_param"))
    assert messages({"port": Schema(Schema.INTEGER)}, {"port": Fake(error)}) == [
        "resources.web.properties.port.get_param: bad argument"]


def test_validation_without_values_checks_only_the_shape():
    schema = {"port": Schema(Schema.INTEGER, constraints=[Range(1, 10)]),
              "name": Schema(Schema.STRING, required=True)}
    with pytest.raises(ValidationFailed) as info:
        Properties(schema, {"port": Fake(ResourcePending("db")), "bogus": 1}, path=PATH).validate(
            with_value=False)
    assert [str(p) for p in info.value.problems] == [
        "resources.web.properties.bogus: Unknown Property bogus",
    ]  # a required property without a value is Heat's create-time error, not validate's
    Properties(schema, {"port": "x", "name": "n"}).validate(with_value=False)


def test_resolved_gives_every_property_as_plain_typed_data():
    schema = {"port": Schema(Schema.INTEGER, default=80), "name": Schema(Schema.STRING),
              "rules": NESTED["rules"]}
    assert Properties(schema, {"rules": [{"port": Fake(5)}]}).resolved() == {
        "port": 80, "name": "", "rules": [{"port": 5, "protocol": "tcp"}]}


# -- the schema itself ------------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: Schema("Text"), "Invalid type (Text)"),
    (lambda: Schema(Schema.STRING, constraints=[Range(1, 2)]), "Range constraint invalid for String"),
    (lambda: Schema(Schema.MAP, constraints=[AllowedValues(["a"])]), "AllowedValues constraint invalid for Map"),
    (lambda: Schema(Schema.STRING, schema={"a": Schema(Schema.STRING)}), "Schema valid only for List or Map"),
    (lambda: Schema(Schema.MAP, schema=Schema(Schema.STRING)), "Single schema valid only for List, not Map"),
    (lambda: Schema(Schema.STRING, update_allowed=True, immutable=True), "cannot both be True"),
    (lambda: Schema(Schema.INTEGER, default="x"), "Invalid default 'x'"),
    (lambda: Schema(Schema.INTEGER, default=0, constraints=[Range(1, 2)]), "Invalid default 0"),
])
def test_a_self_contradicting_schema_is_refused(make, message):
    with pytest.raises(InvalidSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_a_default_is_not_checked_against_custom_constraints():
    Schema(Schema.STRING, default="not-an-ip", constraints=[CustomConstraint("ip_addr")])


def test_legacy_dictionary_schemas_are_accepted():
    schema = {"size": {"Type": "Integer", "MinValue": "1", "MaxValue": 10, "Required": True},
              "names": {"Type": "List", "Schema": {"Type": "String", "MaxLength": 3}}}
    props = Properties(schema, {"size": "4", "names": ["a"]})
    props.validate()
    assert props["size"] == 4 and props.schema["size"].required
    assert messages(schema, {"size": 11, "names": ["long"]}) == [
        "resources.web.properties.size: 11 is out of range (min: 1, max: 10)",
        "resources.web.properties.names.0: length (4) is out of range (min: None, max: 3)",
    ]
    with pytest.raises(InvalidSchemaError, match=r"Unknown key\(s\) \['Colour'\]"):
        Properties({"x": {"Type": "String", "Colour": "red"}}, {})


def test_schema_from_params_builds_the_facade_of_a_provider_template():
    params = {
        "count": ParameterSchema(name="count", type="number", default=1, constraints=[Range(1, 5)]),
        "names": ParameterSchema(name="names", type="comma_delimited_list", description="who"),
        "conf": ParameterSchema(name="conf", type="json", default={}),
        "flag": ParameterSchema(name="flag", type="boolean", default=False),
        "word": ParameterSchema(name="word", type="string"),
    }
    schema = Properties.schema_from_params(params)
    assert {n: s.type for n, s in schema.items()} == {
        "count": Schema.NUMBER, "names": Schema.LIST, "conf": Schema.MAP,
        "flag": Schema.BOOLEAN, "word": Schema.STRING}
    assert [n for n, s in schema.items() if s.required] == ["names", "word"]
    assert all(s.update_allowed for s in schema.values())
    assert schema["names"].description == "who"
    props = Properties(schema, {"names": "a,b", "conf": '{"k": 1}', "word": "w", "count": 9}, path=PATH)
    assert props["names"] == ["a", "b"] and props["conf"] == '{"k": 1}'
    with pytest.raises(ValidationFailed, match="9 is out of range"):
        props.validate()
    assert Properties.schema_from_params(None) == {}


def test_validation_checks_nothing_of_a_property_left_out_and_reading_it_fills_defaults():
    """As Heat: a map left out is no error, even when its keys are required (they are only when
    it is given); one whose keys are all optional reads with its nested defaults."""
    schema = {"opts": Schema(Schema.MAP, schema={"key": Schema(Schema.STRING, required=True)}),
              "mode": Schema(Schema.STRING, default="a", constraints=[AllowedValues(["a", "b"])]),
              "tune": Schema(Schema.MAP, schema={"level": Schema(Schema.INTEGER, default=3)})}
    props = Properties(schema, {}, path=PATH)
    props.validate()
    assert props.resolved() == {"opts": {}, "mode": "a", "tune": {"level": 3}}
    assert messages(schema, {"opts": {}}) == ["resources.web.properties.opts: Property key not assigned"]
    assert Properties(schema, {"opts": {"key": "k"}}, path=PATH).resolved() == {
        "opts": {"key": "k"}, "mode": "a", "tune": {"level": 3}}
