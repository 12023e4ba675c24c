"""Constraints (range, length, ...) and the custom-constraint registry."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.constraints import custom
from stoker.constraints.base import (
    AllowedPattern,
    AllowedValues,
    ConstraintViolation,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from stoker.constraints.common import parse_iso8601
from stoker.constraints.cron import check_cron
from stoker.errors import StokerError


@pytest.fixture
def registry(monkeypatch):
    """A private copy of the registry, so test registrations do not leak."""
    monkeypatch.setattr(custom, "_REGISTRY", dict(custom._REGISTRY))
    return custom


def violation(constraint, value) -> str:
    with pytest.raises(ConstraintViolation) as info:
        constraint.validate(value)
    return info.value.message


# -- range, length, modulo ---------------------------------------------------------

def test_range_accepts_its_inclusive_bounds():
    port = Range(1, 65535)
    port.validate(1)
    port.validate(65535)
    port.validate(8080.5)


def test_range_message_is_heats():
    assert violation(Range(1, 65535), 70000) == "70000 is out of range (min: 1, max: 65535)"
    assert violation(Range(min=6), 5) == "5 is out of range (min: 6, max: None)"


def test_range_rejects_non_numbers_with_a_message():
    assert violation(Range(max=3), "2") == '"2" is not a number'
    assert violation(Range(max=3), True) == "true is not a number"


def test_description_replaces_the_default_message():
    assert violation(Range(1, 2, "pick 1 or 2"), 3) == "pick 1 or 2"


def test_violation_is_a_stoker_error_with_its_code():
    exc = ConstraintViolation("bad")
    assert isinstance(exc, StokerError)
    assert (exc.code, exc.message, str(exc)) == ("constraint-violation", "bad", "bad")


@pytest.mark.parametrize("args, message", [
    ((), "a range constraint needs a min value, a max value or both"),
    (("1", None), 'the min and max of a range constraint must be numbers, not "1"'),
    ((None, True), "the min and max of a range constraint must be numbers, not true"),
])
def test_range_argument_errors(args, message):
    with pytest.raises(ValueError) as info:
        Range(*args)
    assert str(info.value) == message


@pytest.mark.parametrize("value", ["abc", ["a", "b", "c"], {"a": 1, "b": 2, "c": 3}])
def test_length_measures_strings_lists_and_maps(value):
    Length(3, 3).validate(value)
    assert violation(Length(min=6, max=8), value) == "length (3) is out of range (min: 6, max: 8)"


def test_length_rejects_values_without_length():
    assert violation(Length(max=2), 12) == "12 has no length"


def test_length_bounds_must_be_integers():
    with pytest.raises(ValueError, match="must be integers, not 1.5"):
        Length(1.5)
    with pytest.raises(ValueError, match="needs a min value, a max value or both"):
        Length()


def test_modulo_accepts_odd_numbers_only():
    odd = Modulo(2, 1)
    odd.validate(7)
    odd.validate(-3)
    assert violation(odd, 8) == "8 is not a multiple of 2 with an offset of 1"
    assert violation(odd, 7.5) == "7.5 is not a multiple of 2 with an offset of 1"


def test_modulo_with_negative_step_and_offset():
    Modulo(-2, -1).validate(-3)
    assert violation(Modulo(-2, -1), -4) == "-4 is not a multiple of -2 with an offset of -1"


@pytest.mark.parametrize("args, message", [
    ((None, 1), "needs both a step and an offset"),
    ((0, 0), "step of a modulo constraint cannot be 0"),
    ((2, 2), "offset of a modulo constraint must be smaller than its step"),
    ((-2, 1), "must have the same sign"),
    ((2.5, 1), "must be integers, not 2.5"),
    (("2", 1), 'must be integers, not "2"'),
])
def test_modulo_argument_errors(args, message):
    with pytest.raises(ValueError, match=message):
        Modulo(*args)


def test_modulo_accepts_integral_floats_as_integers():
    assert Modulo(2.0, 1.0).schema_dict() == {"modulo": {"step": 2, "offset": 1}}


@given(st.integers(), st.integers(-50, 50), st.integers(0, 100))
def test_range_property(value, low, width):
    valid = low <= value <= low + width
    assert (Range(low, low + width).problem(value) is None) == valid


@given(st.integers(), st.integers(1, 20), st.data())
def test_modulo_property(value, step, data):
    offset = data.draw(st.integers(0, step - 1))
    assert (Modulo(step, offset).problem(value) is None) == (value % step == offset)


# -- allowed values and patterns -----------------------------------------------------

def test_allowed_values_message_is_heats():
    assert violation(AllowedValues(["a", "b"]), "foo") == '"foo" is not an allowed value ["a", "b"]'


def test_allowed_values_checks_each_item_of_a_list():
    allowed = AllowedValues(["a", "b"])
    allowed.validate(["a", "b", "a"])
    assert violation(allowed, ["a", "c"]) == '["a", "c"] is not an allowed value ["a", "b"]'


def test_allowed_values_coerce_turns_the_allowed_values_into_the_value_type():
    allowed = AllowedValues(["1", 2, "x"], coerce=int)
    allowed.validate(1)
    allowed.validate(2)
    assert violation(allowed, 3) == '3 is not an allowed value ["1", 2, "x"]'


def test_allowed_values_must_be_a_list():
    with pytest.raises(ValueError, match='allowed_values must be a list, not "ab"'):
        AllowedValues("ab")


def test_allowed_pattern_must_match_the_whole_string():
    upper = AllowedPattern("[A-Z]+")
    upper.validate("ABC")
    assert violation(upper, "x") == '"x" does not match pattern "[A-Z]+"'
    assert violation(upper, "AAx") == '"AAx" does not match pattern "[A-Z]+"'


def test_allowed_pattern_uses_match_then_end_as_heat():
    # re.match picks "a" first and does not backtrack to "ab", as in Heat
    assert violation(AllowedPattern("a|ab"), "ab") == '"ab" does not match pattern "a|ab"'


def test_allowed_pattern_argument_errors():
    with pytest.raises(ValueError, match="allowed_pattern must be a string, not 5"):
        AllowedPattern(5)
    with pytest.raises(ValueError, match='"\\(" is not a valid regular expression'):
        AllowedPattern("(")


# -- serialising and summaries -------------------------------------------------------

@pytest.mark.parametrize("constraint, data", [
    (Range(1, 65535, "a port"), {"range": {"min": 1, "max": 65535}, "description": "a port"}),
    (Length(max=8), {"length": {"max": 8}}),
    (Modulo(2, 1), {"modulo": {"step": 2, "offset": 1}}),
    (AllowedValues([1, "a"]), {"allowed_values": [1, "a"]}),
    (AllowedPattern("[a-z]+"), {"allowed_pattern": "[a-z]+"}),
    (CustomConstraint("ip_addr"), {"custom_constraint": "ip_addr"}),
])
def test_schema_dict_is_the_hot_form(constraint, data):
    assert constraint.schema_dict() == data


@pytest.mark.parametrize("constraint, text", [
    (Range(min=1), "The value must be at least 1."),
    (Range(max=9), "The value must be at most 9."),
    (Length(6, 8), "The length must be between 6 and 8."),
    (Modulo(2, 1), "The value must be a multiple of 2 with an offset of 1."),
    (AllowedValues(["a", 1]), 'Allowed values: "a", 1'),
    (AllowedPattern("[a-z]+"), "The value must match the pattern: [a-z]+"),
    (CustomConstraint("no.such"), "The value must be a valid no.such."),
])
def test_summary_states_the_rule_without_a_value(constraint, text):
    assert constraint.summary() == text


# -- custom constraints --------------------------------------------------------------

def test_registry_ships_heats_generic_constraints():
    assert {"ip_addr", "iso_8601", "mac_addr", "net_cidr", "ip_or_cidr", "dns_name",
            "rel_dns_name", "dns_domain", "cron_expression", "timezone", "expiration",
            "test_constr"} <= set(custom.names())
    assert custom.get("no.such") is None


def test_unknown_custom_constraint_fails_every_value():
    message = violation(CustomConstraint("no.such"), "a")
    assert message == '"a" does not validate no.such (constraint not found)'


def test_custom_constraint_name_must_be_a_string():
    with pytest.raises(ValueError, match="custom_constraint must be a constraint name, not 5"):
        CustomConstraint(5)


def test_callable_returning_false(registry):
    registry.register("test.even", lambda v: v % 2 == 0)
    CustomConstraint("test.even").validate(4)
    assert violation(CustomConstraint("test.even"), 3) == '"3" does not validate test.even'


def test_callable_raising_gives_its_reason(registry):
    def positive(value):
        if value <= 0:
            raise ValueError("must be positive")
    registry.register("test.positive", positive)
    CustomConstraint("test.positive").validate(1)
    assert violation(CustomConstraint("test.positive"), -1) == \
        "Error validating value '-1': must be positive"


def test_heat_style_class_with_validate_error_and_message(registry):
    class Flavor:
        message = "The value must be a flavor."

        def validate(self, value, context):
            return value in ("m1.small", "m1.large")

        def error(self, value):
            return f"no flavor {value}"

    registry.register("test.flavor", Flavor)
    CustomConstraint("test.flavor").validate("m1.small")
    assert violation(CustomConstraint("test.flavor"), "m1.huge") == "no flavor m1.huge"
    assert CustomConstraint("test.flavor").summary() == "The value must be a flavor."


def test_heat_style_client_constraint_is_called_with_no_client(registry):
    calls = []

    class BaseCustomConstraint:  # stands for heat.engine.constraints.BaseCustomConstraint
        def validate(self, value, context):
            raise AssertionError("needs a cloud client")

    class Network(BaseCustomConstraint):
        def validate_with_client(self, client, value):
            calls.append((client, value))
            if value != "net0":
                raise LookupError(f"network {value} not found")

    registry.register("test.network", Network())
    CustomConstraint("test.network").validate("net0")
    assert violation(CustomConstraint("test.network"), "x") == \
        "Error validating value 'x': network x not found"
    assert calls == [(None, "net0"), (None, "x")]


def test_register_rejects_what_cannot_check(registry):
    with pytest.raises(TypeError, match="neither callable nor has a validate method"):
        registry.register("test.bad", 5)


def test_register_replaces_an_earlier_check(registry):
    registry.register("test.twice", lambda v: False)
    registry.register("test.twice", lambda v: True)
    CustomConstraint("test.twice").validate("anything")


# -- the generic checks --------------------------------------------------------------

def check(name, value):
    """The error message of custom constraint ``name`` for ``value`` (None: valid)."""
    return custom.get(name).error(value)


@pytest.mark.parametrize("value", ["10.0.0.1", "0.0.0.0", "::1", "FE80::1", "::ffff:1.2.3.4"])
def test_ip_addr_valid(value):
    assert check("ip_addr", value) is None


@pytest.mark.parametrize("value", ["10.0.0", "10.0.0.01", "10.0.0.256", "1.2.3.4 ", "fe80::1%eth0",
                                   "1.2.3.4/24", "abc", "", 5])
def test_ip_addr_invalid(value):
    assert check("ip_addr", value) == f"Error validating value '{value}': Invalid IP address"


@given(st.ip_addresses())
def test_ip_addr_accepts_every_printed_address(address):
    assert check("ip_addr", str(address)) is None


@pytest.mark.parametrize("value", ["10.0.0.0/24", "10.0.0.1/24", "0.0.0.0/0", "2001:db8::/32",
                                   "2001:DB8::1/64", "::/0"])
def test_net_cidr_valid(value):
    assert check("net_cidr", value) is None


@pytest.mark.parametrize("value", ["10.0.0.0", "10/8", "10.0.0.0/33", "10.0.0.0/255.255.255.0",
                                   "10.0.0.0/024", "10.0.0.0/ 24", "10.00.0.0/24", "256.0.0.0/8",
                                   "10.0.0.300/24", "10.0.0.0/40", "10.0.0.0/24\n"])
def test_net_cidr_invalid(value):
    assert check("net_cidr", value) == (f"Error validating value '{value}': "
                                        f"'{value}' is not a valid IP subnet")


@given(st.ip_addresses(v=4), st.integers(0, 32))
def test_net_cidr_accepts_any_ipv4_address_with_a_prefix(address, prefix):
    assert check("net_cidr", f"{address}/{prefix}") is None


def test_ip_or_cidr():
    assert check("ip_or_cidr", "10.0.0.1") is None
    assert check("ip_or_cidr", "10.0.0.0/24") is None
    assert check("ip_or_cidr", "10.0.0.0/33") == \
        "Error validating value '10.0.0.0/33': '10.0.0.0/33' is not a valid IP subnet"
    assert check("ip_or_cidr", "abc") == \
        "Error validating value 'abc': 'abc' is not a valid IP address"


@pytest.mark.parametrize("value", ["00:11:22:33:44:55", "00-11-22-33-44-55", "AA:bb:CC:dd:EE:ff",
                                   "0:1:2:3:4:5", "0011.2233.4455", "0011:2233:4455",
                                   "001122:334455", "001122334455"])
def test_mac_addr_valid(value):
    assert check("mac_addr", value) is None


@pytest.mark.parametrize("value", ["00:11:22:33:44", "00:11:22:33:44:55:66", "GG:11:22:33:44:55",
                                   "00 11 22 33 44 55", "00:11-22:33-44:55", "0011:2233.4455", ""])
def test_mac_addr_invalid(value):
    assert check("mac_addr", value) == f"Error validating value '{value}': Invalid MAC address."


@given(st.lists(st.integers(0, 255), min_size=6, max_size=6), st.sampled_from([":", "-"]))
def test_mac_addr_accepts_any_six_octets(octets, separator):
    assert check("mac_addr", separator.join(f"{o:02x}" for o in octets)) is None


@pytest.mark.parametrize("value", ["example.com", "example.com.", "a" * 63 + ".com", "x.123", ""])
def test_dns_name_valid(value):
    assert check("dns_name", value) is None


@pytest.mark.parametrize("value, reason", [
    ("Example.com", "the label 'Example' must be 1 to 63 lowercase letters, digits or hyphens"),
    ("a_b.com", "the label 'a_b' must be 1 to 63 lowercase letters, digits or hyphens"),
    ("a..b", "'a..b' has an empty label"),
    ("-a.com", "the label '-a' must not start or end with a hyphen"),
    ("x.123.", "the top-level domain '123' must not be all digits"),
    ("a" * 64 + ".com", "must be 1 to 63 lowercase letters"),
])
def test_dns_name_invalid(value, reason):
    assert reason in check("dns_name", value)


def test_rel_dns_name():
    assert check("rel_dns_name", "host") is None
    assert check("rel_dns_name", "") is None
    assert "'host.' is a FQDN; it must be a relative name" in check("rel_dns_name", "host.")
    assert "adding a domain would exceed" in check("rel_dns_name", "a" * 253)


def test_dns_domain():
    assert check("dns_domain", "example.com.") is None
    assert "'example.com' must end with '.'" in check("dns_domain", "example.com")
    assert "must not be all digits" in check("dns_domain", "x.123.")


@pytest.mark.parametrize("text, expected", [
    ("2015", datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc)),
    ("2015-1-1", datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc)),
    ("20150102T0930", datetime.datetime(2015, 1, 2, 9, 30, tzinfo=datetime.timezone.utc)),
    ("2015-01-02 09:30:15,5Z",
     datetime.datetime(2015, 1, 2, 9, 30, 15, 500000, tzinfo=datetime.timezone.utc)),
    ("2015-01-02T09:30:00-05:30",
     datetime.datetime(2015, 1, 2, 9, 30,
                       tzinfo=datetime.timezone(-datetime.timedelta(hours=5, minutes=30)))),
])
def test_parse_iso8601(text, expected):
    assert parse_iso8601(text) == expected


@pytest.mark.parametrize("value", ["201501", "2015-W01", "2015-01T10", "2015-13-01", "2015-02-30",
                                   "2015-01-01T24:00:00", "2015-01-01t00:00:00z", " 2015-01-01",
                                   "abc", ""])
def test_iso_8601_invalid(value):
    assert check("iso_8601", value).startswith(f"Error validating value '{value}': ")


@given(st.datetimes(min_value=datetime.datetime(1000, 1, 1)))
def test_iso_8601_reads_what_isoformat_writes(moment):
    text = moment.isoformat()
    assert parse_iso8601(text) == moment.replace(tzinfo=datetime.timezone.utc)


def test_expiration():
    future = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1))
    assert check("expiration", future.isoformat()) is None
    assert check("expiration", "") is None
    assert check("expiration", "2000-01-01T00:00:00Z") == \
        "Error validating value '2000-01-01T00:00:00Z': the expiration time 2000-01-01T00:00:00Z " \
        "is in the past"


@pytest.mark.parametrize("value", ["* * * * *", "*/5 0-23/2 1,15 JAN-jun mon-FRI", "0 0 * * * 59",
                                   "0 0 * * * * 2025", "@daily", "0 0 ? * 7", "0 0 L * *",
                                   "0 0 15W * *", "0 0 * * 5#3", "5-2 * * * *", ""])
def test_cron_expression_valid(value):
    assert check("cron_expression", value) is None


@pytest.mark.parametrize("value, reason", [
    ("* * * *", "a cron expression has 5, 6 or 7 fields, not 4"),
    ("60 * * * *", "minute 60 is out of range (0-59)"),
    ("0 24 * * *", "hour 24 is out of range (0-23)"),
    ("0 0 0 * *", "day of month 0 is out of range (1-31)"),
    ("0 0 * 13 *", "month 13 is out of range (1-12)"),
    ("0 0 * * 8", "day of week 8 is out of range (0-7)"),
    ("*/0 * * * *", '"*/0": the step of a minute must be a positive number'),
    ("a * * * *", '"a" is not a valid minute'),
    ("0 0 * ? *", '"?" is not a valid month'),
    ("0 0 * * 1#6", '"1#6": the week of the month must be 1 to 5'),
    ("0 0 * * * * 1969", "year 1969 is out of range (1970-2099)"),
    ("@reboot", "a cron expression has 5, 6 or 7 fields, not 1"),
])
def test_cron_expression_invalid(value, reason):
    with pytest.raises(ValueError) as info:
        check_cron(value)
    assert str(info.value) == reason


cron_field = st.one_of(
    st.just("*"),
    st.integers(0, 23).map(str),
    st.tuples(st.integers(0, 23), st.integers(0, 23)).map(lambda t: f"{t[0]}-{t[1]}"),
    st.integers(1, 60).map(lambda s: f"*/{s}"),
)


@given(st.lists(cron_field, min_size=2, max_size=2), st.integers(1, 28), st.integers(1, 12),
       st.integers(0, 7))
def test_cron_expression_property(fields, day, month, weekday):
    assert check("cron_expression", f"{' '.join(fields)} {day} {month} {weekday}") is None


def test_timezone():
    assert check("timezone", "Europe/Paris") is None
    assert check("timezone", "") is None
    assert check("timezone", "Nowhere/Land") == \
        "Error validating value 'Nowhere/Land': 'Nowhere/Land' is not a known time zone"


def test_json_string():
    assert check("json_string", '{"a": 1}') is None
    assert "the JSON string is invalid" in check("json_string", "[1")


def test_test_constr_delays_by_the_value(monkeypatch):
    delays = []
    monkeypatch.setattr("stoker.constraints.common.time.sleep", delays.append)
    assert check("test_constr", 2) is None
    assert delays == [2]


def test_test_constr_rejects_a_negative_delay():
    assert "non-negative" in check("test_constr", -1)

