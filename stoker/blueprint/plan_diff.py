"""What a deployment update changes: the steps between two deployment plans, as Cloudify's manager lists them.

A step is ``{action, entity_type, entity_id, topology_order}``: ``action`` add / remove / modify,
``entity_id`` the path of the entity as strings (``["nodes", "web"]``,
``["nodes", "web", "properties", "port"]``, ``["nodes", "web", "relationships", "0"]``,
``["outputs", "url"]``), as cfy prints and cloudify-rest-client reads them.  Removals come first, then
additions (a node before the nodes that depend on it), then modifications.  Nothing here reads the store:
the update workflow and the preview both work from these steps.
"""

from __future__ import annotations

from typing import Any, Iterator

CONTAINED_IN = "cloudify.relationships.contained_in"
#: the order Cloudify sorts actions in
ACTIONS = ("remove", "add", "modify")
#: sections of the plan compared key by key: (section, the entity type of its steps)
SECTIONS = (("outputs", "output"), ("capabilities", "capability"), ("workflows", "workflow"),
            ("groups", "group"), ("policies", "policy"), ("plugins", "plugin"))


def step(action: str, entity_type: str, *entity_id: Any, topology_order: int = 0) -> dict:
    """One step; its ``entity_id`` parts are strings, as Cloudify stores them (cfy joins them to print)."""
    return {"action": action, "entity_type": entity_type, "entity_id": [str(part) for part in entity_id],
            "topology_order": topology_order}


def plan_steps(old: dict, new: dict) -> list[dict]:
    """The steps from deployment plan ``old`` to ``new`` (each with ``nodes`` as a list and the sections)."""
    found: list[dict] = []
    if (old.get("description") or None) != (new.get("description") or None):
        found.append(step("modify", "description", "description"))
    old_nodes, new_nodes = by_name(old.get("nodes") or []), by_name(new.get("nodes") or [])
    found.extend(_node_steps(old_nodes, new_nodes))
    for section, entity_type in SECTIONS:
        for action, key in diff_keys(old.get(section), new.get(section)):
            found.append(step(action, entity_type, section, key))
    order = _added_order(new_nodes, {s["entity_id"][1] for s in found if _is_node(s, "add")})
    for item in found:
        if _is_node(item, "add"):
            item["topology_order"] = order[item["entity_id"][1]]
    return sorted(found, key=_sort_key)


def by_name(nodes: list[dict]) -> dict[str, dict]:
    """Node name -> node, of a plan's list of nodes."""
    return {node.get("id") or node["name"]: node for node in nodes}


def diff_keys(old: dict | None, new: dict | None) -> Iterator[tuple[str, str]]:
    """(action, key) of every key added, removed or changed between two maps, in key order."""
    old, new = old or {}, new or {}
    for key in sorted(set(old) | set(new)):
        if key not in old:
            yield "add", key
        elif key not in new:
            yield "remove", key
        elif old[key] != new[key]:
            yield "modify", key


def _is_node(item: dict, action: str) -> bool:
    return item["entity_type"] == "node" and item["action"] == action


def _sort_key(item: dict) -> tuple:
    adding_node = _is_node(item, "add")
    return (ACTIONS.index(item["action"]),
            # removed relationships before removed nodes; added nodes (targets first) before the rest
            0 if item["action"] == "remove" and item["entity_type"] == "relationship" else 1,
            0 if adding_node else 1, item["topology_order"] if adding_node else 0)


def container(node: dict) -> str | None:
    return next((r["target_id"] for r in node.get("relationships") or []
                 if CONTAINED_IN in (r.get("type_hierarchy") or [r.get("type")])), None)


def _node_steps(old_nodes: dict, new_nodes: dict) -> Iterator[dict]:
    for name in sorted(set(old_nodes) - set(new_nodes)):
        yield step("remove", "node", "nodes", name)
    for name, node in new_nodes.items():
        before = old_nodes.get(name)
        if before is None:
            yield step("add", "node", "nodes", name)
        elif before.get("type") != node.get("type") or container(before) != container(node):
            yield step("modify", "node", "nodes", name)  # another node under the same name: made again
        else:
            yield from _inside_node(name, before, node)


def _inside_node(name: str, old: dict, new: dict) -> Iterator[dict]:
    for action, key in diff_keys(old.get("properties"), new.get("properties")):
        yield step(action, "property", "nodes", name, "properties", key)
    for action, key in diff_keys(old.get("operations"), new.get("operations")):
        yield step(action, "operation", "nodes", name, "operations", key)
    old_rels, new_rels = old.get("relationships") or [], new.get("relationships") or []
    matched = match_relationships(old_rels, new_rels)
    for index in range(len(old_rels)):
        if index not in matched:
            yield step("remove", "relationship", "nodes", name, "relationships", index)
    kept = {new_index: old_index for old_index, new_index in matched.items()}
    for index, rel in enumerate(new_rels):
        if index not in kept:
            yield step("add", "relationship", "nodes", name, "relationships", index)
            continue
        before = old_rels[kept[index]]
        if kept[index] != index:
            yield step("modify", "relationship", "nodes", name, "relationships", kept[index], index)
        for side in ("source_operations", "target_operations"):
            for action, key in diff_keys(before.get(side), rel.get(side)):
                yield step(action, "operation", "nodes", name, "relationships", index, side, key)
        for action, key in diff_keys(before.get("properties"), rel.get("properties")):
            yield step(action, "property", "nodes", name, "relationships", index, "properties", key)


def match_relationships(old: list[dict], new: list[dict]) -> dict[int, int]:
    """Old index -> new index of the relationships kept: same type and target, the n-th with the n-th."""
    free: dict[tuple, list[int]] = {}
    for index, rel in enumerate(new):
        free.setdefault((rel.get("type"), rel.get("target_id")), []).append(index)
    matched = {}
    for index, rel in enumerate(old):
        waiting = free.get((rel.get("type"), rel.get("target_id")))
        if waiting:
            matched[index] = waiting.pop(0)
    return matched


def _added_order(nodes: dict, added: set[str]) -> dict[str, int]:
    """Added nodes numbered so a node's targets among them come first (Cloudify installs them first)."""
    order: dict[str, int] = {}

    def visit(name: str, path: frozenset) -> None:
        if name in order or name in path:
            return
        for rel in nodes[name].get("relationships") or []:
            if rel.get("target_id") in added:
                visit(rel["target_id"], path | {name})
        order[name] = len(order)
    for name in sorted(added):
        visit(name, frozenset())
    return order


def nodes_to_reinstall(steps: list[dict]) -> set[str]:
    """Nodes whose properties or operations changed, or that became another node under the same name: their
    installed instances are reinstalled (Cloudify's update runs no drift check or update operation here)."""
    return {item["entity_id"][1] for item in steps
            if item["entity_id"][0] == "nodes" and len(item["entity_id"]) > 1
            and (item["entity_type"] in ("property", "operation")
                 or (item["entity_type"] == "node" and item["action"] == "modify"))}


def modified_entity_ids(steps: list[dict]) -> dict[str, Any]:
    """Cloudify's ``modified_entity_ids``: per entity type, the names its steps touch."""
    found: dict[str, Any] = {kind: [] for kind in ("node", "property", "operation", "workflow", "output",
                                                   "capability", "description", "group", "policy", "plugin")}
    found["relationship"] = {}
    for item in steps:
        entity = item["entity_id"]
        if item["entity_type"] == "relationship":
            found["relationship"].setdefault(entity[1], []).append(entity[3])
        elif len(entity) >= 2:
            found[item["entity_type"]].append(entity[1])
        else:
            found[item["entity_type"]].append(entity[0])
    return found
