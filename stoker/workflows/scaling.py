"""The scale workflow: add or remove copies of a node (with what it contains) or of a scaling group.

A copy ("unit") is one instance of the node and every instance contained in
it, or one instance of the group (all its members' instances).  Scaling out
clones the first unit: fresh ids, relationships inside the unit follow the
clone, the others keep their targets; instances outside that are connected
to the unit (not all_to_one) get a relationship to the clone too, and
``establish`` runs for it.  Scaling in removes the newest units: their
sources ``unlink`` first, then the units are uninstalled and deleted.

What is decided goes into ``memo`` (stored with the execution), so a resumed
scale runs the same plan and adds nothing twice; a deployment modification
(``modifications``) makes it in the deployment's rows: started (instances
added) as the execution starts, finished (instances removed) once it ended well.
"""

from __future__ import annotations

import secrets
import string
import uuid

from stoker.blueprint.instances import MAX_INSTANCES
from stoker.engine.graph import Graph
from stoker.workflows.workflow_error import WorkflowError
from stoker.workflows.lifecycle import install_graph, link_steps, uninstall_graph
from stoker.workflows.model import CONTAINED_IN, Deployment, Instance

COMPUTE = "cloudify.nodes.Compute"
_ALPHABET = string.ascii_lowercase + string.digits


def scale(deployment: Deployment, params: dict, memo: dict) -> Graph:
    if "scale" not in memo:
        memo["scale"] = decide(deployment, _entity(deployment, params), _delta(params))
    decided = memo["scale"]
    for row in decided["added"]:
        if row["id"] not in deployment.instances:
            deployment.instances[row["id"]] = Instance(row["id"], row["node_id"], row["index"], row["state"], {},
                                                       list(row["relationships"]), row["host_id"],
                                                       list(row["scaling_groups"]))
    for instance_id, relationships in decided["relinked_before"].items():
        deployment.instances[instance_id].relationships = list(relationships)
    if decided["added"]:
        chains = install_graph(deployment, [row["id"] for row in decided["added"]], phase="scale")
        link_steps(deployment, chains, decided["links"], "establish", "scale")
    else:
        chains = uninstall_graph(deployment, decided["removed"], phase="scale")
        link_steps(deployment, chains, decided["links"], "unlink", "scale")
    return chains.graph


def _delta(params: dict) -> int:
    delta = params.get("delta", 1)
    if isinstance(delta, str) and delta.lstrip("+-").isdigit():
        delta = int(delta)
    if not isinstance(delta, int) or isinstance(delta, bool):
        raise WorkflowError(f"scale: delta must be an integer, not {delta!r}")
    return delta


def _entity(deployment: Deployment, params: dict) -> str:
    entity = params.get("scalable_entity_name")
    if entity in deployment.nodes and params.get("scale_compute"):
        return _compute_of(deployment, entity)
    return entity


def decide_count(deployment: Deployment, entity: str, instances: int) -> dict:
    """What taking ``entity`` (a node or a scaling group) to ``instances`` copies does (a modification's
    ``{entity: {"instances": N}}``)."""
    units, _bounds = _units(deployment, entity)
    return decide(deployment, entity, instances - len(units))


def decide(deployment: Deployment, entity: str, delta: int) -> dict:
    """What adding (removing) ``delta`` copies of ``entity`` does; its ``modification_id`` names the
    deployment modification that makes it (``modifications``)."""
    units, bounds = _units(deployment, entity)
    count = len(units) + delta
    low, high = bounds.get("min_instances", 0), bounds.get("max_instances", -1)
    if count < low or (high != -1 and count > high):
        raise WorkflowError(f"scale: {entity} would have {count} instances, outside its bounds "
                            f"[{low}, {'unbounded' if high == -1 else high}]")
    total = len(deployment.instances) + delta * (len(units[0]) if units else 0)  # each copy clones the first unit
    if delta > 0 and total > MAX_INSTANCES:
        raise WorkflowError(f"scale: deployment {deployment.id} would have {total} node instances, more than the "
                            f"limit of {MAX_INSTANCES} (STOKER_MAX_NODE_INSTANCES)")
    decided = {"modification_id": str(uuid.uuid4()), "entity": entity, "delta": delta, "instances": count,
               "added": [], "removed": [], "links": [], "relinked_before": {}, "relinked_after": {}}
    if delta > 0:
        if not units:
            raise WorkflowError(f"scale: {entity} has no instance to copy; scaling out from 0 is not supported")
        _clone(deployment, units[0], delta, decided)
    elif delta < 0:
        removed = [i for unit in units[delta:] for i in unit]
        decided["removed"] = removed
        _detach(deployment, set(removed), decided)
    decided["counts"] = _counts(deployment, decided)
    return decided


def _compute_of(deployment: Deployment, node_id: str) -> str:
    """The Compute node ``node_id`` is contained in (itself if it is one), else ``node_id``."""
    current, seen = node_id, set()
    while current and current not in seen:
        seen.add(current)
        node = deployment.nodes[current]
        if COMPUTE in (node.get("type_hierarchy") or []):
            return current
        current = next((r["target_id"] for r in node.get("relationships") or []
                        if CONTAINED_IN in (r.get("type_hierarchy") or [])), None)
    return node_id


def _units(deployment: Deployment, entity: str) -> tuple[list[list[str]], dict]:
    if entity in deployment.nodes:
        units = [deployment.contained(i.id) for i in deployment.instances.values() if i.node_id == entity]
        bounds = ((deployment.nodes[entity].get("capabilities") or {}).get("scalable") or {}).get("properties") or {}
        return units, bounds
    group = deployment.scaling_groups.get(entity)
    if group is None:
        raise WorkflowError(f"scale: {entity!r} is neither a node nor a scaling group of deployment {deployment.id}")
    by_group: dict[str, list[str]] = {}
    for instance in deployment.instances.values():
        for membership in instance.scaling_groups:
            if membership.get("name") == entity:
                members = by_group.setdefault(membership["id"], [])
                members.extend(i for i in deployment.contained(instance.id) if i not in members)
    return list(by_group.values()), group.get("properties") or {}


def _clone(deployment: Deployment, unit: list[str], copies: int, decided: dict) -> None:
    used = set(deployment.instances)
    indexes: dict[str, int] = {}
    for instance in deployment.instances.values():
        indexes[instance.node_id] = max(indexes.get(instance.node_id, 0), instance.index)
    for _ in range(copies):
        renamed = {old: _new_id(deployment.instances[old].node_id, used) for old in unit}
        groups = {m["id"]: _new_id(m["name"], used) for old in unit for m in deployment.instances[old].scaling_groups}
        for old in unit:
            template = deployment.instances[old]
            indexes[template.node_id] += 1
            decided["added"].append({
                "id": renamed[old], "node_id": template.node_id, "index": indexes[template.node_id],
                "state": "uninitialized", "runtime_properties": {},
                "host_id": renamed.get(template.host_id, template.host_id),
                "scaling_groups": [{**m, "id": groups[m["id"]]} for m in template.scaling_groups],
                "relationships": [{**r, "target_id": renamed.get(r["target_id"], r["target_id"])}
                                  for r in template.relationships]})
        _attach(deployment, set(unit), renamed, decided)


def _attach(deployment: Deployment, unit: set, renamed: dict, decided: dict) -> None:
    """Instances outside the unit connected to it get a relationship to its copy."""
    for instance in deployment.instances.values():
        if instance.id in unit:
            continue
        relationships = decided["relinked_before"].get(instance.id, list(instance.relationships))
        for index, rel in enumerate(list(instance.relationships)):
            if rel["target_id"] in unit and _joins_copies(deployment, instance, index):
                relationships.append({**rel, "target_id": renamed[rel["target_id"]]})
                decided["links"].append([instance.id, len(relationships) - 1])
                decided["relinked_before"][instance.id] = relationships


def _detach(deployment: Deployment, removed: set, decided: dict) -> None:
    for instance in deployment.instances.values():
        if instance.id in removed:
            continue
        kept = []
        for index, rel in enumerate(instance.relationships):
            if rel["target_id"] in removed:
                decided["links"].append([instance.id, index])
            else:
                kept.append(rel)
        if len(kept) != len(instance.relationships):
            decided["relinked_after"][instance.id] = kept


def _joins_copies(deployment: Deployment, instance: Instance, index: int) -> bool:
    relationship = deployment.relationship_of(instance, index)
    if CONTAINED_IN in (relationship.get("type_hierarchy") or []):
        return False
    return (relationship.get("properties") or {}).get("connection_type", "all_to_all") != "all_to_one"


def _counts(deployment: Deployment, decided: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    removed = set(decided["removed"])
    for instance in deployment.instances.values():
        if instance.id not in removed:
            counts[instance.node_id] = counts.get(instance.node_id, 0) + 1
    for row in decided["added"]:
        counts[row["node_id"]] = counts.get(row["node_id"], 0) + 1
    return counts


def _new_id(prefix: str, used: set) -> str:
    while True:
        candidate = f"{prefix}_{''.join(secrets.choice(_ALPHABET) for _ in range(6))}"
        if candidate not in used:
            used.add(candidate)
            return candidate
