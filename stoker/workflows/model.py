"""The deployment as an execution sees it: nodes, live node instances, their operations.

Loaded once when an execution starts; state and runtime property changes are
made here first and written through (``Runner``), so every operation reads
the newest values without asking the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from stoker.blueprint.namespaces import script_root
from stoker.workflows.cfy_extensions import PLUGIN as MANAGER_PLUGIN, not_run

LIFECYCLE = "cloudify.interfaces.lifecycle"
RELATIONSHIP_LIFECYCLE = "cloudify.interfaces.relationship_lifecycle"
CONTAINED_IN = "cloudify.relationships.contained_in"


@dataclass(slots=True)  # 100,000 of them in a large deployment's execution: no __dict__ each
class Instance:
    id: str
    node_id: str
    index: int = 0
    state: str = "uninitialized"
    runtime_properties: dict = field(default_factory=dict)
    #: ``{target_id, target_name, type}`` each, in the node's relationship order
    relationships: list = field(default_factory=list)
    host_id: str | None = None
    scaling_groups: list = field(default_factory=list)
    #: Cloudify's: the last status and drift checks' results (``health``)
    system_properties: dict = field(default_factory=dict)
    #: whether its row holds them (else its state implies them: ``instance_health.implied``)
    system_stored: bool = False


@dataclass
class Deployment:
    id: str
    blueprint_id: str
    resource_root: Path
    nodes: dict[str, dict]  # node id -> its plan (type, type_hierarchy, properties, operations, relationships)
    instances: dict[str, Instance]
    #: scaling group name -> {members, properties}
    scaling_groups: dict[str, Any] = field(default_factory=dict)
    #: plugin name -> its definition in the plan (package_name, package_version, properties...)
    plugins: dict[str, dict] = field(default_factory=dict)
    #: namespace -> the files of the blueprint imported under it (``ns--blueprint:ID``): its scripts
    imported_roots: dict[str, Path] = field(default_factory=dict)

    #: (node id, operation name) -> whether the node implements it: asked per instance, answered per node
    _implements: dict = field(default_factory=dict, repr=False, compare=False)

    def script_home(self, implementation: str, inputs: dict) -> tuple[Path, str, dict]:
        """(folder, implementation, inputs) of an operation: an imported blueprint's ``ns--`` script path
        (the implementation or the ``script_path`` input) made a path in that blueprint's files."""
        root, local = script_root(self.resource_root, self.imported_roots, implementation)
        if local != implementation:
            return root, local, inputs
        script = inputs.get("script_path")
        if isinstance(script, str):
            root, local = script_root(self.resource_root, self.imported_roots, script)
            return root, implementation, {**inputs, "script_path": local}
        return root, implementation, inputs

    def node_of(self, instance: Instance) -> dict:
        return self.nodes[instance.node_id]

    def implements(self, instance: Instance, name: str) -> bool:
        """Has the instance's node an implementation of operation ``name``?"""
        key = (instance.node_id, name)
        if key not in self._implements:
            self._implements[key] = has_implementation(self.operation(instance, name))
        return self._implements[key]

    def runs(self, instance: Instance, name: str) -> bool:
        """Has the instance's node ``name`` to run in a heal or an update: implemented, and not one of the
        manager's own operations Stoker does not run (a Component's drift check, heal and update)."""
        return self.implements(instance, name) and not not_run(self.operation(instance, name))

    def implements_between(self, instance: Instance, name: str) -> bool:
        """Has any relationship of the instance's node an implementation of ``name`` on either side?"""
        key = (instance.node_id, name, "relationships")
        if key not in self._implements:
            self._implements[key] = any(has_implementation((rel.get(f"{side}_operations") or {}).get(name))
                                        for rel in self.node_of(instance).get("relationships") or []
                                        for side in ("source", "target"))
        return self._implements[key]

    def runs_relationship_operations(self, instance: Instance) -> bool:
        """Has any relationship of the instance's node an operation to run, on either side?"""
        key = (instance.node_id, "relationship operations")
        if key not in self._implements:
            self._implements[key] = any(has_implementation(operation)
                                        for rel in self.node_of(instance).get("relationships") or []
                                        for side in ("source", "target")
                                        for operation in (rel.get(f"{side}_operations") or {}).values())
        return self._implements[key]

    def operation(self, instance: Instance, name: str) -> dict | None:
        """The node's operation ``name`` (full, or ``interface.op`` shortened to ``op`` for lifecycle)."""
        operations = self.node_of(instance).get("operations") or {}
        return operations.get(name) or operations.get(f"{LIFECYCLE}.{name}")

    def declares(self, name: str) -> bool:
        """Whether any node of the deployment has operation ``name`` (as ``operation`` finds it)."""
        return any(name in ops or f"{LIFECYCLE}.{name}" in ops
                   for ops in (node.get("operations") or {} for node in self.nodes.values()))

    def relationship_of(self, instance: Instance, index: int) -> dict:
        """The node relationship behind ``instance.relationships[index]``."""
        wanted = instance.relationships[index]
        for relationship in self.node_of(instance).get("relationships") or []:
            if relationship.get("target_id") == wanted.get("target_name") and relationship.get("type") == wanted.get("type"):
                return relationship
        return {}

    def relationship_operation(self, instance: Instance, index: int, side: str, name: str) -> dict | None:
        relationship = self.relationship_of(instance, index)
        return (relationship.get(f"{side}_operations") or {}).get(name)

    def contained(self, instance_id: str) -> list[str]:
        """``instance_id`` and every instance contained in it, directly or deeper."""
        children: dict[str, list[str]] = {}
        for instance in self.instances.values():
            for rel in instance.relationships:
                if CONTAINED_IN in self._hierarchy(instance, rel):
                    children.setdefault(rel["target_id"], []).append(instance.id)
        found, pending = [], [instance_id]
        while pending:
            current = pending.pop()
            if current not in found:
                found.append(current)
                pending.extend(children.get(current, []))
        return found

    def _hierarchy(self, instance: Instance, rel: dict) -> list:
        index = instance.relationships.index(rel)
        return self.relationship_of(instance, index).get("type_hierarchy") or [rel.get("type")]


def has_implementation(operation: dict | None) -> bool:
    return bool(operation and operation.get("implementation"))


def runs_on_host(definitions: Iterable[dict]) -> bool:
    """Whether nodes (their plan definitions) have operations that run as processes on this host: any
    with an implementation but the manager's own (``cfy_extensions``, run in the engine)."""
    for definition in definitions:
        operations = [definition.get("operations") or {}] + [
            rel.get(side) or {} for rel in definition.get("relationships") or ()
            for side in ("source_operations", "target_operations")]
        if any((op or {}).get("implementation") and (op or {}).get("plugin") != MANAGER_PLUGIN
               for ops in operations for op in ops.values()):
            return True
    return False
