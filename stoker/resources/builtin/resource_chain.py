"""``OS::Heat::ResourceChain``: one resource per listed type, in a nested stack.

Members are named "0", "1", ... and all get the same ``resource_properties``;
unless ``concurrent``, each depends on the one before it.  Attributes are a
group's: ``refs``, ``attributes``, ``resource.N(.attr)``, or any member
attribute as a list.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.nested_stack import NestedStackResource, template_from_data
from stoker.resources import attributes, properties
from stoker.resources.builtin.resource_group import member_attribute
from stoker.resources.support import SupportStatus
from stoker.template.template import Template

S = properties.Schema


class ResourceChain(NestedStackResource):
    """Creates one resource of each type in ``resources``, with the same properties."""

    support_status = SupportStatus(version="6.0.0")

    properties_schema = {
        "resources": S(S.LIST, "The resource types to create, in order (types or registry aliases).",
                       required=True, update_allowed=True, schema=S(S.STRING)),
        "concurrent": S(S.BOOLEAN, "Create the resources concurrently instead of one after another.",
                        default=False, update_allowed=True),
        "resource_properties": S(S.MAP, "Properties given to every resource of the chain.",
                                 default={}, update_allowed=True),
    }
    attributes_schema = {
        "refs": attributes.Schema("The members' reference ids.", type=attributes.Schema.LIST),
        "attributes": attributes.Schema("Member name to the given attribute.", type=attributes.Schema.MAP),
    }

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return True  # any member attribute may be asked for, as a list

    def chain_template(self) -> dict:
        types = self.properties["resources"] or []
        properties_ = self.properties["resource_properties"] or {}
        resources: dict[str, Any] = {}
        for index, rtype in enumerate(types):
            member: dict[str, Any] = {"type": rtype}
            if properties_:
                member["properties"] = properties_
            if index and not self.properties["concurrent"]:
                member["depends_on"] = [str(index - 1)]
            resources[str(index)] = member
        return {"heat_template_version": "2015-04-30", "resources": resources}

    def child_template(self) -> Template:
        return template_from_data(self.chain_template(), self.stack.definition.template.files, self.name)

    def child_parameters(self) -> dict:
        return {}

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        return member_attribute(self, key, path)

    def get_reference_id(self) -> Any:
        return self.resource_id if self.resource_id is not None else self.name


def resource_mapping() -> dict:
    return {"OS::Heat::ResourceChain": ResourceChain}
