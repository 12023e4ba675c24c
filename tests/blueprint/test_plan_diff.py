"""The steps of a deployment update (``plan_diff``) and the instances it keeps, adds and removes
(``relayout``), on plans hypothesis makes: what each step names is what changed, nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stoker.blueprint.plan_diff import ACTIONS, modified_entity_ids, nodes_to_reinstall, plan_steps
from stoker.blueprint.relayout import relayout

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
DEPENDS_ON = "cloudify.relationships.depends_on"


@st.composite
def plans(draw) -> dict:
    """A plan: nodes with properties, relationships to other nodes, outputs."""
    names = sorted(draw(st.sets(NAMES, max_size=5)))
    order = draw(st.permutations(names))  # a node depends on nodes before it in this order: no cycle, as parsed
    nodes = []
    for name in names:
        earlier = order[:order.index(name)]
        targets = draw(st.lists(st.sampled_from(earlier), max_size=2, unique=True)) if earlier else []
        nodes.append({"id": name, "name": name, "type": draw(st.sampled_from(["T1", "T2"])),
                      "properties": draw(st.dictionaries(st.sampled_from("xyz"), st.integers(0, 2), max_size=3)),
                      "operations": {},
                      "relationships": [{"type": DEPENDS_ON, "type_hierarchy": [DEPENDS_ON], "target_id": t}
                                        for t in targets]})
    outputs = draw(st.dictionaries(st.sampled_from("pq"), st.integers(0, 2), max_size=2))
    return {"nodes": nodes, "outputs": {k: {"value": v} for k, v in outputs.items()},
            "description": draw(st.sampled_from([None, "one", "two"]))}


def _named(steps: list[dict], entity_type: str, action: str) -> set[str]:
    return {s["entity_id"][1] for s in steps if s["entity_type"] == entity_type and s["action"] == action}


@settings(max_examples=200, deadline=None)
@given(plans())
def test_a_plan_against_itself_has_no_step(plan):
    assert plan_steps(plan, plan) == []


@settings(max_examples=300, deadline=None)
@given(plans(), plans())
def test_the_steps_name_what_changed_in_cloudifys_order(old, new):
    steps = plan_steps(old, new)
    old_nodes = {n["name"]: n for n in old["nodes"]}
    new_nodes = {n["name"]: n for n in new["nodes"]}
    assert _named(steps, "node", "add") == set(new_nodes) - set(old_nodes)
    assert _named(steps, "node", "remove") == set(old_nodes) - set(new_nodes)
    same = {name for name in set(old_nodes) & set(new_nodes) if old_nodes[name]["type"] == new_nodes[name]["type"]}
    assert _named(steps, "node", "modify") == (set(old_nodes) & set(new_nodes)) - same
    for name in same:
        before, after = old_nodes[name]["properties"], new_nodes[name]["properties"]
        changed = {k for k in set(before) | set(after) if before.get(k, "gone") != after.get(k, "gone")}
        assert {s["entity_id"][3] for s in steps if s["entity_type"] == "property"
                and s["entity_id"][1] == name} == changed
        targets = lambda node: {r["target_id"] for r in node["relationships"]}  # noqa: E731
        added = {new_nodes[name]["relationships"][int(s["entity_id"][3])]["target_id"] for s in steps
                 if s["entity_type"] == "relationship" and s["action"] == "add" and s["entity_id"][1] == name}
        assert added == targets(new_nodes[name]) - targets(old_nodes[name])
    assert _named(steps, "output", "add") == set(new["outputs"]) - set(old["outputs"])
    assert [s["entity_id"] for s in steps if s["entity_type"] == "description"] == (
        [] if old["description"] == new["description"] else [["description"]])
    assert [ACTIONS.index(s["action"]) for s in steps] == sorted(ACTIONS.index(s["action"]) for s in steps)
    position = {s["entity_id"][1]: i for i, s in enumerate(steps)
                if s["entity_type"] == "node" and s["action"] == "add"}
    for name in position:  # an added node comes after the added nodes it depends on
        for rel in new_nodes[name]["relationships"]:
            if rel["target_id"] in position:
                assert position[rel["target_id"]] < position[name]
    assert nodes_to_reinstall(steps) <= set(new_nodes)
    assert set(modified_entity_ids(steps)["node"]) == set(_named(steps, "node", "add") | _named(steps, "node", "remove")
                                                         | _named(steps, "node", "modify"))


def _instances(plan: dict, counts: dict[str, int], tag: str) -> list[dict]:
    """Instances as ``create_instances`` lays them out: ``counts`` of each node, relationships to every
    instance of the target."""
    ids = {n["name"]: [f"{n['name']}_{tag}{i}" for i in range(counts.get(n["name"], 1))] for n in plan["nodes"]}
    return [{"id": ids[n["name"]][i], "node_id": n["name"], "index": i + 1, "host_id": None, "scaling_groups": [],
             "state": "uninitialized", "runtime_properties": {},
             "relationships": [{"target_id": t, "target_name": r["target_id"], "type": r["type"]}
                               for r in n["relationships"] for t in ids[r["target_id"]]]}
            for n in plan["nodes"] for i in range(counts.get(n["name"], 1))]


@settings(max_examples=300, deadline=None)
@given(plans(), plans(), st.dictionaries(NAMES, st.integers(0, 3)), st.dictionaries(NAMES, st.integers(0, 3)))
def test_relayout_keeps_what_a_node_had_and_adds_or_removes_the_rest(old, new, old_counts, new_counts):
    before, after = _instances(old, old_counts, "old"), _instances(new, new_counts, "new")
    found = relayout(before, after)
    kept = set(found["relationships"])
    old_ids = {i["id"] for i in before}
    assert kept | set(found["removed"]) == old_ids and not kept & set(found["removed"])
    assert not {row["id"] for row in found["added"]} & old_ids
    every = kept | {row["id"] for row in found["added"]}
    per_node = {}
    for instance_id in every:
        node = next(i["node_id"] for i in before + found["added"] if i["id"] == instance_id)
        per_node[node] = per_node.get(node, 0) + 1
    assert per_node == {n: c for n, c in ((n["name"], new_counts.get(n["name"], 1)) for n in new["nodes"]) if c}
    relationships = list(found["relationships"].values()) + [row["relationships"] for row in found["added"]]
    assert all(r["target_id"] in every for rels in relationships for r in rels)
    old_by_id = {i["id"]: i for i in before}
    for instance_id, index in found["established"]:
        rel = found["relationships"][instance_id][index]
        assert (rel["type"], rel["target_id"]) not in {(r["type"], r["target_id"])
                                                       for r in old_by_id[instance_id]["relationships"]}
    for instance_id, rel in found["unlinked"]:
        assert instance_id in kept and rel in old_by_id[instance_id]["relationships"]
        assert rel not in found["relationships"][instance_id]
