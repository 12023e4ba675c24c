"""A deployment's state as the runtime functions read it, from the store."""

from __future__ import annotations

from typing import Any

from stoker import secretbox
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.store.instance_health import implied
from stoker.store.plugin_packages import Owner, viewer_of

DEFAULT_TENANT = "default_tenant"
#: how many deployments a chain of get_capability may cross (a loop of capabilities ends here)
MAX_CAPABILITY_DEPTH = 10


def tenant_of(project_id: str) -> str:
    return DEFAULT_TENANT if project_id == "default" else project_id


def instance_view(row: dict) -> dict:
    """A stored node instance in the shape functions and ``cfy ... --json`` use."""
    return {"id": row["id"], "node_id": row["node_id"], "index": row["index"], "state": row["state"],
            "host_id": row["host_id"], "scaling_groups": row["scaling_groups"],
            "relationships": row["relationships"], "runtime_properties": row["runtime_properties"],
            "version": row["version"]}


def health_view(row: dict) -> dict:
    """A stored node instance's health as Cloudify 7 shows it: its status and drift checks' results
    (``system_properties``) and the two flags read from them."""
    return {"system_properties": implied(row.get("system_properties"), row["state"]),
            "has_configuration_drift": bool(row.get("has_configuration_drift")),
            "is_status_check_ok": bool(row.get("is_status_check_ok"))}


def readable_secret(records: Any, project_id: str, name: Any, creator: str) -> dict | None:
    """The secret ``get_secret`` reads in a deployment made by ``creator``: None when missing or private to
    others.  As on Cloudify, whose ``get_secret`` reads with its user's permissions, a private secret is its
    creator's, the tenant's managers' and the operator's (``viewer_of``, the rule plugin look-ups follow too)."""
    row = records.get_secret(project_id, name) if isinstance(name, str) else None
    if row is None or row["visibility"] != "private":
        return row
    seen = viewer_of(records.engine, project_id, tenant_of(project_id), creator).sees(
        Owner(row["project_id"], row["visibility"], row["created_by"]))
    return row if seen else None


class StoredState:
    """Answers the look-ups of ``runtime.RuntimeEvaluator`` for one stored deployment."""

    def __init__(self, records: Any, project_id: str, deployment: dict, depth: int = 0):
        self.records = records
        self.project_id = project_id
        self.deployment = deployment
        self.depth = depth
        self._nodes: dict[str, dict] | None = None
        self._by_node: dict[str, list[dict]] | None = None
        self._by_id: dict[str, dict] = {}

    def inputs(self) -> dict:
        return secretbox.unseal(self.deployment["inputs"])

    def node(self, name: str) -> dict | None:
        if self._nodes is None:
            self._nodes = {row["id"]: secretbox.unseal(row["definition"])
                           for row in self.records.nodes(self.deployment["pk"])}
        return self._nodes.get(name) if isinstance(name, str) else None

    def _load_instances(self) -> None:
        if self._by_node is None:
            self._by_node = {}
            for row in self.records.node_instances(self.deployment["pk"]):
                instance = instance_view(row)
                self._by_node.setdefault(instance["node_id"], []).append(instance)
                self._by_id[instance["id"]] = instance

    def node_instances(self, node: str) -> list[dict]:
        self._load_instances()
        return self._by_node.get(node, [])

    def node_instance(self, instance_id: str) -> dict | None:
        self._load_instances()
        return self._by_id.get(instance_id)

    def secret(self, name: Any) -> str | None:
        from stoker.blueprint.secret_providers import secret_value

        row = readable_secret(self.records, self.project_id, name, self.deployment["created_by"])
        return secret_value(self.records, row) if row else None

    def capabilities_of(self, deployment_id: Any) -> dict | None:
        from stoker.blueprint.runtime import evaluate_values
        from stoker.errors import NotFound

        if self.depth >= MAX_CAPABILITY_DEPTH:
            raise BlueprintError(f"get_capability crosses more than {MAX_CAPABILITY_DEPTH} deployments "
                                 "(do capabilities refer to each other in a loop?)", code="capability-loop")
        try:
            other = self.records.get_deployment(self.project_id, str(deployment_id))
        except NotFound:
            return None
        plan = secretbox.unseal(other["plan"])
        return evaluate_values("capabilities", plan["capabilities"],
                               StoredState(self.records, self.project_id, other, self.depth + 1))

    def labels(self) -> dict[str, list[str]]:
        """``{key: values}``, values sorted by code point whatever the database's collation."""
        found: dict[str, list[str]] = {}
        for row in self.records.labels(self.deployment["pk"]):
            found.setdefault(row["key"], []).append(row["value"])
        return {key: sorted(values) for key, values in found.items()}

    def display_names(self, deployment_ids: list) -> list[str]:
        """Display names of those of ``deployment_ids`` that exist, in the same order."""
        by_id = {row["id"]: row["display_name"] for row in self.records.list_deployments(self.project_id)}
        return [by_id[d] for d in deployment_ids if d in by_id]

    def group_deployments(self, group: Any) -> list[str]:
        """Ids of the deployment group's members: the deployments whose blueprint's
        ``deployment_settings.default_groups`` put them in it at creation."""
        return [row["id"] for row in self.records.list_deployments(self.project_id)
                if group in (secretbox.unseal(row["plan"]).get("deployment_settings") or {}).get("default_groups", ())]

    def sys(self) -> dict:
        return {"tenant_name": tenant_of(self.project_id), "deployment_id": self.deployment["id"],
                "deployment_name": self.deployment["display_name"],
                "blueprint_id": self.deployment["blueprint_id"], "owner": self.deployment["created_by"]}
