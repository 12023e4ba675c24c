"""Attribute schemas and support statuses."""

from __future__ import annotations

import pytest

from stoker.resources import attributes, support
from stoker.resources.exceptions import InvalidSchemaError


def test_every_resource_has_show_and_its_own_attributes():
    schemas = attributes.schemata({"ip": attributes.Schema("The IP.", type=attributes.Schema.STRING)})
    assert list(schemas) == ["show", "ip"]
    show = schemas[attributes.SHOW]
    assert (show.type, show.cache_mode) == (attributes.Schema.MAP, attributes.Schema.CACHE_NONE)
    assert schemas["ip"].cache_mode == attributes.Schema.CACHE_LOCAL
    assert schemas["ip"].support_status.status == support.SUPPORTED


def test_a_bare_description_is_an_attribute_schema():
    schemas = attributes.schemata({"Attr_1": "The first attribute"})
    assert schemas["Attr_1"].description == "The first attribute" and schemas["Attr_1"].type is None


@pytest.mark.parametrize("schema, message", [
    ({"*": "all"}, "Invalid attribute name '\\*'"),
    ({"a": 42}, "Attribute a: expected attributes.Schema"),
])
def test_bad_attribute_schemas_are_refused(schema, message):
    with pytest.raises(InvalidSchemaError, match=message):
        attributes.schemata(schema)


def test_attribute_types_and_cache_modes_are_checked():
    with pytest.raises(InvalidSchemaError, match="Invalid type"):
        attributes.Schema("x", type="Text")
    with pytest.raises(InvalidSchemaError, match="Invalid cache mode"):
        attributes.Schema("x", cache_mode="forever")
    assert attributes.Schema("n", type=attributes.Schema.NUMBER).type == "Number"


def test_support_status_defaults_and_history():
    old = support.SupportStatus(support.DEPRECATED, "use y", version="2014.2")
    status = support.SupportStatus(support.HIDDEN, version="2016.1", previous_status=old)
    assert status.to_dict() == {
        "status": "HIDDEN", "message": None, "version": "2016.1",
        "previous_status": {"status": "DEPRECATED", "message": "use y", "version": "2014.2",
                            "previous_status": None},
    }
    assert support.SupportStatus().status == support.SUPPORTED
    assert support.is_valid_status("UNSUPPORTED") and not support.is_valid_status("MAYBE")


def test_an_unknown_status_becomes_unknown_with_a_message():
    status = support.SupportStatus("5.0.0", version="x")
    assert (status.status, status.version) == (support.UNKNOWN, None)
    assert "invalid" in status.message


def test_previous_status_must_be_a_support_status():
    with pytest.raises(ValueError, match="previous_status must be a SupportStatus"):
        support.SupportStatus(previous_status="DEPRECATED")


def test_substitute_class():
    class New:
        pass

    status = support.SupportStatus(support.DEPRECATED, substitute_class=New)
    assert status.is_substituted(New) and not status.is_substituted(object)
    assert not support.SupportStatus().is_substituted(New)
