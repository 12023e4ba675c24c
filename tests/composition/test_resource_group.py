"""``OS::Heat::Stack`` inline, and ``OS::Heat::ResourceGroup``: members, attributes, scaling, policies."""

from __future__ import annotations

import pytest
import yaml

from .conftest import hot, load, outputs

INLINE = yaml.safe_dump(hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "p"}}}},
                            parameters={"p": {"type": "string"}},
                            outputs={"out": {"value": {"get_attr": ["v", "value"]}}}))


def test_os_heat_stack_inline_outputs_and_stack_name(engine):
    result = engine.create_stack("s", hot(
        {"st": {"type": "OS::Heat::Stack", "properties": {"template": INLINE, "parameters": {"p": "inline!"}}}},
        outputs={"outs": {"value": {"get_attr": ["st", "outputs"]}},
                 "one": {"value": {"get_attr": ["st", "outputs", "out"]}},
                 "name": {"value": {"get_attr": ["st", "stack_name"]}},
                 "ref": {"value": {"get_resource": "st"}}}))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    got = outputs(result)
    assert got["outs"] == {"out": "inline!"}
    assert got["one"] == "inline!"
    child = engine.store.children(result["id"])[0]
    assert got["name"] == child.name
    assert got["ref"] == child.id


def group(count=3, props=None, index_var=None, rtype="OS::Heat::Value", **extra) -> dict:
    p = {"count": {"get_param": "count"},
         "resource_def": {"type": rtype, "properties": props or {"value": "member-%index%"}}}
    if index_var:
        p["index_var"] = index_var
    p.update(extra.pop("properties", {}))
    return hot({"g": {"type": "OS::Heat::ResourceGroup", "properties": p, **extra}},
               parameters={"count": {"type": "number", "default": count}},
               outputs={"refs": {"value": {"get_attr": ["g", "refs"]}},
                        "refs_map": {"value": {"get_attr": ["g", "refs_map"]}},
                        "attrs": {"value": {"get_attr": ["g", "attributes", "value"]}},
                        "values": {"value": {"get_attr": ["g", "value"]}},
                        "r1": {"value": {"get_attr": ["g", "resource.1"]}},
                        "r1v": {"value": {"get_attr": ["g", "resource.1.value"]}},
                        "r1path": {"value": {"get_attr": ["g", "resource.1", "value"]}},
                        "removed": {"value": {"get_attr": ["g", "removed_rsrc_list"]}}})


def members(engine, name="s") -> dict[str, dict]:
    return {r["resource_name"]: r for r in engine.resources(name, nested_depth=1) if r.get("parent_resource") == "g"}


def test_group_of_three_with_index_and_attributes(engine):
    result = engine.create_stack("s", group())
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    got = outputs(result)
    rows = members(engine)
    assert sorted(rows) == ["0", "1", "2"]
    ids = {n: r["physical_resource_id"] for n, r in rows.items()}
    assert got["refs"] == [ids["0"], ids["1"], ids["2"]]
    assert got["refs_map"] == ids
    assert got["attrs"] == {"0": "member-0", "1": "member-1", "2": "member-2"}
    assert got["values"] == ["member-0", "member-1", "member-2"]
    assert got["r1"] == ids["1"]
    assert got["r1v"] == got["r1path"] == "member-1"
    assert got["removed"] == []


def test_custom_index_var(engine):
    result = engine.create_stack("s", group(props={"value": "n-@@-%index%"}, index_var="@@"))
    assert outputs(result)["values"] == ["n-0-%index%", "n-1-%index%", "n-2-%index%"]


def test_count_zero(engine):
    result = engine.create_stack("s", group(count=0))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["refs"] == []


def test_scale_up_creates_only_new_members(engine):
    engine.create_stack("s", group(count=2))
    before = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    result = engine.update_stack("s", existing=True, parameters={"count": 4})
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    assert sorted(after) == ["0", "1", "2", "3"]
    assert {n: after[n] for n in before} == before
    child = engine.store.children(result["id"])[0]
    per_member: dict[str, list[str]] = {}
    for e in engine.events(child.id):
        if e["resource_name"] != child.name:
            per_member.setdefault(e["resource_name"], []).append(e["resource_status"])
    assert per_member == {n: ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"] for n in ("0", "1", "2", "3")}


def test_scale_down_removes_highest_index(engine):
    engine.create_stack("s", group(count=4))
    before = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    result = engine.update_stack("s", existing=True, parameters={"count": 2})
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    assert after == {"0": before["0"], "1": before["1"]}


def test_removal_policy_removes_named_member_and_never_reuses_it(engine):
    engine.create_stack("s", group(count=3))
    before = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    tmpl = group(count=3, properties={"removal_policies": [{"resource_list": ["1"]}]})
    result = engine.update_stack("s", tmpl, parameters={"count": 2})
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    assert after == {"0": before["0"], "2": before["2"]}
    assert outputs(result)["removed"] == ["1"]
    # scale up later, policies gone from the template: "1" stays out, the new member is "3"
    result = engine.update_stack("s", group(count=3), parameters={"count": 3})
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    assert sorted(after) == ["0", "2", "3"]
    assert outputs(result)["removed"] == ["1"]


def test_removal_policy_by_physical_id(engine):
    engine.create_stack("s", group(count=3))
    before = {n: r["physical_resource_id"] for n, r in members(engine).items()}
    tmpl = group(count=2, properties={"removal_policies": [{"resource_list": [before["0"]]}]})
    result = engine.update_stack("s", tmpl)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert sorted(members(engine)) == ["1", "2"]


def test_rolling_update_in_batches_of_one(engine):
    tmpl = group(count=3, props={"value": "v1-%index%"},
                 update_policy={"rolling_update": {"max_batch_size": 1}})
    engine.create_stack("s", tmpl)
    child = engine.store.children(engine.get_record("s").id)[0]
    seen = len(engine.events(child.id))
    tmpl = group(count=3, props={"value": "v2-%index%"},
                 update_policy={"rolling_update": {"max_batch_size": 1}})
    result = engine.update_stack("s", tmpl)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    events = engine.events(child.id)[seen:]
    # each batch is one nested-stack update holding exactly one member's update
    batches, current = [], None
    for e in events:
        if e["resource_name"] == child.name and e["resource_status"] == "UPDATE_IN_PROGRESS":
            current = []
            batches.append(current)
        elif e["resource_name"] in ("0", "1", "2") and e["resource_status"] == "UPDATE_COMPLETE":
            current.append(e["resource_name"])
    assert batches == [["0"], ["1"], ["2"]]
    assert outputs(result)["values"] == ["v2-0", "v2-1", "v2-2"]


def test_rolling_update_batches_of_two(engine):
    policy = {"rolling_update": {"max_batch_size": 2}}
    engine.create_stack("s", group(count=3, props={"value": "a%index%"}, update_policy=policy))
    child = engine.store.children(engine.get_record("s").id)[0]
    seen = len(engine.events(child.id))
    engine.update_stack("s", group(count=3, props={"value": "b%index%"}, update_policy=policy))
    events = engine.events(child.id)[seen:]
    starts = [e for e in events if e["resource_name"] == child.name and e["resource_status"] == "UPDATE_IN_PROGRESS"]
    assert len(starts) == 2


def _batch_created(engine, count):
    tmpl = group(count=count, update_policy={"batch_create": {"max_batch_size": 2}})
    result = engine.create_stack("s", tmpl)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["values"] == [f"member-{i}" for i in range(count)]
    child = engine.store.children(result["id"])[0]
    events = engine.events(child.id)
    stack_actions = [e["resource_status"] for e in events if e["resource_name"] == child.name]
    member_events = [(e["resource_name"], e["resource_status"]) for e in events if e["resource_name"] != child.name]
    return stack_actions, member_events


def test_batch_create_two_batches(engine):
    stack_actions, member_events = _batch_created(engine, 4)
    assert stack_actions == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    creates = [n for n, s in member_events if s == "CREATE_COMPLETE"]
    assert sorted(creates[:2]) == ["0", "1"] and sorted(creates[2:]) == ["2", "3"]
    assert all(s.startswith("CREATE_") for _, s in member_events)


def test_batch_create_three_batches_creates_each_member_once(engine):
    stack_actions, member_events = _batch_created(engine, 5)
    assert stack_actions.count("UPDATE_IN_PROGRESS") == 2
    assert sorted(n for n, s in member_events if s == "CREATE_COMPLETE") == ["0", "1", "2", "3", "4"]
    assert not [e for e in member_events if e[1].startswith("DELETE")]


def test_members_that_are_provider_templates(tree, engine):
    root = tree({
        "t.yaml": group(count=2, rtype="member.yaml", props={"name": "m%index%"}),
        "member.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "name"}}}},
                           parameters={"name": {"type": "string"}},
                           outputs={"value": {"value": {"get_attr": ["v", "value"]}}}),
    })
    template, env = load(root / "t.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    got = outputs(result)
    assert got["values"] == ["m0", "m1"]
    assert got["r1v"] == "m1"
    deep = engine.resources("s", nested_depth=2)
    assert sorted(r["resource_name"] for r in deep if r["resource_name"] == "v") == ["v", "v"]


def test_members_via_registry_mapping(tree, engine):
    root = tree({
        "t.yaml": group(count=2, rtype="My::Member", props={"name": "m%index%"}),
        "env.yaml": {"resource_registry": {"My::Member": "member.yaml"}},
        "member.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "name"}}}},
                           parameters={"name": {"type": "string"}},
                           outputs={"value": {"value": {"get_attr": ["v", "value"]}}}),
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["values"] == ["m0", "m1"]


def test_failing_member_fails_group(engine):
    result = engine.create_stack("s", group(count=2, rtype="OS::Heat::TestResource", props={"fail": True}))
    assert result["stack_status"] == "CREATE_FAILED"
    paths = sorted(f["resource_name"] for f in engine.failures("s"))
    assert paths == ["g.0", "g.1"]


def test_a_change_only_in_the_members_provider_template_is_applied(tree, engine):
    """As in Heat, a nested stack is always updated: the group's members see their new template."""
    def files(salt):
        member = yaml.safe_dump(hot({"v": {"type": "OS::Heat::Value", "properties": {"value": salt}}},
                                    parameters={"name": {"type": "string"}},
                                    outputs={"value": {"value": {"get_attr": ["v", "value"]}}}))
        return {"t.yaml": yaml.safe_dump(group(count=2, rtype="My::Member", props={"name": "%index%"})),
                "member.yaml": member,
                "env.yaml": yaml.safe_dump({"resource_registry": {"My::Member": "member.yaml"}})}
    root = tree(files("initial"))
    result = engine.create_stack("s", *load(root / "t.yaml", root / "env.yaml"))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["values"] == ["initial", "initial"]
    root = tree(files("more"))
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.update_stack("s", template, env)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs(engine.outputs("s"))["values"] == ["more", "more"]


def test_nested_stacks_have_their_parents_timeout(engine):
    engine.create_stack("s", group(count=1), timeout_mins=10)
    child = engine.store.children(engine.show_stack("s")["id"])[0]
    assert engine.show_stack(child.id)["timeout_mins"] == 10


def test_a_rolling_replace_after_the_members_template_path_changed(engine):
    """As Heat: members a batch has not reached yet read their template from their nested stack."""
    from stoker.template.template import Template

    member = yaml.safe_dump(hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "name"}}}},
                                parameters={"name": {"type": "string"}},
                                outputs={"value": {"value": {"get_attr": ["v", "value"]}}}))

    def version(path):
        data = group(count=4, rtype=path, props={"name": "m%index%"},
                     update_policy={"rolling_update": {"max_batch_size": 1, "min_in_service": 1}})
        return Template(data, {path: member})

    created = engine.create_stack("s", version("/opt/member.yaml"))
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    before = {name: r["physical_resource_id"] for name, r in members(engine).items()}
    result = engine.update_stack("s", version("/opt1/member.yaml"))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = members(engine)
    assert {r["resource_type"] for r in after.values()} == {"/opt1/member.yaml"}
    assert all(after[name]["physical_resource_id"] != before[name] for name in before)
    assert outputs(engine.outputs("s"))["values"] == ["m0", "m1", "m2", "m3"]
