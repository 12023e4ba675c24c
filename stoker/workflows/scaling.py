"""The scale workflow: add or remove copies of a node (with what it contains) or of a scaling group.

A copy ("unit") is one instance of the node and every instance contained in
it, or one instance of the group (all its members' instances).  Scaling out
clones the first unit: fresh ids, relationships inside the unit follow the
clone, the others keep their targets; instances outside that are connected
to the unit (not all_to_one) get a relationship to the clone too, and
``establish`` runs for it.  Scaling in removes the units ``include_instances``
names first, then the newest ones ``exclude_instances`` does not name (the
parameters are checked as cloudify-common's ``scale_entity`` checks them):
their sources ``unlink`` first, then the units are uninstalled and deleted.
A scale that fails is rolled back (``rollback_if_failed``, Cloudify's
default): ``roll_back_added`` takes back what it added and was cut short,
then its modification is rolled back (``modifications``).  ``ignore_failure``: a failed operation of
the uninstall (scale in, rollback) is reported and passed over.

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
from stoker.workflows.lifecycle import install_graph, intact_links, link_steps, rollback_graph, uninstall_graph
from stoker.workflows.model import CONTAINED_IN, Deployment, Instance

COMPUTE = "cloudify.nodes.Compute"
_ALPHABET = string.ascii_lowercase + string.digits


#: the phase of the steps that roll a failed scale out back (or uninstall what ``abort_started`` finds)
ROLLBACK = "scale-rollback"


def scale(deployment: Deployment, params: dict, memo: dict) -> Graph:
    if "scale" not in memo:
        delta = _delta(params)
        include, exclude = removal_hints(deployment, params, delta)
        # delta 0: nothing to do, and no deployment modification (as Cloudify's)
        memo["scale"] = decide(deployment, _entity(deployment, params), delta, include, exclude) if delta else None
    decided = memo["scale"]
    if decided is None:
        return Graph()
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


def uninstall_added(deployment: Deployment, added: list[str]) -> Graph:
    """The uninstall of the instances a started modification added (a failed scale out rolled back, or one
    ``abort_started`` finds), their sources' relationships to them unlinked first where ``establish`` may
    have run (the target got started)."""
    added = [i for i in added if i in deployment.instances]
    chains = uninstall_graph(deployment, added, phase=ROLLBACK)
    links = [[source, index] for source, index in intact_links(deployment, added)
             if deployment.instances[deployment.instances[source].relationships[index]["target_id"]].state == "started"]
    link_steps(deployment, chains, links, "unlink", ROLLBACK)
    return chains.graph


def roll_back_added(deployment: Deployment, added: list[str]) -> Graph:
    """What a failed scale out added, taken back as cloudify-common's ``rollback_node_instances`` takes it: an
    instance cut short goes back (``lifecycle.rollback_steps``: starting ones stop, creating or configuring
    ones are deleted), one that got started or never began is left as it is (its row goes with the
    modification's rollback); the sources outside unlink their relationships to every one of them first."""
    added = [i for i in added if i in deployment.instances]
    chains = rollback_graph(deployment, added, phase=ROLLBACK)
    link_steps(deployment, chains, intact_links(deployment, added), "unlink", ROLLBACK)
    return chains.graph


def ignored_phases(params: dict) -> frozenset[str]:
    """The phases whose failed operations the scale passes over: its uninstalls, with ``ignore_failure``
    (Cloudify's scale out's install does not take it)."""
    if not params.get("ignore_failure"):
        return frozenset()
    return frozenset({ROLLBACK, "scale"} if _delta(params) < 0 else {ROLLBACK})


def removal_hints(deployment: Deployment, params: dict, delta: int) -> tuple[list[str], list[str]]:
    """``include_instances`` and ``exclude_instances`` (an id or a list of them), refused as cloudify-common's
    ``scale_entity`` refuses them: when scaling out, or naming instances that are not there, or both, or
    excluding more than the scale in can keep, or with ``scale_compute``."""
    include, exclude = _ids(params, "include_instances"), _ids(params, "exclude_instances")
    if not include and not exclude:
        return [], []
    if delta > 0:
        raise WorkflowError("Instances cannot be included or excluded when scaling up.")
    entity = params.get("scalable_entity_name")
    if entity in deployment.scaling_groups:
        groups = _group_members(deployment)
        available = set(groups) | {i for members in groups.values() for i in members}
        listed = "Groups and member instances were: " + "; ".join(
            f"{group}: {', '.join(members)}" for group, members in groups.items())
    elif entity in deployment.nodes:
        groups = {}
        available = {i.id for i in deployment.instances.values() if i.node_id == entity}
        listed = f"Available instances were: {', '.join(sorted(available))}"
    else:
        raise WorkflowError(f"scale: {entity!r} is neither a node nor a scaling group of deployment {deployment.id}")
    error = ""
    for word, given in (("included", include), ("excluded", exclude)):
        if missing := sorted(set(given) - available):
            error += f"The following {word} instances did not exist: {', '.join(missing)}. "
    if both := sorted(set(include) & set(exclude)):
        error += f"The following instances were both excluded and included: {', '.join(both)}. "
    error += _too_many_exclusions(deployment, entity, exclude, groups, available, delta)
    if params.get("scale_compute"):
        error += ("Cannot include or exclude instances while scale_compute is True. Please specify the desired "
                  "compute instances and set scale_compute to False. ")
    if error:
        raise WorkflowError(error + listed)
    return include, exclude


def _ids(params: dict, name: str) -> list[str]:
    value = params.get(name) or []
    value = value if isinstance(value, list) else [value]
    if not all(isinstance(i, str) for i in value):
        raise WorkflowError(f"scale: {name} must be a node instance id or a list of them, not {params[name]!r}")
    return value


def _group_members(deployment: Deployment) -> dict[str, list[str]]:
    """Each scaling group instance's member instances (of every group), as Cloudify lists them."""
    members: dict[str, list[str]] = {}
    for instance in deployment.instances.values():
        for membership in instance.scaling_groups:
            members.setdefault(membership["id"], []).append(instance.id)
    return members


def _too_many_exclusions(deployment: Deployment, entity: str, exclude: list[str], groups: dict, available: set,
                         delta: int) -> str:
    """Why the scale in cannot keep every excluded instance ('' when it can)."""
    if not groups:
        target = len(available) + delta
        if target < len(exclude):
            return (f"Target number of instances is less than excluded instance count. Target number of instances "
                    f"was {target}. Excluded instances were: {', '.join(exclude)}. ")
        return ""
    units = _units(deployment, entity)[0]
    excluded = {key for key, unit in units.items() for i in exclude if i == key or i in unit}
    target = len(units) + delta
    if target < len(excluded):
        return (f"Instances from too many different groups were excluded. Target number of group instances was "
                f"{target}, but {len(excluded)} excluded groups.")
    return ""


def _entity(deployment: Deployment, params: dict) -> str:
    entity = params.get("scalable_entity_name")
    if entity in deployment.nodes and params.get("scale_compute"):
        return _compute_of(deployment, entity)
    return entity


def decide_count(deployment: Deployment, entity: str, instances: int, include: list | None = None,
                 exclude: list | None = None) -> dict:
    """What taking ``entity`` (a node or a scaling group) to ``instances`` copies does (a modification's
    ``{entity: {"instances": N, "removed_ids_include_hint": [...], "removed_ids_exclude_hint": [...]}}``)."""
    units, _bounds = _units(deployment, entity)
    return decide(deployment, entity, instances - len(units), include or [], exclude or [])


def decide(deployment: Deployment, entity: str, delta: int, include: list, exclude: list) -> dict:
    """What adding (removing) ``delta`` copies of ``entity`` does (removing: those ``include`` names first, then
    the newest ``exclude`` does not name); its ``modification_id`` names the deployment modification that
    makes it (``modifications``)."""
    units, bounds = _units(deployment, entity)
    count = len(units) + delta
    low, high = bounds.get("min_instances", 0), bounds.get("max_instances", -1)
    if count < low or (high != -1 and count > high):
        raise WorkflowError(f"scale: {entity} would have {count} instances, outside its bounds "
                            f"[{low}, {'unbounded' if high == -1 else high}]")
    total = len(deployment.instances) + delta * len(next(iter(units.values()), []))  # each copy clones the first unit
    if delta > 0 and total > MAX_INSTANCES:
        raise WorkflowError(f"scale: deployment {deployment.id} would have {total} node instances, more than the "
                            f"limit of {MAX_INSTANCES} (STOKER_MAX_NODE_INSTANCES)")
    decided = {"modification_id": str(uuid.uuid4()), "entity": entity, "delta": delta, "instances": count,
               "include": list(include), "exclude": list(exclude),
               "added": [], "removed": [], "links": [], "relinked_before": {}, "relinked_after": {}}
    if delta > 0:
        if not units:
            raise WorkflowError(f"scale: {entity} has no instance to copy; scaling out from 0 is not supported")
        _clone(deployment, next(iter(units.values())), delta, decided)
    elif delta < 0:
        chosen = _chosen(units, -delta, include, exclude)
        removed = [i for key, unit in units.items() if key in chosen for i in unit]
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


def _chosen(units: dict[str, list[str]], count: int, include: list, exclude: list) -> set[str]:
    """The ``count`` units a scale in removes: those ``include`` names (a unit's id or a member's), then the
    newest others, those ``exclude`` names last."""
    def unit_of(hint: str) -> str | None:
        return hint if hint in units else next((key for key, unit in units.items() if hint in unit), None)

    included = [key for key in map(unit_of, include) if key is not None]
    excluded = {unit_of(hint) for hint in exclude}
    newest = list(reversed(units))
    chosen: list[str] = []
    for key in included + [k for k in newest if k not in excluded] + [k for k in newest if k in excluded]:
        if len(chosen) < count and key not in chosen:
            chosen.append(key)
    return set(chosen)


def _units(deployment: Deployment, entity: str) -> tuple[dict[str, list[str]], dict]:
    """The copies of ``entity``, oldest first, by the id of the node instance or scaling group instance each is."""
    if entity in deployment.nodes:
        units = {i.id: deployment.contained(i.id) for i in deployment.instances.values() if i.node_id == entity}
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
    return by_group, group.get("properties") or {}


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
