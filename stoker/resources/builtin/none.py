"""``OS::Heat::None``: a placeholder that does nothing."""

from __future__ import annotations

from typing import Any

from stoker.resources.properties import Properties
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus
from stoker.uuids import new_uuid


class NoneResource(Resource):
    """Does nothing; stands in for any other resource type.

    Map a type to ``OS::Heat::None`` in an environment's ``resource_registry``
    to switch resources off: any properties are accepted (and ignored), every
    attribute is null, and updates never replace it.
    """

    support_status = SupportStatus(version="5.0.0")
    run_in_thread = False
    acts_outside = False

    # Whatever the template gives, the properties are empty: nothing to check.
    def build_properties(self, data: Any, resolved: bool = False) -> Properties:
        return Properties({}, {}, path=("resources", self.name, "properties"))

    def validate_template(self) -> None:
        self.validate()

    def validate_shape(self) -> None:
        """Heat's template validate checks a None's policies; a create does not (its
        ``validate()`` is empty), so a type mapped to None keeps any policy there."""
        if self.stack.at_validate:
            super().validate_shape()

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return True

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802
        return None

    def handle_create(self) -> None:
        self.resource_id_set(new_uuid())

    def plan_update(self, definition: Any, new_props: Properties) -> None:
        return None  # nothing to update, whatever changed

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::None": NoneResource}
