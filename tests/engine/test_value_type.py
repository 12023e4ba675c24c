"""``OS::Heat::Value`` with a ``type`` checks its value as Heat does: the type makes ``value`` a
property of that type (``'a,b'`` is not a comma_delimited_list, a JSON string is not json)."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed


def _template(value_type: str, value) -> dict:
    return {"heat_template_version": "2018-08-31",
            "parameters": {"text": {"type": "string", "default": ""},
                           "items": {"type": "comma_delimited_list", "default": ""}},
            "resources": {"v": {"type": "OS::Heat::Value",
                                "properties": {"type": value_type, "value": value}}},
            "outputs": {"out": {"value": {"get_attr": ["v", "value"]}}}}


@pytest.mark.parametrize("value_type, value, expected", [
    ("comma_delimited_list", ["a", "b"], ["a", "b"]),
    ("json", {"a": 1}, {"a": 1}),
    ("number", "3", 3),
    ("number", 2.5, 2.5),
    ("boolean", "true", True),
    ("boolean", False, False),
    ("string", 5, "5"),
    ("string", "text", "text"),
])
def test_values_heat_accepts_come_out_typed(engine, value_type, value, expected):
    created = engine.create_stack("ok", _template(value_type, value))
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert engine.outputs("ok")[0]["output_value"] == expected


@pytest.mark.parametrize("value_type, value, message", [
    ("comma_delimited_list", "a,b", "\"'a,b'\" is not a list"),
    ("json", '{"a": 1}', 'is not a map'),
    ("json", ["a"], 'is not a map'),
    ("number", "many", "Value 'many' is not a number"),
    ("boolean", "yes", '"yes" is not a valid boolean'),
    ("string", [1], "Value must be a string; got [1]"),
])
def test_values_heat_refuses_fail_the_create_at_the_property(engine, value_type, value, message):
    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("bad", _template(value_type, value))
    [problem] = refused.value.problems
    assert problem.path == ("resources", "v", "properties", "value")
    assert message in problem.message


def test_a_value_from_a_parameter_is_checked_at_create(engine):
    text = _template("comma_delimited_list", {"get_param": "text"})
    with pytest.raises(ValidationFailed, match=r"resources\.v\.properties\.value: \"'a,b'\" is not a list"):
        engine.create_stack("late", text, parameters={"text": "a,b"})
    created = engine.create_stack("fine", _template("comma_delimited_list", {"get_param": "items"}),
                                  parameters={"items": "a,b"})
    assert engine.outputs(created["id"])[0]["output_value"] == ["a", "b"]
