"""``OS::Heat::Stack``: a nested stack from a template given inline."""

from __future__ import annotations

from typing import Any

from stoker.engine.nested import NestedStackResource
from stoker.errors import ValidationFailed
from stoker.resources import attributes, properties
from stoker.resources.support import SupportStatus
from stoker.template.template import Template

S = properties.Schema


class StackResource(NestedStackResource):
    """Creates a nested stack from the ``template`` property (template text).

    Runs locally, in the same engine: a ``context`` naming another region
    (Heat's remote stacks) is refused.  Attributes: ``outputs`` (every
    output of the nested stack) and ``stack_name``.
    """

    support_status = SupportStatus(version="2014.2")

    properties_schema = {
        "template": S(S.STRING, "The nested stack's template (YAML or JSON text).", required=True,
                      update_allowed=True),
        "parameters": S(S.MAP, "Parameter values for the nested stack.", default={}, update_allowed=True),
        "timeout": S(S.NUMBER, "Timeout in minutes for the nested stack.", update_allowed=True),
        "context": S(S.MAP, "Where to create the stack; only the local engine is supported.", default={}),
    }
    attributes_schema = {
        "outputs": attributes.Schema("A map of the nested stack's outputs.", type=attributes.Schema.MAP),
        "stack_name": attributes.Schema("The nested stack's name.", type=attributes.Schema.STRING),
    }

    def validate(self) -> None:
        context = self.properties["context"] or {}
        if context.get("region_name"):
            raise ValidationFailed.single(("resources", self.name, "properties", "context"),
                                          "remote-stack-unsupported",
                                          "stacks in other regions are not supported: Stoker runs "
                                          "OS::Heat::Stack locally")

    def child_template(self) -> Template:
        files = self.stack.definition.template.files if self.stack.definition else {}
        return Template.from_text(self.properties["template"], f"{self.name}.template", files=files)

    def child_parameters(self) -> dict:
        return dict(self.properties["parameters"] or {})

    def _resolve_attribute(self, name: str) -> Any:
        if name == "outputs":
            return self.child_outputs()
        if name == "stack_name":
            child = self.child()
            return child.name if child is not None else None
        return None


def resource_mapping() -> dict:
    return {"OS::Heat::Stack": StackResource}
