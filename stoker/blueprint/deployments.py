"""Deployments: create from a blueprint, read back, evaluate outputs and capabilities, labels."""

from __future__ import annotations

import copy
from typing import Any, Iterable

from stoker import secretbox
from stoker.blueprint import runtime, visibility
from stoker.blueprint.deployment import prepare
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.evaluation import PlanEvaluator, RuntimeEvaluator, scan
from stoker.blueprint import environments
from stoker.blueprint.environments import PARENT_LABEL
from stoker.blueprint.instances import node_hosts
from stoker.blueprint.secrets import MASK, masked_values, masker, secret_values
from stoker.blueprint.state import StoredState, health_view, instance_view, readable_secret, tenant_of
from stoker.errors import NotFound
from stoker.store.blueprint_records import DEPLOYMENTS
from stoker.resources import processes
from stoker.workflows import workdirs

#: what a deployment row keeps of its plan (nodes and instances have tables of their own)
PLAN_KEYS = ("version", "version_name", "description", "outputs", "capabilities", "groups", "policies",
             "scaling_groups", "workflows", "labels", "deployment_settings", "input_definitions", "resource_tags", "plugins",
             "namespaces_mapping")

#: the health counts of a deployment with no instances
NO_COUNTS = {"drifted_instances": 0, "unavailable_instances": 0}


def seal_if(value: Any, hidden: bool) -> Any:
    return secretbox.seal(value) if hidden else value


def hides_inputs(plan: dict) -> bool:
    """Does the blueprint declare a hidden input (its deployment's values are then sealed)?"""
    return any(d.get("hidden") for d in plan["inputs"].values())


def stored_plan(dep: dict, plan: dict) -> dict:
    """What a deployment's row keeps of deployment plan ``dep`` made from blueprint plan ``plan``."""
    saved = {key: dep[key] for key in PLAN_KEYS if key in dep}
    saved["input_definitions"] = plan["inputs"]
    return saved


def stored_nodes(dep: dict, hidden: bool) -> list[dict]:
    """The node rows of deployment plan ``dep`` (definitions sealed when ``hidden``)."""
    counts: dict[str, int] = {}
    for instance in dep["node_instances"]:
        counts[instance["node_id"]] = counts.get(instance["node_id"], 0) + 1
    hosts = node_hosts(dep["nodes"])
    return [{"id": node["name"], "type": node["type"], "definition": seal_if(node, hidden),
             "number_of_instances": counts.get(node["name"], 0), "host_id": hosts.get(node["name"])}
            for node in dep["nodes"]]


def label_pairs(labels: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Keys lower-cased, duplicates dropped, as the manager keeps them."""
    pairs = []
    for key, value in labels:
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise BlueprintError(f"a label is KEY:VALUE with two strings, not {key!r}:{value!r}",
                                 code="invalid-label")
        pairs.append((key.lower(), value))
    return list(dict.fromkeys(pairs))


class Deployments:
    def __init__(self, records: Any, project_id: str):
        self.records = records
        self.project_id = project_id

    # -- creating -------------------------------------------------------------------------------
    def create(self, deployment_id: str, blueprint_id: str, inputs: dict | None = None,
               labels: Iterable[tuple[str, str]] = (), display_name: str | None = None,
               runtime_only_evaluation: bool = False, check_environment: bool = True,
               created_by: str = "admin", shown_to: str = "tenant") -> dict:
        """Check the inputs, evaluate what is static, lay out the node instances, store it all at once.

        ``check_environment``: outputs and capabilities reading ``get_environment_capability`` need a
        parent (label ``csys-obj-parent``) declaring that capability, and a parent must exist and be linked
        (``environments``), checked here as Cloudify's manager does at creation (dsl-parser alone, which the
        conformance cases record, leaves it to the read).
        """
        if not deployment_id or not isinstance(deployment_id, str):
            raise BlueprintError("a deployment needs an id", code="invalid-id")
        blueprint = self.records.get_blueprint(self.project_id, blueprint_id)
        visibility.checked(shown_to)
        plan = blueprint["plan"]
        dep = prepare(plan, inputs, runtime_only_evaluation,
                      lambda name: readable_secret(self.records, self.project_id, name, created_by) is not None)
        hidden = hides_inputs(plan)
        if runtime_only_evaluation:  # labels are needed now: evaluate them anyway
            scan(dep["labels"], PlanEvaluator(dep), "labels", dep["labels"], "labels")
        pairs = label_pairs([(key, value) for key, label in dep["labels"].items() for value in label["values"]]
                             + list(labels))
        parents = environments.parents_in(pairs) if check_environment else []
        if check_environment:
            self._check_environment(dep, pairs)
            environments.check_parents(self.records, self.project_id, deployment_id, parents)
        sys_values = {"tenant_name": tenant_of(self.project_id), "deployment_id": deployment_id,
                      "deployment_name": deployment_id, "blueprint_id": blueprint_id, "owner": "admin"}
        name = display_name or self._display_name(dep, sys_values, pairs) or deployment_id
        saved_plan = stored_plan(dep, plan)
        nodes = stored_nodes(dep, hidden)
        instances = [{key: i[key] for key in ("id", "node_id", "index", "state", "host_id", "scaling_groups",
                                             "relationships", "runtime_properties")}
                     for i in dep["node_instances"]]
        fields = {"blueprint_pk": blueprint["pk"], "display_name": str(name)[:255],
                  "inputs": seal_if(dep["inputs"], hidden), "plan": seal_if(saved_plan, hidden),
                  "runtime_only_evaluation": runtime_only_evaluation, "created_by": created_by,
                  "visibility": shown_to}
        self.records.add_deployment(self.project_id, deployment_id, fields, nodes, instances, pairs)
        environments.link(self.records, self.project_id, deployment_id, parents)
        return self.get(deployment_id)

    def _check_environment(self, dep: dict, labels: list[tuple[str, str]]) -> None:
        """Refuse the deployment when an output or capability reads an environment capability that its
        parent (the first ``csys-obj-parent`` label value, as the function reads it) does not declare."""
        wanted = [(f"{section} {name}", arg) for section in ("outputs", "capabilities")
                  for name, value in sorted((dep.get(section) or {}).items())
                  for arg in _environment_capability_args(value)]
        if not wanted:
            return
        parents = sorted(value for key, value in labels if key == PARENT_LABEL)
        if not parents:
            raise BlueprintError(f"{wanted[0][0]} uses get_environment_capability, but the deployment has no "
                                 f"label `{PARENT_LABEL}` naming the deployment that provides it (add "
                                 f"--labels {PARENT_LABEL}:PARENT_ID)", code="no-parent-deployment")
        try:
            parent = self.records.get_deployment(self.project_id, parents[0])
        except NotFound:
            raise BlueprintError(f"{wanted[0][0]} uses get_environment_capability, but the parent deployment "
                                 f"`{parents[0]}` (label {PARENT_LABEL}) does not exist",
                                 code="no-parent-deployment") from None
        declared = (secretbox.unseal(parent["plan"]).get("capabilities") or {})
        for place, arg in wanted:
            name = arg[0] if isinstance(arg, list) else arg
            if isinstance(name, str) and name not in declared:
                raise BlueprintError(f"{place} uses get_environment_capability: requested capability `{name}` "
                                     f"is not declared in deployment `{parents[0]}`", code="no-capability")

    @staticmethod
    def _display_name(dep: dict, sys_values: dict, labels: list) -> Any:
        value = copy.deepcopy(dep["deployment_settings"].get("display_name"))
        if value is None:
            return None
        holder = {"display_name": value}
        scan(holder, RuntimeEvaluator(_CreationState(dep, sys_values, labels)), "deployment_settings", {},
             "deployment_settings")
        return holder["display_name"]

    # -- reading --------------------------------------------------------------------------------
    def _row(self, deployment_id: str) -> dict:
        return self.records.get_deployment(self.project_id, deployment_id)

    @staticmethod
    def _view(row: dict) -> dict:
        plan = secretbox.unseal(row["plan"])
        return {"id": row["id"], "display_name": row["display_name"], "blueprint_id": row["blueprint_id"],
                "created_at": row["created_at"].isoformat(), "created_by": row["created_by"],
                "visibility": row["visibility"], "runtime_only_evaluation": row["runtime_only_evaluation"],
                "description": plan.get("description"), "resource_tags": plan.get("resource_tags") or {}}

    def get(self, deployment_id: str) -> dict:
        row = self._row(deployment_id)
        labels = [{"key": r["key"], "value": r["value"]} for r in self.records.labels(row["pk"])]
        return {**self._view(row), "labels": labels, **self.health_counts().get(deployment_id, NO_COUNTS)}

    def list(self, blueprint_id: str | None = None) -> list[dict]:
        counts = self.health_counts()
        return [{**self._view(row), **counts.get(row["id"], NO_COUNTS)}
                for row in self.records.list_deployments(self.project_id, blueprint_id)]

    def health_counts(self) -> dict[str, dict[str, int]]:
        """Per deployment of the tenant, Cloudify's ``drifted_instances`` and ``unavailable_instances``."""
        return self.records.health_counts(self.project_id)

    def set_visibility(self, deployment_id: str, shown_to: Any) -> dict:
        """Widen the deployment's visibility (``cfy deployments set-visibility``), never past its blueprint's."""
        row = self._row(deployment_id)
        wanted = visibility.checked(shown_to, visibility.WIDER)
        visibility.within(deployment_id, row["blueprint_id"], row["blueprint_visibility"], wanted)
        self.records.set_visibility(DEPLOYMENTS, row, visibility.widened(deployment_id, row["visibility"], wanted))
        return self.get(deployment_id)

    def set_owner(self, deployment_id: str, creator: str) -> dict:
        """``cfy deployments set-owner`` (who may, and whether the user exists, is the caller's to decide)."""
        self.records.set_owner(DEPLOYMENTS, self._row(deployment_id), creator)
        return self.get(deployment_id)

    def delete(self, deployment_id: str, force: bool = False, recursive: bool = False) -> None:
        """Delete the deployment, killing first the scripts its dead executions left running; refused while
        it is a parent (``force``: its children are left without it; ``recursive``: they are deleted first,
        theirs before them)."""
        row = self._row(deployment_id)
        if recursive:
            for child in environments.children_of(self.records, self.project_id, deployment_id):
                self.delete(child, force, recursive)
        elif not force:
            environments.check_childless(self.records, self.project_id, deployment_id)
        processes.stop_orphans(self.records.execution_commands(row["pk"]))
        parents = environments.parents_in((r["key"], r["value"]) for r in self.records.labels(row["pk"]))
        self.records.delete_deployment(self.project_id, deployment_id)
        environments.unlink(self.records, self.project_id, deployment_id, parents)
        workdirs.remove(tenant_of(self.project_id), deployment_id)

    def state(self, deployment_id: str) -> StoredState:
        return StoredState(self.records, self.project_id, self._row(deployment_id))

    def plan(self, deployment_id: str) -> dict:
        return secretbox.unseal(self._row(deployment_id)["plan"])

    def inputs(self, deployment_id: str) -> dict:
        """Input values; a hidden input's value is masked."""
        row = self._row(deployment_id)
        definitions = secretbox.unseal(row["plan"])["input_definitions"]
        values = secretbox.unseal(row["inputs"])
        return {k: (MASK if definitions.get(k, {}).get("hidden") else v) for k, v in values.items()}

    def outputs(self, deployment_id: str) -> dict:
        """Output values; one that shows a hidden secret or hidden input is masked."""
        return self._evaluated(deployment_id, "outputs")

    def capabilities(self, deployment_id: str) -> dict:
        """Capability values; one that shows a hidden secret or hidden input is masked."""
        return self._evaluated(deployment_id, "capabilities")

    def _evaluated(self, deployment_id: str, section: str) -> dict:
        state = self.state(deployment_id)
        declared = self.plan(deployment_id)[section]
        return masked_values(runtime.evaluate_values(section, declared, state), self._hidden(state))

    def _hidden(self, state: StoredState):
        return masker(secret_values(self.records, self.project_id, state.deployment, hidden_only=True))

    def nodes(self, deployment_id: str) -> list[dict]:
        row = self._row(deployment_id)
        result = []
        counts = self.records.health_counts(self.project_id, row["pk"])
        for node in self.records.nodes(row["pk"]):
            definition = secretbox.unseal(node["definition"])
            scaling = definition["capabilities"]["scalable"]["properties"]
            result.append({"id": node["id"], "deployment_id": row["id"], "blueprint_id": row["blueprint_id"],
                           "type": node["type"], "type_hierarchy": definition["type_hierarchy"],
                           "number_of_instances": node["number_of_instances"],
                           "deploy_number_of_instances": scaling["default_instances"],
                           "min_number_of_instances": scaling["min_instances"],
                           "max_number_of_instances": scaling["max_instances"], "host_id": node["host_id"],
                           "properties": definition["properties"], "operations": definition["operations"],
                           "relationships": definition["relationships"],
                           **counts.get(node["id"], {"drifted_instances": 0, "unavailable_instances": 0})})
        return result

    def node_instances(self, deployment_id: str, node_id: str | None = None) -> list[dict]:
        row = self._row(deployment_id)
        return [{**instance_view(r), **health_view(r), "deployment_id": row["id"]}
                for r in self.records.node_instances(row["pk"], node_id)]

    def node_instance(self, instance_id: str, deployment_id: str | None = None) -> dict:
        found = self.records.find_node_instances(self.project_id, instance_id)
        if deployment_id is not None:
            found = [r for r in found if r["deployment_id"] == deployment_id]
        if not found:
            raise NotFound(f"Node instance {instance_id} not found")
        if len(found) > 1:
            raise BlueprintError(f"node instance {instance_id} exists in several deployments "
                                 f"({', '.join(r['deployment_id'] for r in found)}): name one with -d",
                                 code="ambiguous")
        return {**instance_view(found[0]), **health_view(found[0]), "deployment_id": found[0]["deployment_id"]}

    def update_node_instance(self, instance_id: str, deployment_id: str | None = None,
                             expected_version: int | None = None, **fields: Any) -> dict:
        """Set ``state``, ``runtime_properties`` and/or ``system_properties`` (optimistically, given the version
        read)."""
        instance = self.node_instance(instance_id, deployment_id)
        row = self._row(instance["deployment_id"])
        self.records.update_node_instance(row["pk"], instance_id, expected_version, **fields)
        return self.node_instance(instance_id, instance["deployment_id"])

    def node_properties(self, deployment_id: str, node_id: str, instance_id: str | None = None) -> dict:
        """A node's properties with every function evaluated, as an operation reading them sees them."""
        state = self.state(deployment_id)
        node = state.node(node_id)
        if node is None:
            raise NotFound(f"Node {node_id} not found in deployment {deployment_id}")
        return runtime.evaluate_node_properties(node, state, instance_id)

    def operation_inputs(self, deployment_id: str, instance_id: str, operation: str,
                         target_instance_id: str | None = None, side: str = "source") -> Any:
        """An operation's inputs evaluated for one instance (SELF), or, given the target instance of
        one of its relationships, a ``side`` (source/target) operation of that relationship."""
        state = self.state(deployment_id)
        instance = state.node_instance(instance_id)
        if instance is None:
            raise NotFound(f"Node instance {instance_id} not found in deployment {deployment_id}")
        node = state.node(instance["node_id"])
        if target_instance_id is None:
            operations = node["operations"]
        else:
            link = next((r for r in instance["relationships"] if r["target_id"] == target_instance_id), None)
            rel = link and next((r for r in node["relationships"]
                                 if r["target_id"] == link["target_name"] and r["type"] == link["type"]), None)
            if rel is None:
                raise NotFound(f"Node instance {instance_id} has no relationship to {target_instance_id}")
            operations = rel[f"{side}_operations"]
        if operation not in operations:
            raise NotFound(f"Operation {operation} not found on node {instance['node_id']}")
        inputs = operations[operation]["inputs"]
        if target_instance_id is None:
            return runtime.evaluate_operation_inputs(inputs, state, self_id=instance_id)
        return runtime.evaluate_operation_inputs(inputs, state, source_id=instance_id, target_id=target_instance_id)

    # -- labels ---------------------------------------------------------------------------------
    def labels(self, deployment_id: str) -> list[dict]:
        return [{"key": r["key"], "value": r["value"]} for r in self.records.labels(self._row(deployment_id)["pk"])]

    def add_labels(self, deployment_id: str, labels: Iterable[tuple[str, str]]) -> list[dict]:
        """Add labels; a new ``csys-obj-parent`` one makes the deployment a child of an existing deployment."""
        row, pairs = self._row(deployment_id), label_pairs(labels)
        held = {(r["key"], r["value"]) for r in self.records.labels(row["pk"])}
        parents = environments.parents_in(pair for pair in pairs if pair not in held)
        environments.check_parents(self.records, self.project_id, deployment_id, parents)
        self.records.add_labels(row["pk"], pairs)
        environments.link(self.records, self.project_id, deployment_id, parents)
        return self.labels(deployment_id)

    def delete_label(self, deployment_id: str, key: str, value: str | None = None) -> list[dict]:
        row = self._row(deployment_id)
        parents = environments.parents_in((r["key"], r["value"]) for r in self.records.labels(row["pk"])
                                          if r["key"] == key.lower() and value in (None, r["value"]))
        if not self.records.delete_labels(row["pk"], key.lower(), value):
            raise NotFound(f"Deployment {deployment_id} has no label {key}" + (f":{value}" if value else ""))
        environments.unlink(self.records, self.project_id, deployment_id, parents)
        return self.labels(deployment_id)


def _environment_capability_args(value: Any) -> Iterable[Any]:
    """The arguments of every ``get_environment_capability`` inside ``value``."""
    if isinstance(value, dict):
        if len(value) == 1 and "get_environment_capability" in value:
            yield value["get_environment_capability"]
            return
        for item in value.values():
            yield from _environment_capability_args(item)
    elif isinstance(value, list):
        for item in value:
            yield from _environment_capability_args(item)


class _CreationState:
    """What a function in ``deployment_settings`` can read while the deployment is being created."""

    def __init__(self, dep: dict, sys_values: dict, labels: list):
        self.dep, self.sys_values, self.label_pairs = dep, sys_values, labels

    def inputs(self) -> dict:
        return self.dep["inputs"]

    def node(self, name: str) -> dict | None:
        return next((n for n in self.dep["nodes"] if n["name"] == name), None)

    def node_instances(self, node: str) -> list:
        return [i for i in self.dep["node_instances"] if i["node_id"] == node]

    def node_instance(self, instance_id: str) -> dict | None:
        return next((i for i in self.dep["node_instances"] if i["id"] == instance_id), None)

    def secret(self, name: str) -> None:
        return None

    def capabilities_of(self, deployment: str) -> None:
        return None

    def display_names(self, deployment_ids: list) -> list:
        return []

    def group_deployments(self, group: Any) -> list:
        return []

    def labels(self) -> dict:
        found: dict[str, list] = {}
        for key, value in sorted(self.label_pairs):
            found.setdefault(key, []).append(value)
        return found

    def sys(self) -> dict:
        return self.sys_values
