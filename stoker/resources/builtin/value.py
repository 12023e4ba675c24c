"""``OS::Heat::Value``: a value computed in the template, exposed as an attribute."""

from __future__ import annotations

from typing import Any

from stoker.constraints import AllowedValues
from stoker.resources import attributes, properties
from stoker.resources.builtin._common import unless_pending
from stoker.resources.exceptions import StackValidationFailed
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus
from stoker.template.parameters import TYPES, ParameterSchema

VALUE, TYPE = "value", "type"


class Value(Resource):
    """Holds a value (any expression of parameters and other resources).

    Its ``value`` attribute is the ``value`` property, converted to ``type``
    the way a template parameter of that type is, when a type is given.
    Updates happen in place.
    """

    support_status = SupportStatus(version="7.0.0")
    run_in_thread = False
    acts_outside = False

    properties_schema = {
        VALUE: properties.Schema(
            properties.Schema.ANY, 'The expression to generate the "value" attribute.',
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

    def _value(self) -> Any:
        value, value_type = self.properties[VALUE], self.properties[TYPE]
        if not value_type:
            return value
        try:
            return ParameterSchema(name=VALUE, type=value_type).convert(value)
        except ValueError as exc:
            raise StackValidationFailed(
                path=["resources", self.name, "properties", VALUE],
                message=f"the value is not a valid {value_type}: {exc}",
            ) from None

    @unless_pending
    def validate(self) -> None:
        """The value must convert to its type (without a type, any value is fine)."""
        if self.properties[TYPE]:
            self._value()

    def handle_create(self) -> None:
        self._value()
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        self._value()

    def _resolve_attribute(self, name: str) -> Any:
        return self._value() if name == VALUE else None


def resource_mapping() -> dict:
    return {"OS::Heat::Value": Value}
