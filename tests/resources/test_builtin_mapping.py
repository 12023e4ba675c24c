"""The built-in types are all registered and describe themselves."""

from __future__ import annotations

import pytest

from stoker.resources.builtin import resource_mapping
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus

EXPECTED = {
    "OS::Heat::None", "OS::Heat::Value", "OS::Heat::RandomString", "OS::Heat::TestResource",
    "Stoker::Local::File", "Stoker::Local::Command", "OS::Heat::Stack", "OS::Heat::ResourceGroup",
}


def test_mapping_has_every_builtin_type():
    assert EXPECTED <= set(resource_mapping())


@pytest.mark.parametrize("type_name", sorted(resource_mapping()))
def test_each_type_is_documented_and_has_a_support_status(type_name):
    cls = resource_mapping()[type_name]
    assert issubclass(cls, Resource)
    assert isinstance(cls.support_status, SupportStatus)
    assert cls.__doc__ and cls.__doc__.strip()
    for name, schema in cls.properties_schema.items():
        assert schema.description, f"{type_name} property {name} has no description"
    for name, schema in cls.attributes_schema.items():
        assert schema.description, f"{type_name} attribute {name} has no description"
