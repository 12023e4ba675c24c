"""OS::Heat::Value: a value, checked against its type as Heat checks a property, as an attribute."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed
from stoker.resources.builtin.value import Value

from .fakes import create, make, run, update


def created(props):
    res = make(Value, props)
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE")
    return res


@pytest.mark.parametrize("value", ["text", "", 42, [1, "a"], {"k": {"n": True}}])
def test_untyped_value_is_returned_as_given(value):
    assert created({"value": value}).FnGetAtt("value") == value


@pytest.mark.parametrize("value_type,value,expected", [
    ("string", 5, "5"),
    ("number", "3.5", 3.5),
    ("number", "7", 7),
    ("comma_delimited_list", [1, 2], [1, 2]),
    ("json", {"a": 1}, {"a": 1}),
    ("boolean", "TRUE", True),
    ("boolean", "false", False),
])
def test_typed_value_is_converted_like_a_property(value_type, value, expected):
    res = created({"value": value, "type": value_type})
    assert res.FnGetAtt("value") == expected


def test_path_into_the_value():
    res = created({"value": {"a": [10, 20]}, "type": "json"})
    assert res.FnGetAtt("value", "a", 1) == 20


def test_value_that_does_not_convert_is_rejected_at_validation():
    res = make(Value, {"value": "twelve", "type": "number"})
    with pytest.raises(ValidationFailed, match="Value 'twelve' is not a number"):
        res.validate_template()


def test_value_that_does_not_convert_fails_create_at_the_property():
    res = make(Value, {"value": "maybe", "type": "boolean"})
    with pytest.raises(ValidationFailed, match=r'resources\.res\.properties\.value: "maybe" is not a valid boolean'):
        run(create(res))
    assert res.resource_id is None


def test_unknown_type_is_rejected():
    res = make(Value, {"value": 1, "type": "integer"})
    with pytest.raises(ValidationFailed):
        res.validate_template()


def test_value_is_required():
    with pytest.raises(ValidationFailed):
        make(Value, {"type": "string"}).validate_template()


def test_update_in_place():
    res = created({"value": "1", "type": "number"})
    ref = res.FnGetRefId()
    run(update(res, {"value": ["2", "3"], "type": "comma_delimited_list"}))
    assert res.state == ("UPDATE", "COMPLETE")
    assert res.FnGetAtt("value") == ["2", "3"]
    assert res.FnGetRefId() == ref
