"""``OS::Heat::SoftwareDeployment`` and ``OS::Heat::SoftwareDeploymentGroup``.

A deployment applies a software config to a server.  For each action it is
listed for, it stores a *derived* config (the config's inputs with their
values, plus Heat's ``deploy_*`` inputs) and a deployment row IN_PROGRESS in
the software tables (``GET /software_deployments/{id}``, the server's
``/software_deployments/metadata/{server}``), then waits until the server's
agent reports: a signal to the resource (``POST .../resources/NAME/signal``,
``stoker stack resource signal``) or a ``PUT /software_deployments/{id}``
with status COMPLETE or FAILED.  The wait is a poll of the row, so the
report may come from any process.  Which actions the server runs is the
``actions`` property's say, unless the config is an ``OS::Heat::SoftwareComponent``:
then its configs' actions decide (``software_component``).

Stoker has no Nova: ``server`` is any id, and nothing is delivered to it;
an agent reads its metadata from the API.  Nor has it Swift or Zaqar: every
signal transport but ``NO_SIGNAL`` (which completes at once) is taken as
``HEAT_SIGNAL``.
"""

from __future__ import annotations

from typing import Any

from stoker.constraints import AllowedValues
from stoker.errors import NotFound
from stoker.resources import attributes, properties
from stoker.resources.builtin._common import signal_url, software_store
from stoker.resources.builtin.resource_group import ResourceGroup
from stoker.resources.builtin.software_component import component_actions
from stoker.resources.exceptions import UpdateReplace
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus
from stoker.store.software import DEPLOY_INPUTS, outcome

#: seconds between two looks at the deployment row
POLL_INTERVAL = 0.5
ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL")
NO_SIGNAL = "NO_SIGNAL"
OUTPUT_ATTRIBUTES = (STDOUT, STDERR, STATUS_CODE) = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
S = properties.Schema


class DeploymentFailed(Exception):
    """The agent reported a failure: Heat's wording, with the reason it gave."""

    def __init__(self, reason: str):
        super().__init__(f"Deployment to server failed: {reason}")


class SoftwareDeployment(Resource):
    """Applies a software config to a server, and waits for the server to report.

    The reference is the deployment's id.  Attributes: ``deploy_stdout``,
    ``deploy_stderr``, ``deploy_status_code`` and every output of the config.
    """

    support_status = SupportStatus(version="2014.1")
    #: its delete and suspend wait for the server's signal (Heat's ``no_signal_actions = ()``)
    NO_SIGNAL_ACTIONS = ()
    run_in_thread = False

    PROPERTIES = (CONFIG, SERVER, INPUT_VALUES, DEPLOY_ACTIONS, SIGNAL_TRANSPORT, NAME) = (
        "config", "server", "input_values", "actions", "signal_transport", "name",
    )

    properties_schema = {
        CONFIG: S(S.STRING, "ID of the software config resource to run on the server.", update_allowed=True),
        SERVER: S(S.STRING, "ID of the resource to apply the configuration to (any id: Stoker has no Nova).",
                  required=True),
        INPUT_VALUES: S(S.MAP, "Input values to apply to the software configuration on this server.",
                        update_allowed=True),
        DEPLOY_ACTIONS: S(S.LIST, "Which life cycle actions of the deployment resource will result "
                          "in this deployment being triggered.", default=["CREATE", "UPDATE"],
                          update_allowed=True, constraints=[AllowedValues(list(ACTIONS))]),
        SIGNAL_TRANSPORT: S(S.STRING, "How the server signals the deployment's outputs: NO_SIGNAL "
                            "completes at once; every other transport is HEAT_SIGNAL here.",
                            default="CFN_SIGNAL", update_allowed=True,
                            constraints=[AllowedValues(list(SIGNAL_TRANSPORTS))]),
        NAME: S(S.STRING, "Name of the derived config associated with this deployment.", update_allowed=True),
    }

    attributes_schema = {
        STDOUT: attributes.Schema("Captured stdout from the configuration execution.",
                                  type=attributes.Schema.STRING),
        STDERR: attributes.Schema("Captured stderr from the configuration execution.",
                                  type=attributes.Schema.STRING),
        STATUS_CODE: attributes.Schema("Returned status code from the configuration execution.",
                                       type=attributes.Schema.STRING),
    }

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return True  # the config's outputs are attributes too

    # -- the software tables ------------------------------------------------------------
    def _software(self) -> Any:
        software = software_store(self)
        if software is None:
            raise RuntimeError(f"{self.type()} needs a stack kept in a database")
        return software

    def _source_config(self, software: Any) -> dict:
        """The config record this deployment applies ({} with none).  A config id that
        names no config fails the action, as in Heat; only a delete goes on without it."""
        return software.get_config(self.properties[self.CONFIG]) if self.properties[self.CONFIG] else {}

    def _runs_for(self, source: dict, action: str) -> bool:
        """Is ``action`` one the server runs?  A component says (its configs' actions), else
        this deployment's ``actions``, as Heat decides."""
        listed = component_actions(source)
        return action in (self.properties[self.DEPLOY_ACTIONS] or [] if listed is None else listed)

    def _derived_config(self, software: Any, source: dict, action: str) -> dict:
        """Store the config as this deployment applies it: input values filled in."""
        values = self.properties[self.INPUT_VALUES] or {}
        inputs = []
        for entry in source.get("inputs") or []:
            entry = dict(entry)
            entry["value"] = values.get(entry["name"], entry.get("default"))
            inputs.append(entry)
        transport = self.properties[self.SIGNAL_TRANSPORT]
        deploy_values = {"deploy_server_id": self.properties[self.SERVER], "deploy_action": action,
                         "deploy_stack_id": f"{self.stack.name}/{self.stack.id}",
                         "deploy_resource_name": self.name, "deploy_signal_transport": transport}
        inputs += [{"name": name, "type": "String", "value": value, "description": DEPLOY_INPUTS[name]}
                   for name, value in deploy_values.items()]
        if transport != NO_SIGNAL:
            inputs += [{"name": "deploy_signal_id", "type": "String", "value": signal_url(self),
                        "description": "ID of signal to use for signaling output values"},
                       {"name": "deploy_signal_verb", "type": "String", "value": "POST",
                        "description": "HTTP verb to use for signaling outputvalues"}]
        return software.create_config(self.properties[self.NAME] or self.physical_resource_name(),
                                      source.get("group") or "Heat::Ungrouped", source.get("config"),
                                      inputs, source.get("outputs") or [], source.get("options"))

    def _deploy(self, action: str) -> str | None:
        """Store the deployment for ``action`` (as Heat, whether it is listed or not); the
        deployment id to poll when the server runs it, else None (nothing to wait for)."""
        software = self._software()
        source = self._source_config(software)
        derived = self._derived_config(software, source, action)
        waits = self._runs_for(source, action) and self.properties[self.SIGNAL_TRANSPORT] != NO_SIGNAL
        fields = {"config_id": derived["id"], "action": action,
                  "status": "IN_PROGRESS" if waits else "COMPLETE",
                  "status_reason": "Deploy data available" if waits else "Not waiting for outputs signal",
                  "input_values": self.properties[self.INPUT_VALUES] or {}}
        if self.resource_id is None:
            deployment = software.create_deployment({**fields, "server_id": self.properties[self.SERVER]})
            self.resource_id_set(deployment["id"])
        else:
            old = software.get_deployment(str(self.resource_id))
            software.update_deployment(str(self.resource_id), fields)
            software.forget_config(old["config_id"])
        return str(self.resource_id) if waits else None

    def _deployed(self, deployment_id: str | None) -> bool:
        """Whether the server reported; ``DeploymentFailed`` if it reported a failure."""
        if deployment_id is None:
            return True
        deployment = self._software().get_deployment(deployment_id)
        if deployment["status"] == "FAILED":
            raise DeploymentFailed(deployment["status_reason"])
        return deployment["status"] == "COMPLETE"

    def poll_delay(self, token: Any) -> float | None:
        return POLL_INTERVAL if isinstance(token, str) else None

    # -- the life cycle ---------------------------------------------------------------------
    def handle_create(self) -> str | None:
        return self._deploy(self.CREATE)

    def check_create_complete(self, token: Any) -> bool:
        return self._deployed(token)

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> str | None:
        if self._replaces_on_change():
            raise UpdateReplace(self.name)
        return self._deploy(self.UPDATE)

    def _replaces_on_change(self) -> bool:
        """Whether an input declared ``replace_on_change`` gets a new value (Heat replaces then)."""
        current = self._current()
        if current is None or not self.properties[self.CONFIG]:
            return False
        old, new = current.get("input_values") or {}, self.properties[self.INPUT_VALUES] or {}
        config = self._software().get_config(self.properties[self.CONFIG])
        return any(entry.get("replace_on_change") and old.get(entry["name"]) != new.get(entry["name"])
                   for entry in config.get("inputs") or [])

    def check_update_complete(self, token: Any) -> bool:
        return self._deployed(token)

    def handle_suspend(self) -> str | None:
        return self._deploy(self.SUSPEND)

    def check_suspend_complete(self, token: Any) -> bool:
        return self._deployed(token)

    def handle_resume(self) -> str | None:
        return self._deploy(self.RESUME)

    def check_resume_complete(self, token: Any) -> bool:
        return self._deployed(token)

    def handle_delete(self) -> str | None:
        current = self._current()
        try:
            if current is None or current["status"] == "IN_PROGRESS" \
                    or not self._runs_for(self._source_config(self._software()), self.DELETE):
                return None  # as Heat: the server runs a DELETE only if listed, and not mid-action
            return self._deploy(self.DELETE)
        except NotFound:
            return None  # as Heat: a config gone by now does not stop the delete

    def check_delete_complete(self, token: Any) -> bool:
        if not self._deployed(token):
            return False
        current = self._current()
        if current is not None:
            software = self._software()
            software.forget_deployment(current["id"])
            software.forget_config(current["config_id"])
        return True

    def _current(self) -> dict | None:
        """The deployment row, None if it is gone (or never was)."""
        if self.resource_id is None or software_store(self) is None:
            return None
        try:
            return self._software().get_deployment(str(self.resource_id))
        except NotFound:
            return None

    # -- what the server reports ----------------------------------------------------------
    def handle_signal(self, details: Any = None) -> str:
        """Store the server's outputs; a signal while no action waits is ignored, as Heat."""
        current = self._current()
        if current is None or current["status"] != "IN_PROGRESS":
            return "deployment not in progress: signal ignored"
        reported = dict(details) if isinstance(details, dict) else {}
        config = self._software().get_config(current["config_id"])
        status, reason = outcome(reported, config.get("outputs"))
        self._software().update_deployment(current["id"], {
            "status": status, "status_reason": reason, "output_values": reported})
        return f"deployment {status}: {reason}"

    # -- attributes -------------------------------------------------------------------------
    def _resolve_attribute(self, name: str) -> Any:
        current = self._current()
        if current is None:
            return None
        return (current.get("output_values") or {}).get(name)

    def _show_resource(self) -> Any:
        return self._current() or {}


class SoftwareDeploymentGroup(ResourceGroup):
    """One software deployment per server of ``servers``, in a nested stack.

    The members are named by the keys of ``servers``.  Attributes:
    ``deploy_stdouts``, ``deploy_stderrs``, ``deploy_status_codes`` (maps
    of member name to value) and any config output, as a map too.
    ``update_policy: rolling_update`` (``max_batch_size``, ``pause_time``)
    updates the members in batches, as a ResourceGroup does.
    """

    support_status = SupportStatus(version="5.0.0")

    SERVERS = "servers"
    MEMBER_PROPERTIES = tuple(p for p in SoftwareDeployment.PROPERTIES if p != SoftwareDeployment.SERVER)
    GROUP_ATTRIBUTES = {"deploy_stdouts": STDOUT, "deploy_stderrs": STDERR, "deploy_status_codes": STATUS_CODE}

    properties_schema = {
        SERVERS: S(S.MAP, "A map of names and server IDs to apply configuration to. The name is "
                   "arbitrary and is used as the Heat resource name for the corresponding deployment.",
                   update_allowed=True, required=True),
        **{name: SoftwareDeployment.properties_schema[name] for name in MEMBER_PROPERTIES},
    }
    attributes_schema = {
        name: attributes.Schema(f"A map of member name to the {member} of its deployment.",
                                type=attributes.Schema.MAP)
        for name, member in GROUP_ATTRIBUTES.items()
    }

    def _blacklist(self) -> list[str]:
        return []  # members come and go with the servers map, never by removal policy

    def member_names(self) -> list[str]:
        return sorted(map(str, self.properties[self.SERVERS] or {}))

    def _member(self, index: str) -> dict:
        member_properties = {name: self.properties[name] for name in self.MEMBER_PROPERTIES
                             if self.properties[name] is not None}
        member_properties[SoftwareDeployment.SERVER] = self.properties[self.SERVERS][index]
        return {"type": "OS::Heat::SoftwareDeployment", "properties": member_properties}

    def validation_template(self):
        return self.child_template(self.member_names()[:1])

    def nested_validation_template(self):
        """The first member, checked at a request; nothing when no server is given."""
        return self.validation_template() if self.member_names() else None

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        if key.startswith("resource.") or key in ("refs", "refs_map", attributes.SHOW):
            return super().FnGetAtt(key, *path)
        child = self.child()
        members = child.resources if child is not None else {}
        member_key = self.GROUP_ATTRIBUTES.get(key, key)
        return {name: member.FnGetAtt(member_key, *path) for name, member in members.items()}


def resource_mapping() -> dict:
    return {
        "OS::Heat::SoftwareDeployment": SoftwareDeployment,
        "OS::Heat::SoftwareDeploymentGroup": SoftwareDeploymentGroup,
    }
