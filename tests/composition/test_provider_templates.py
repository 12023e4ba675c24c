"""Provider templates: ``type: member.yaml`` makes a nested stack; properties in, outputs out."""

from __future__ import annotations

import json

import pytest
import yaml

from stoker.errors import ValidationFailed

from .conftest import TEMPLATES, hot, load, outputs

PROVIDER = TEMPLATES / "provider"


@pytest.fixture
def created(engine):
    template, env = load(PROVIDER / "parent.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    return result


def test_properties_become_parameters_and_outputs_attributes(created):
    got = outputs(created)
    assert got["greeting"] == "hello alpha x2"
    assert got["user"] == "hello alpha x2"


def test_get_resource_is_the_nested_stack_arn(engine, created):
    """As in Heat: a template resource's reference is its nested stack's ARN."""
    got = outputs(created)
    child = engine.store.children(created["id"])
    assert [c.owner_resource for c in child] == ["server"]
    assert got["ref"] == f"arn:openstack:heat::default:stacks/{child[0].name}/{child[0].id}"
    assert got["stack_id_attr"] == child[0].id
    rows = {r["resource_name"]: r for r in engine.resources("s")}
    assert rows["server"]["physical_resource_id"] == child[0].id


def test_get_attr_reaches_resources_inside_the_nested_stack(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "inner.yaml"}},
                      outputs={"via_output": {"value": {"get_attr": ["m", "value"]}},
                               "path": {"value": {"get_attr": ["m", "resource.r", "value"]}},
                               "dotted": {"value": {"get_attr": ["m", "resource.r.value"]}},
                               "ref": {"value": {"get_attr": ["m", "resource.r"]}}}),
        "inner.yaml": yaml.safe_dump(hot({"r": {"type": "OS::Heat::RandomString"}},
                                         outputs={"value": {"value": {"get_attr": ["r", "value"]}}})),
    })
    template, env = load(root / "t.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    got = outputs(result)
    # a RandomString's reference id is its value
    assert len(got["via_output"]) == 32 and got["via_output"] == got["path"] == got["dotted"] == got["ref"]


def test_os_stack_id_output_overrides_reference(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "with_stack_id.yaml"}},
                      outputs={"ref": {"value": {"get_resource": "m"}}}),
        "with_stack_id.yaml": (PROVIDER / "with_stack_id.yaml").read_text(),
    })
    template, env = load(root / "t.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["ref"] == "custom-id"


def test_resource_facade_reads_parents_metadata_and_deletion_policy(created):
    got = outputs(created)
    assert got["role"] == "web"
    assert got["policy"] == "Retain"


def test_unset_property_leaves_the_nested_parameter_default(created):
    assert outputs(created)["defaulted"] == "template-default"


def test_parameter_defaults_reach_nested_parameters(tree, engine):
    root = tree({"env.yaml": {"parameter_defaults": {"from_defaults": "from-env"}}})
    template, env = load(PROVIDER / "parent.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert outputs(result)["defaulted"] == "from-env"


def test_parameter_defaults_reach_nested_parameter_with_a_set_property_overriding(tree, engine):
    """A property the parent sets beats the environment's parameter_defaults."""
    root = tree({"env.yaml": {"parameter_defaults": {"name": "from-env"}}})
    template, env = load(PROVIDER / "parent.yaml", root / "env.yaml")
    assert outputs(engine.create_stack("s", template, env))["greeting"] == "hello alpha x2"


def test_parameter_defaults_satisfy_required_nested_parameter(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "req.yaml"}}, outputs={"o": {"value": {"get_attr": ["m", "o"]}}}),
        "req.yaml": hot({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "need"}}}},
                        parameters={"need": {"type": "string"}},
                        outputs={"o": {"value": {"get_attr": ["v", "value"]}}}),
        "env.yaml": {"parameter_defaults": {"need": "from-env"}},
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    assert outputs(engine.create_stack("s", template, env))["o"] == "from-env"


def test_property_not_a_parameter_names_resource_and_template(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "leaf.yaml", "properties": {"bogus": 1}}}),
        "leaf.yaml": (PROVIDER / "leaf.yaml").read_text(),
    })
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    problem = info.value.problems[0]
    assert tuple(problem.path[:2]) == ("resources", "m")
    assert "bogus" in problem.message + ".".join(map(str, problem.path))
    assert "leaf.yaml" in problem.message
    assert engine.list_stacks() == []


def test_missing_required_parameter_names_resource_and_template(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "member.yaml"}}),
        "member.yaml": (PROVIDER / "member.yaml").read_text(),
        "leaf.yaml": (PROVIDER / "leaf.yaml").read_text(),
    })
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    problem = info.value.problems[0]
    assert tuple(problem.path[:2]) == ("resources", "m")
    assert "name" in problem.message and "member.yaml" in problem.message


def test_unknown_output_attribute_is_a_validation_error(tree, engine):
    root = tree({
        "t.yaml": hot({"m": {"type": "leaf.yaml"}}, outputs={"x": {"value": {"get_attr": ["m", "nope"]}}}),
        "leaf.yaml": (PROVIDER / "leaf.yaml").read_text(),
    })
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.create_stack("s", template, env)
    assert "unknown-attribute" in [p.code for p in info.value.problems]


def test_missing_provider_file_is_a_validation_error(tree, engine):
    root = tree({"t.yaml": hot({"m": {"type": "absent.yaml"}})})
    with pytest.raises(ValidationFailed) as info:  # reading refuses it, as heatclient does
        load(root / "t.yaml")
    assert "absent.yaml" in info.value.problems[0].message
    with pytest.raises(ValidationFailed) as info:  # and the engine, given no file, at its place
        engine.create_stack("s", hot({"m": {"type": "absent.yaml"}}))
    problem = info.value.problems[0]
    assert tuple(problem.path[:2]) == ("resources", "m")
    assert "absent.yaml" in problem.message


def test_resource_list_nested_depth(created, cli):
    top = json.loads(cli("stack", "resource", "list", "s", "-f", "json").stdout)
    assert {r["resource_name"] for r in top} == {"server", "user"}
    one = json.loads(cli("stack", "resource", "list", "s", "--nested-depth", "1", "-f", "json").stdout)
    assert {r["resource_name"] for r in one} == {"server", "user", "inner", "deeper", "facade_probe",
                                                 "policy_probe"}
    two = json.loads(cli("stack", "resource", "list", "s", "--nested-depth", "2", "-f", "json").stdout)
    assert "leaf" in {r["resource_name"] for r in two}
    assert len(two) == len(one) + 1


def test_event_list_nested_depth(created, engine, cli):
    flat = {e["resource_name"] for e in engine.events("s")}
    assert "inner" not in flat
    deep = engine.events("s", nested_depth=2)
    names = {e["resource_name"] for e in deep}
    assert {"inner", "leaf"} <= names
    times = [e["event_time"] for e in deep]
    assert times == sorted(times)
    run = cli("stack", "event", "list", "s", "--nested-depth", "2", "-f", "json")
    assert run.code == 0, run.output
    assert "leaf" in {e["resource_name"] for e in json.loads(run.stdout)}


def test_failing_nested_resource_fails_parent_and_is_the_root_cause(tree, engine, cli):
    root = tree({
        "t.yaml": hot({"outer": {"type": "failing.yaml"}}),
        "failing.yaml": (PROVIDER / "failing.yaml").read_text(),
    })
    template, env = load(root / "t.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_FAILED"
    rows = {r["resource_name"]: r for r in engine.resources("s")}
    assert rows["outer"]["resource_status"] == "CREATE_FAILED"
    assert "broken" in rows["outer"]["resource_status_reason"]
    assert "broken" in result["stack_status_reason"]
    failures = engine.failures("s")
    assert [f["resource_name"] for f in failures] == ["outer.broken"]
    run = cli("stack", "failures", "list", "s", "-f", "json")
    assert [f["resource_name"] for f in json.loads(run.stdout)] == ["outer.broken"]


def _simple_tree(tree):
    return tree({
        "t.yaml": hot({"server": {"type": "member.yaml", "properties": {"name": {"get_param": "name"}}}},
                      parameters={"name": {"type": "string", "default": "alpha"}},
                      outputs={"greeting": {"value": {"get_attr": ["server", "greeting"]}}}),
        "member.yaml": (PROVIDER / "member.yaml").read_text(),
        "leaf.yaml": (PROVIDER / "leaf.yaml").read_text(),
    })


def test_delete_removes_nested_stacks(engine, tree):
    template, env = load(_simple_tree(tree) / "t.yaml")
    created = engine.create_stack("s", template, env)
    children = engine.store.children(created["id"])
    grandchildren = engine.store.children(children[0].id)
    assert len(children) == 1 and len(grandchildren) == 1
    result = engine.delete_stack("s")
    assert result["stack_status"] == "DELETE_COMPLETE"
    for record in children + grandchildren:
        again = engine.store.get_stack(record.id, engine.project_id, show_deleted=True)
        assert again.deleted_at is not None
        assert (again.action, again.status) == ("DELETE", "COMPLETE")
    assert engine.list_stacks() == []


def test_retained_provider_resource_keeps_its_nested_stack(engine, created):
    child = engine.store.children(created["id"])[0]
    assert engine.delete_stack("s")["stack_status"] == "DELETE_COMPLETE"
    again = engine.store.get_stack(child.id, engine.project_id, show_deleted=True)
    assert again.deleted_at is None


def test_update_changing_a_property_updates_nested_stack_in_place(engine, tree):
    template, env = load(_simple_tree(tree) / "t.yaml")
    created = engine.create_stack("s", template, env)
    child_id = engine.store.children(created["id"])[0].id
    result = engine.update_stack("s", existing=True, parameters={"name": "beta"})
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["greeting"].startswith("hello beta x")  # the x-number: see test_unset_number_property_keeps_nested_default
    assert [c.id for c in engine.store.children(created["id"]) if c.deleted_at is None] == [child_id]
    updates = [e for e in engine.events("s", nested_depth=1) if e["resource_name"] == "inner"]
    assert updates[-1]["resource_status"] == "UPDATE_COMPLETE"


def test_unset_number_property_keeps_nested_default(engine, tree):
    template, env = load(_simple_tree(tree) / "t.yaml")
    assert outputs(engine.create_stack("s", template, env))["greeting"] == "hello alpha x1"


def test_a_provider_overriding_a_type_may_use_that_type(tree, engine):
    """As in Heat: inside the template a type is mapped to, the mapping back to it is skipped."""
    root = tree({
        "t.yaml": hot({"secret": {"type": "OS::Heat::RandomString"}},
                      outputs={"out": {"value": {"get_attr": ["secret", "value"]}}}),
        "env.yaml": yaml.safe_dump({"resource_registry": {"OS::Heat::RandomString": "wrapper.yaml"}}),
        "wrapper.yaml": yaml.safe_dump(hot({"inner": {"type": "OS::Heat::RandomString"}},
                                           outputs={"value": {"value": {"get_attr": ["inner", "value"]}}})),
    })
    template, env = load(root / "t.yaml", root / "env.yaml")
    result = engine.create_stack("s", template, env)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    rows = {r["resource_name"]: r for r in engine.resources("s", nested_depth=2)}
    assert rows["inner"]["parent_resource"] == "secret"
    assert len(outputs(result)["out"]) == 32


NESTED1 = yaml.safe_dump(hot({"nested2": {"type": "nested2.yaml"}}))
ONE_RANDOM = yaml.safe_dump(hot({"random": {"type": "OS::Heat::RandomString"}}))
TWO_RANDOMS = yaml.safe_dump(hot({"random": {"type": "OS::Heat::RandomString"},
                                  "random2": {"type": "OS::Heat::RandomString"}}))


def _nested_preview(tree, engine, before, after, parent_type="nested1.yaml"):
    files = {"t.yaml": yaml.safe_dump(hot({"nested1": {"type": "nested1.yaml"}})),
             "nested1.yaml": NESTED1, "nested2.yaml": before}
    template, env = load(tree(files) / "t.yaml")
    assert engine.create_stack("s", template, env)["stack_status"] == "CREATE_COMPLETE"
    files.update({"nested2.yaml": after,
                  "t.yaml": yaml.safe_dump(hot({"nested1": {"type": parent_type}}))})
    template, env = load(tree(files) / "t.yaml")
    plan = engine.update_stack("s", template, env, dry_run=True, show_nested=True)
    return {kind: sorted((e["resource_name"], e.get("parent_resource")) for e in entries)
            for kind, entries in plan.items() if entries}


@pytest.mark.parametrize("before, after, parent_type, expected", [
    (ONE_RANDOM, ONE_RANDOM, "nested1.yaml", {
        "updated": [("nested1", None), ("nested2", "nested1")], "unchanged": [("random", "nested2")]}),
    (ONE_RANDOM, TWO_RANDOMS, "nested1.yaml", {
        "updated": [("nested1", None), ("nested2", "nested1")], "unchanged": [("random", "nested2")],
        "added": [("random2", "nested2")]}),
    (TWO_RANDOMS, ONE_RANDOM, "nested1.yaml", {
        "updated": [("nested1", None), ("nested2", "nested1")], "unchanged": [("random", "nested2")],
        "deleted": [("random2", "nested2")]}),
    (ONE_RANDOM, ONE_RANDOM, "OS::Heat::None", {
        "replaced": [("nested1", None)], "deleted": [("nested2", "nested1"), ("random", "nested2")]}),
])
def test_update_preview_shows_nested_stacks_with_their_parent(tree, engine, before, after, parent_type,
                                                              expected):
    assert _nested_preview(tree, engine, before, after, parent_type) == expected


def test_update_preview_of_a_replacing_change(engine):
    def template(props):
        return hot({"test1": {"type": "OS::Heat::TestResource", "properties": props}})
    engine.create_stack("s", template({"value": "Test1"}))
    plan = engine.update_stack("s", template({"update_replace": True}), dry_run=True)
    assert [e["resource_name"] for e in plan["replaced"]] == ["test1"]
    assert not plan["updated"] and not plan["unchanged"]


def _provider(params: dict, salt: str) -> str:
    return yaml.safe_dump({"heat_template_version": "2015-04-30",
                           "parameters": {p: {"type": "string", "default": d} for p, d in params.items()},
                           "resources": {"r": {"type": "OS::Heat::Value", "properties": {"value": salt}}},
                           "outputs": {"out": {"value": {"get_attr": ["r", "value"]}}}})


@pytest.mark.parametrize("props, params, salt", [
    ({"one": "a", "two": "b", "three": "c"}, {"one": "x", "two": "y", "three": "z"}, {"get_param": "three"}),
    ({"one": "a"}, {"one": "x"}, {"get_param": "one"}),
    ({"one": "a", "two": "b"}, {"one": "x", "two": "y"}, "changed inside the template only"),
])
def test_an_update_reads_the_provider_template_of_the_files_map(tree, engine, props, params, salt):
    """Parameters added or removed, or a change only inside the provider template, are applied."""
    def stack_files(properties, provider):
        return {"t.yaml": yaml.safe_dump(hot({"n": {"type": "the.yaml", "properties": properties}},
                                             outputs={"out": {"value": {"get_attr": ["n", "out"]}}})),
                "the.yaml": provider}
    template, env = load(tree(stack_files({"one": "a", "two": "b"},
                                          _provider({"one": "x", "two": "y"}, {"get_param": "one"}))) / "t.yaml")
    assert outputs(engine.create_stack("s", template, env))["out"] == "a"
    template, env = load(tree(stack_files(props, _provider(params, salt))) / "t.yaml")
    result = engine.update_stack("s", template, env)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    expected = props.get(salt["get_param"]) if isinstance(salt, dict) else salt
    assert outputs(engine.outputs("s"))["out"] == expected


def test_a_provider_using_the_type_it_overrides_is_deleted_from_its_own_record(tree, engine):
    """The nested stack deleted on its own, then its parent: both see the built-in type inside."""
    root = tree({
        "t.yaml": hot({"secret": {"type": "OS::Heat::RandomString"}}),
        "env.yaml": yaml.safe_dump({"resource_registry": {"OS::Heat::RandomString": "wrapper.yaml"}}),
        "wrapper.yaml": yaml.safe_dump(hot({"inner": {"type": "OS::Heat::RandomString"}})),
    })
    result = engine.create_stack("s", *load(root / "t.yaml", root / "env.yaml"))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    child = engine.store.children(result["id"])[0]
    assert engine.delete_stack(child.id)["stack_status"] == "DELETE_COMPLETE"
    assert engine.delete_stack("s")["stack_status"] == "DELETE_COMPLETE"
