"""Node instances: how many of each node, where each sits, and its relationship instances.

Nodes and scaling groups form a tree, as in Cloudify: a node sits in its
innermost group, else in the node it is contained in (in that node when
both are in the group); a group sits in its enclosing group, else on the
host of its members.  Expanding the tree depth-first gives every instance
its container instances.  A contained_in relationship points at the
container instance; any other points at every target instance (the first
for ``all_to_one``), or, when both nodes are in a group, at those in the
same instance of the smallest such group.
"""

from __future__ import annotations

import os
import random
import string
from stoker.blueprint.blueprint_errors import BlueprintError

CONTAINED_IN = "cloudify.relationships.contained_in"
COMPUTE = "cloudify.nodes.Compute"
_ALPHABET = string.ascii_lowercase + string.digits
#: more node instances than this in one deployment is refused before any is made
MAX_INSTANCES = int(os.environ.get("STOKER_MAX_NODE_INSTANCES", 100_000))
#: and more relationship instances than this (all_to_all between big nodes multiplies)
MAX_RELATIONSHIPS = 10 * MAX_INSTANCES


class _Ids:
    """Random ``<name>_<6 characters>`` ids, never the same twice (names, not secrets)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.random = random.Random()

    def new(self, prefix: str) -> str:
        while True:
            candidate = f"{prefix}_{''.join(self.random.choices(_ALPHABET, k=6))}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate


def _host_of(node: dict) -> str | None:
    for rel in node["relationships"]:
        if CONTAINED_IN in rel["type_hierarchy"]:
            return rel["target_id"]
    return None


def node_hosts(nodes: list[dict]) -> dict[str, str | None]:
    """Each node's host node: the nearest Compute up its contained_in chain, itself included (known
    from the templates, so a node with no instances has one too, as in Cloudify's plan)."""
    by_name = {node["name"]: node for node in nodes}
    hosts: dict[str, str | None] = {}
    for node in nodes:
        current, seen = node["name"], set()
        while current in by_name and current not in seen and COMPUTE not in by_name[current]["type_hierarchy"]:
            seen.add(current)
            current = _host_of(by_name[current])
        hosts[node["name"]] = current if current in by_name and current not in seen else None
    return hosts


class _Layout:
    """The containment tree of nodes and scaling groups."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.nodes = {node["name"]: node for node in plan["nodes"]}
        self.groups = {name: group["members"] for name, group in plan.get("groups", {}).items()}
        self.group_of: dict[str, str] = {}  # member (node or group) -> innermost group listing it
        for name in sorted(self.groups, key=lambda g: len(self._all_nodes(g))):
            for member in self.groups[name]:
                self.group_of.setdefault(member, name)
        self.parent = {name: self._node_parent(name) for name in self.nodes}
        self.parent.update({name: self._group_parent(name) for name in self.groups})
        self.children: dict[str | None, list[str]] = {}
        for name in [*self.nodes, *self.groups]:
            self.children.setdefault(self.parent[name], []).append(name)

    def _all_nodes(self, group: str, depth: int = 0) -> set[str]:
        found: set[str] = set()
        if depth > len(self.groups):
            return found  # groups listing each other: reported at upload
        for member in self.groups.get(group, []):
            found |= self._all_nodes(member, depth + 1) if member in self.groups else {member}
        return found

    def _node_parent(self, node: str) -> str | None:
        host, group = _host_of(self.nodes[node]), self.group_of.get(node)
        if group is None or (host and host in self._all_nodes(group)):
            return host
        return group

    def _group_parent(self, group: str) -> str | None:
        if self.group_of.get(group):
            return self.group_of[group]
        inside = self._all_nodes(group)
        for member in sorted(inside):
            host = _host_of(self.nodes[member])
            if host and host not in inside:
                return host
        return None

    def containing_groups(self, entity: str) -> list[str]:
        """Groups around an entity, innermost first, through hosts and groups alike."""
        result, current = [], self.parent.get(entity)
        while current:
            if current in self.groups:
                result.append(current)
            current = self.parent.get(current)
        return result

    def total(self) -> int:
        """How many node instances expanding the tree would make."""
        def under(entity: str) -> int:
            inside = sum(under(child) for child in self.children.get(entity, []))
            return self.count(entity) * (inside + (entity in self.nodes))

        return sum(under(root) for root in self.children.get(None, []))

    def count(self, entity: str) -> int:
        if entity in self.nodes:
            return self.nodes[entity]["capabilities"]["scalable"]["properties"]["default_instances"]
        group = self.plan.get("scaling_groups", {}).get(entity)
        return group["properties"]["default_instances"] if group else 1


def create_instances(plan: dict) -> list[dict]:
    """Every node instance, in creation order, each with its relationships to target instances."""
    layout = _Layout(plan)
    total = layout.total()
    if total > MAX_INSTANCES:
        raise BlueprintError(f"the deployment would have {total} node instances, more than the limit of "
                             f"{MAX_INSTANCES} (STOKER_MAX_NODE_INSTANCES)", code="too-many-instances")
    ids = _Ids()
    instances: list[dict] = []
    #: instance id -> {entity name: the id of its instance around this one}
    around: dict[str, dict[str, str]] = {}
    index_of: dict[str, int] = {}

    def expand(entity: str, outer: dict[str, str], groups: list[dict]) -> None:
        for _ in range(layout.count(entity)):
            if entity in layout.groups:
                group_instance = ids.new(entity)
                inner = {**outer, entity: group_instance}
                for child in layout.children.get(entity, []):
                    expand(child, inner, [{"name": entity, "id": group_instance}, *groups])
                continue
            index_of[entity] = index_of.get(entity, 0) + 1
            instance = {"id": ids.new(entity), "node_id": entity, "index": index_of[entity], "host_id": None,
                        "scaling_groups": groups,  # innermost first, up to the next node
                        "relationships": [], "state": "uninitialized", "runtime_properties": {}}
            instances.append(instance)
            inner = {**outer, entity: instance["id"]}
            around[instance["id"]] = inner
            for child in layout.children.get(entity, []):
                expand(child, inner, [])

    for root in layout.children.get(None, []):
        expand(root, {}, [])
    _wire(layout, instances, around)
    _hosts(layout, instances, around)
    return instances


def _wire(layout: _Layout, instances: list[dict], around: dict) -> None:
    by_node: dict[str, list[dict]] = {}
    for instance in instances:
        by_node.setdefault(instance["node_id"], []).append(instance)
    by_id = {instance["id"]: instance for instance in instances}
    shared: dict[tuple[str, str], str | None] = {}
    made = 0
    for instance in instances:
        source = instance["node_id"]
        mine = around[instance["id"]]
        for rel in layout.nodes[source]["relationships"]:
            target = rel["target_id"]
            if CONTAINED_IN in rel["type_hierarchy"]:
                chosen = [by_id[mine[target]]] if target in mine else []
            else:
                if (source, target) not in shared:
                    theirs = set(layout.containing_groups(target))
                    shared[(source, target)] = next((g for g in layout.containing_groups(source) if g in theirs),
                                                    None)
                group = shared[(source, target)]
                chosen = by_node.get(target, [])
                if group is not None:
                    chosen = [i for i in chosen if around[i["id"]].get(group) == mine.get(group)]
                if rel["properties"].get("connection_type") == "all_to_one":
                    if group is not None:
                        raise BlueprintError(f"connection_type all_to_one is not supported within groups, but "
                                             f"'{source}' and '{target}' are both in group '{group}'",
                                             f"node_templates.{source}.relationships", code="all-to-one-in-group")
                    chosen = chosen[:1]
            made += len(chosen)
            if made > MAX_RELATIONSHIPS:
                raise BlueprintError(f"the deployment would have more than {MAX_RELATIONSHIPS} relationship "
                                     "instances", f"node_templates.{source}.relationships",
                                     code="too-many-relationships")
            instance["relationships"].extend({"target_id": t["id"], "target_name": target, "type": rel["type"]}
                                             for t in chosen)


def _hosts(layout: _Layout, instances: list[dict], around: dict) -> None:
    """host_id: the nearest Compute instance, this one included, up the contained_in chain."""
    for instance in instances:
        current = instance["node_id"]
        while current:
            if COMPUTE in layout.nodes[current]["type_hierarchy"]:
                instance["host_id"] = around[instance["id"]][current]
                break
            current = _host_of(layout.nodes[current])
