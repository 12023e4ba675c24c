"""Stored values are capped (max_value_size) as they are stored: properties on create and on
update, and outputs as they are shown; each refusal names the limit."""

from __future__ import annotations

import pytest


def _value(value) -> dict:
    return {"heat_template_version": "2018-08-31",
            "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": value}}},
            "outputs": {"v": {"value": {"get_attr": ["v", "value"]}}}}


@pytest.mark.sqlite_only
def test_a_big_stored_value_fails_its_resource_naming_the_limit(make_engine, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "2000")
    engine = make_engine()
    failed = engine.create_stack("big", _value(["item"] * 500))
    assert failed["stack_status"] == "CREATE_FAILED"
    assert "max_value_size" in failed["stack_status_reason"]

    small = engine.create_stack("small", _value(["item"] * 10))
    assert small["stack_status"] == "CREATE_COMPLETE"
    updated = engine.update_stack("small", _value(["item"] * 500))
    assert updated["stack_status"] == "UPDATE_FAILED"
    assert "max_value_size" in updated["stack_status_reason"]


@pytest.mark.sqlite_only
def test_an_output_over_the_limit_is_an_output_error(make_engine, monkeypatch):
    engine = make_engine()
    template = _value("x" * 900)
    template["outputs"]["many"] = {"value": [{"get_attr": ["v", "value"]}] * 100}
    assert engine.create_stack("s", template)["stack_status"] == "CREATE_COMPLETE"
    monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "5000")
    outputs = {o["output_key"]: o for o in engine.outputs("s")}
    assert outputs["v"]["output_value"] == "x" * 900
    assert outputs["many"]["output_value"] is None and "max_value_size" in outputs["many"]["output_error"]
