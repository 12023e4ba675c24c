"""``OS::Heat::SoftwareComponent``: one software config per life cycle action, in one place.

A component is a software config (same store, same reference, same
``show``) whose ``group`` is ``component`` and whose ``config`` is
``{"configs": [{"actions": [...], "config": ..., "tool": ...}, ...]}``.  An
``OS::Heat::SoftwareDeployment`` of a component runs for exactly the actions
its configs list (its own ``actions`` property is not used, as in Heat); its
derived config carries the whole list and ``deploy_action``, from which the
server's hook picks the config of that action (there is one at most).

As in Heat, only ``config`` (which reads null) and ``show`` are attributes;
the list is in ``show`` and in the config record.
"""

from __future__ import annotations

from typing import Any

from stoker.constraints import Length
from stoker.resources import properties
from stoker.resources.builtin._common import unless_pending
from stoker.resources.builtin.software_config import SoftwareConfig
from stoker.resources.exceptions import StackValidationFailed
from stoker.resources.support import SupportStatus

#: the group that makes a config a component (deployments and in-instance hooks look for it)
COMPONENT_GROUP = "component"
S = properties.Schema


class SoftwareComponent(SoftwareConfig):
    """A software component: a configuration for each life cycle action it handles.

    Where a SoftwareConfig holds one configuration, a component holds one per
    action (CREATE, UPDATE, SUSPEND, RESUME, DELETE, or custom ones its hook
    understands), each with the tool that applies it, and is deployed by an
    ``OS::Heat::SoftwareDeployment`` like any config.
    """

    support_status = SupportStatus(version="2014.2")

    PROPERTIES = (CONFIGS, INPUTS, OUTPUTS, OPTIONS) = (
        "configs", SoftwareConfig.INPUTS, SoftwareConfig.OUTPUTS, SoftwareConfig.OPTIONS,
    )
    CONFIG_KEYS = (CONFIG_ACTIONS, CONFIG_CONFIG, CONFIG_TOOL) = ("actions", "config", "tool")

    properties_schema = {
        CONFIGS: S(
            S.LIST,
            "The list of configurations for the different lifecycle actions of the represented "
            "software component.",
            required=True, constraints=[Length(min=1)],
            schema=S(S.MAP, schema={
                CONFIG_ACTIONS: S(
                    S.LIST,
                    "Lifecycle actions to which the configuration applies. The string values "
                    "provided for this property can include the standard resource actions CREATE, "
                    "DELETE, UPDATE, SUSPEND and RESUME supported by Heat.",
                    default=["CREATE", "UPDATE"], constraints=[Length(min=1)], schema=S(S.STRING),
                ),
                CONFIG_CONFIG: SoftwareConfig.properties_schema[SoftwareConfig.CONFIG],
                CONFIG_TOOL: S(
                    S.STRING,
                    "The configuration tool used to actually apply the configuration on a server. "
                    "This string property has to be understood by in-instance tools running inside "
                    "deployed servers.",
                    required=True,
                ),
            }),
        ),
        **{name: SoftwareConfig.properties_schema[name] for name in (INPUTS, OUTPUTS, OPTIONS)},
    }

    @unless_pending
    def validate(self) -> None:
        """One configuration per action: nothing would say in which order to run two."""
        seen: set = set()
        for entry in self.properties[self.CONFIGS] or []:
            actions = entry.get(self.CONFIG_ACTIONS) or []
            if seen.intersection(actions):
                raise StackValidationFailed(
                    resource=self,
                    message="Defining more than one configuration for the same action in "
                            f'SoftwareComponent "{self.name}" is not allowed.')
            seen.update(actions)

    def render_config(self) -> dict:
        return {self.CONFIGS: self.properties[self.CONFIGS]}

    def render_record(self) -> dict:
        return {**super().render_record(), "group": COMPONENT_GROUP}

    def _resolve_attribute(self, name: str) -> Any:
        return None  # Heat's component answers ``config`` with nothing


def component_actions(config: dict) -> set[str] | None:
    """The actions a stored config (a software-config record) runs for, when it is a
    component; None for any other config (its deployment's ``actions`` decide)."""
    if config.get("group") != COMPONENT_GROUP:
        return None
    return {action for entry in configs_of(config) for action in entry.get("actions") or []}


def configs_of(config: dict) -> list[dict]:
    """A component record's configurations (none if one made through the API has no list)."""
    content = config.get("config")
    configs = content.get("configs") if isinstance(content, dict) else None
    return [entry for entry in configs or [] if isinstance(entry, dict)]


def resource_mapping() -> dict:
    return {"OS::Heat::SoftwareComponent": SoftwareComponent}
