"""``OS::Heat::ResourceChain``: one member per listed type, chained unless concurrent."""

from __future__ import annotations

from .conftest import hot, outputs


def chain(types, concurrent=False, props=None) -> dict:
    return hot({"c": {"type": "OS::Heat::ResourceChain",
                      "properties": {"resources": types, "concurrent": concurrent,
                                     "resource_properties": props or {"length": 8}}}},
               outputs={"refs": {"value": {"get_attr": ["c", "refs"]}},
                        "first": {"value": {"get_attr": ["c", "resource.0", "value"]}},
                        "all": {"value": {"get_attr": ["c", "attributes", "value"]}}})


def members(engine, name="s") -> dict[str, str]:
    return {r["resource_name"]: r["resource_type"] for r in engine.resources(name, nested_depth=1)
            if r.get("parent_resource") == "c"}


def test_members_properties_and_attributes(engine):
    result = engine.create_stack("s", chain(["OS::Heat::RandomString", "OS::Heat::RandomString"]))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert members(engine) == {"0": "OS::Heat::RandomString", "1": "OS::Heat::RandomString"}
    got = outputs(result)
    assert len(got["refs"]) == 2 and len(got["first"]) == 8
    assert sorted(got["all"]) == ["0", "1"] and all(len(v) == 8 for v in got["all"].values())


def test_each_member_waits_for_the_one_before(engine):
    types = ["OS::Heat::None"] * 4
    assert engine.create_stack("s", chain(types, props={}))["stack_status"] == "CREATE_COMPLETE"
    child = engine.store.children(engine.show_stack("s")["id"])[0]
    deps = {n: r.get("depends_on") for n, r in engine.template(child.id)["resources"].items()}
    assert deps == {"0": None, "1": ["0"], "2": ["1"], "3": ["2"]}


def test_concurrent_members_wait_for_nothing(engine):
    engine.create_stack("s", chain(["OS::Heat::None"] * 3, concurrent=True, props={}))
    child = engine.store.children(engine.show_stack("s")["id"])[0]
    assert {n: r.get("depends_on") for n, r in engine.template(child.id)["resources"].items()} == {
        "0": None, "1": None, "2": None}


def test_update_changes_the_member_types(engine):
    engine.create_stack("s", chain(["OS::Heat::RandomString", "OS::Heat::RandomString"]))
    result = engine.update_stack("s", chain(["OS::Heat::None"], props={}))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert members(engine) == {"0": "OS::Heat::None"}
