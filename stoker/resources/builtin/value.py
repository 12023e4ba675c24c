"""``OS::Heat::Value``: a value computed in the template, exposed as an attribute."""

from __future__ import annotations

from typing import Any

from stoker.constraints import AllowedValues
from stoker.resources import attributes, properties
from stoker.errors import StokerError
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus
from stoker.template.parameters import TYPES

VALUE, TYPE = "value", "type"
VALUE_DESCRIPTION = 'The expression to generate the "value" attribute.'
#: the property type of ``value`` for each ``type`` (Heat's Value.reparse)
PROPERTY_TYPES = {"string": properties.Schema.STRING, "number": properties.Schema.NUMBER,
                  "comma_delimited_list": properties.Schema.LIST, "json": properties.Schema.MAP,
                  "boolean": properties.Schema.BOOLEAN}


class Value(Resource):
    """Holds a value (any expression of parameters and other resources).

    Its ``value`` attribute is the ``value`` property; a ``type`` makes it a
    property of that type (Heat's rules: ``'a,b'`` is not a comma_delimited_list).
    Updates happen in place.
    """

    support_status = SupportStatus(version="7.0.0")
    run_in_thread = False
    acts_outside = False

    properties_schema = {
        VALUE: properties.Schema(
            properties.Schema.ANY, VALUE_DESCRIPTION,
            required=True, update_allowed=True,
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING, 'The type of the "value" property.',
            constraints=[AllowedValues(list(TYPES))], update_allowed=True,
        ),
    }

    attributes_schema = {
        VALUE: attributes.Schema(
            'The "value" property, of the type the "type" property names.',
        ),
    }

    def build_properties(self, data: Any, resolved: bool = False) -> properties.Properties:
        """As Heat: with a ``type``, the ``value`` property has the matching property type
        (a comma_delimited_list must be a list, json a map), checked as properties are."""
        self.properties_schema = type(self).properties_schema
        props = super().build_properties(data, resolved)
        typed = PROPERTY_TYPES.get(_given_type(props))
        if typed is not None:
            self.properties_schema = {**self.properties_schema, VALUE: properties.Schema(
                typed, VALUE_DESCRIPTION, required=True, update_allowed=True)}
            props = super().build_properties(data, resolved)
        return props

    def handle_create(self) -> None:
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        """Updated in place: the new properties are all there is."""

    def _resolve_attribute(self, name: str) -> Any:
        return self.properties[VALUE] if name == VALUE else None


def _given_type(props: properties.Properties) -> Any:
    """The ``type`` property when it is known now (it may wait for a resource)."""
    try:
        return props[TYPE]
    except (StokerError, ValueError, TypeError):
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::Value": Value}
