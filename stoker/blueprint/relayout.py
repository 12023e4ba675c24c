"""A deployment update's node instances: the new plan's layout laid over the instances the deployment has.

The new plan's instances are made as a new deployment's would be (``instances.create_instances``); then,
node by node, the n-th new instance of a node the deployment already has takes over its n-th instance
(its id, state and runtime properties), so nothing kept is installed again.  New instances left over are
added, old ones left over removed; relationships follow the renaming.  A kept instance's relationships
that the new layout no longer has are unlinked, those it gains established.
"""

from __future__ import annotations

from stoker.blueprint.plan_diff import match_relationships


def relayout(old: list[dict], new: list[dict]) -> dict:
    """``{added, removed, relationships, unlinked, established}`` from the instance rows the deployment has
    (``old``) to the new plan's instances (``new``): ``added`` rows to store, ``removed`` ids, per kept id its
    new ``relationships``, ``unlinked`` [kept id, old relationship], ``established`` [kept id, new index]."""
    renamed: dict[str, str] = {}
    olds_by_node: dict[str, list[dict]] = {}
    for row in sorted(old, key=lambda r: r["index"]):
        olds_by_node.setdefault(row["node_id"], []).append(row)
    news_by_node: dict[str, list[dict]] = {}
    for row in new:
        news_by_node.setdefault(row["node_id"], []).append(row)
    for node_id, rows in news_by_node.items():
        for before, after in zip(olds_by_node.get(node_id, []), rows):
            renamed[after["id"]] = before["id"]
    kept = set(renamed.values())
    result: dict = {"added": [], "removed": [r["id"] for r in old if r["id"] not in kept], "relationships": {},
                    "unlinked": [], "established": []}
    old_by_id = {row["id"]: row for row in old}
    for row in new:
        relationships = [{**r, "target_id": renamed.get(r["target_id"], r["target_id"])}
                         for r in row["relationships"]]
        if row["id"] not in renamed:
            result["added"].append({**row, "relationships": relationships,
                                    "host_id": renamed.get(row["host_id"], row["host_id"])})
            continue
        instance_id = renamed[row["id"]]
        result["relationships"][instance_id] = relationships
        before = old_by_id[instance_id]["relationships"] or []
        matched = match_relationships(before, relationships)
        result["unlinked"] += [[instance_id, rel] for index, rel in enumerate(before) if index not in matched]
        kept_indexes = set(matched.values())
        result["established"] += [[instance_id, index] for index in range(len(relationships))
                                  if index not in kept_indexes]
    return result
