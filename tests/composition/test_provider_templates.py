"""Provider templates: ``type: member.yaml`` makes a nested stack; properties in, outputs out."""

from __future__ import annotations

import json

import pytest
import yaml

from stoker.errors import ValidationFailed

from .conftest import TEMPLATES, hot, in_thread, load, outputs, wait_for

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
        "wrapper.yaml": yaml.safe_dump(hot({"inner": {"type": "OS::Heat::RandomString"}},
                                           outputs={"value": {"value": {"get_attr": ["inner", "value"]}}})),
    })
    result = engine.create_stack("s", *load(root / "t.yaml", root / "env.yaml"))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    child = engine.store.children(result["id"])[0]
    assert engine.delete_stack(child.id)["stack_status"] == "DELETE_COMPLETE"
    assert engine.delete_stack("s")["stack_status"] == "DELETE_COMPLETE"


def _required_provider(params: list[str], fail: bool = False) -> str:
    return yaml.safe_dump({"heat_template_version": "2013-05-23",
                           "parameters": {p: {"type": "string"} for p in params},
                           "resources": {
                               "r": {"type": "OS::Heat::Value", "properties": {
                                   "value": {"list_join": ["-", [{"get_param": p} for p in params]]}}},
                               "f": {"type": "OS::Heat::TestResource", "properties": {"fail": fail}}},
                           "outputs": {"out": {"value": {"get_attr": ["r", "value"]}}}})


def test_a_required_parameter_added_by_a_failed_update_is_given_by_the_next(tree, engine):
    """As Heat's TemplateResourceNewParamTest: the failed update left the new template stored."""
    def version(props, provider):
        root = tree({"t.yaml": yaml.safe_dump(hot({"n": {"type": "the.yaml", "properties": props}},
                                                  outputs={"out": {"value": {"get_attr": ["n", "out"]}}})),
                     "the.yaml": provider})
        return load(root / "t.yaml")

    assert engine.create_stack("s", *version({"one": "a"}, _required_provider(["one"])))["stack_status"] \
        == "CREATE_COMPLETE"
    both = {"one": "a", "two": "b"}
    failed = engine.update_stack("s", *version(both, _required_provider(["one", "two"], fail=True)))
    assert failed["stack_status"] == "UPDATE_FAILED"
    assert "Test Resource failed" in failed["stack_status_reason"]
    fixed = engine.update_stack("s", *version(both, _required_provider(["one", "two"])))
    assert fixed["stack_status"] == "UPDATE_COMPLETE", fixed["stack_status_reason"]
    assert outputs(engine.outputs("s"))["out"] == "a-b"


def test_a_patch_update_drops_the_kept_parameters_the_new_template_no_longer_declares(engine):
    """As Heat's TemplateResourceRemovedParamTest (``--existing``)."""
    from stoker.template.environment import Environment

    first = hot({"r": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "one"}}}},
                parameters={"one": {"type": "string", "default": "x"}},
                outputs={"out": {"value": {"get_attr": ["r", "value"]}}})
    engine.create_stack("s", first, Environment.from_dict({"parameters": {"one": "kept"}}),
                        parameters={"one": "given"})
    second = hot({"r": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "two"}}}},
                 parameters={"two": {"type": "string"}},
                 outputs={"out": {"value": {"get_attr": ["r", "value"]}}})
    result = engine.update_stack("s", second, Environment.from_dict({"parameter_defaults": {"two": "new"}}),
                                 existing=True)
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs(engine.outputs("s"))["out"] == "new"
    assert "one" not in engine.show_stack("s")["parameters"]


def test_a_type_override_moved_to_another_provider_template_replaces_and_deletes_the_old(tree, engine):
    """As Heat's test_change_in_file_path: the old nested stack is deleted as it was made
    (its own use of the overridden type is the built-in), though the registry now points elsewhere."""
    root = tree({
        "t.yaml": hot({"secret1": {"type": "OS::Heat::RandomString"}},
                      outputs={"out": {"value": {"get_attr": ["secret1", "value"]}}}),
        "env.yaml": {"resource_registry": {"OS::Heat::RandomString": "nested.yaml"}},
        "nested.yaml": hot({"secret2": {"type": "OS::Heat::RandomString"}},
                           outputs={"value": {"value": {"get_attr": ["secret2", "value"]}}}),
        "env2.yaml": {"resource_registry": {"OS::Heat::RandomString": "new/nested.yaml"}},
        "new/nested.yaml": hot({"secret2": {"type": "OS::Heat::RandomString"}},
                               outputs={"value": {"value": "freddy"}}),
    })
    created = engine.create_stack("s", *load(root / "t.yaml", root / "env.yaml"))
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    old_child = engine.store.children(created["id"])[0]

    result = engine.update_stack("s", *load(root / "t.yaml", root / "env2.yaml"))

    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs(engine.outputs("s"))["out"] == "freddy"
    assert [c.id for c in engine.store.children(created["id"])] != [old_child.id]
    assert engine.delete_stack("s")["stack_status"] == "DELETE_COMPLETE"


def _facade_stack(tree, concrete: dict, properties: dict | None = None):
    """``thisone`` is an ``OS::Thingy`` (facade.yaml), mapped for itself to concrete.yaml."""
    facade = hot({}, parameters={"one": {"type": "string"}, "two": {"type": "string"}},
                 outputs={"here-it-is": {"value": "noop"}})
    root = tree({
        "t.yaml": hot({"thisone": {"type": "OS::Thingy",
                                   "properties": {"one": "pre", "two": "post"} if properties is None else properties}},
                      outputs={"one": {"value": {"get_attr": ["thisone", "here-it-is"]}}}),
        "env.yaml": {"resource_registry": {"OS::Thingy": "facade.yaml",
                                           "resources": {"thisone": {"OS::Thingy": "concrete.yaml"}}}},
        "facade.yaml": facade, "concrete.yaml": concrete})
    return load(root / "t.yaml", root / "env.yaml")


@pytest.mark.parametrize("concrete, properties, message", [
    (hot({"str": {"type": "OS::Heat::RandomString"}}, parameters={"one": {"type": "string"}},
         outputs={"here-it-is": {"value": "x"}}),
     {"one": "pre"}, "Required property two for facade OS::Thingy missing in provider"),
    (hot({"str": {"type": "OS::Heat::RandomString"}},
         parameters={"one": {"type": "string"}, "two": {"type": "string"}}),
     None, "Attribute here-it-is for facade OS::Thingy missing in provider"),
    (hot({}, parameters={"one": {"type": "string"}, "two": {"type": "string"}, "three": {"type": "string"}},
         outputs={"here-it-is": {"value": "x"}}),
     None, "Provider requires property three unknown in facade OS::Thingy"),
])
def test_a_provider_must_offer_what_its_facade_promises(tree, engine, concrete, properties, message):
    """As Heat's ValidateFacadeTest: exactly one error, in Heat's words (an attribute only the
    facade has is no unknown-attribute error of its own)."""
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("s", *_facade_stack(tree, concrete, properties))
    assert str(caught.value) == message


def test_a_provider_that_matches_its_facade_is_created(tree, engine):
    concrete = hot({}, parameters={"one": {"type": "string"}, "two": {"type": "string"}},
                   outputs={"here-it-is": {"value": {"get_param": "two"}}})
    result = engine.create_stack("s", *_facade_stack(tree, concrete))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["one"] == "post"


def test_a_template_overriding_a_built_in_type_must_offer_its_attributes(tree, engine):
    root = tree({"t.yaml": hot({"secret": {"type": "OS::Heat::RandomString"}}),
                 "env.yaml": {"resource_registry": {"OS::Heat::RandomString": "wrapper.yaml"}},
                 "wrapper.yaml": hot({"inner": {"type": "OS::Heat::None"}})})
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("s", *load(root / "t.yaml", root / "env.yaml"))
    assert str(caught.value) == "Attribute value for facade OS::Heat::RandomString missing in provider"


def test_a_nested_failure_reads_as_the_nested_resource_failure(tree, engine):
    """As Heat's TemplateResourceErrorMessageTest: one error, its path through the nested stack."""
    root = tree({"t.yaml": hot({"victim": {"type": "fail.yaml"}}),
                 "fail.yaml": hot({"oops": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}})})
    result = engine.create_stack("s", *load(root / "t.yaml"))
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"] == \
        "Resource CREATE failed: ValueError: resources.victim.resources.oops: Test Resource failed oops"


def test_an_update_preempts_a_nested_update_in_progress(tree, engine, make_engine):
    """As Heat's test_nested_preemption: the second update stops the first (its 60-second nested
    update included) and removes the nested stack; the output it no longer has becomes an error."""
    def tres_wait():
        return {"type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"update": 60}, "value": {"get_param": "input"}}}

    def files(preempt):
        return {"root.yaml": hot({"nested_stack": {"type": "preempt.yaml",
                                                   "properties": {"input": {"get_param": "input"}}}},
                                 parameters={"input": {"type": "string"}},
                                 outputs={"delay_stack": {"value": {"get_attr": ["nested_stack", "delay_stack"]}}}),
                "preempt.yaml": preempt,
                "delay.yaml": hot({"delay_resource": tres_wait()}, parameters={"input": {"type": "string"}})}

    nested = hot({"delay_stack": {"type": "delay.yaml", "properties": {"input": {"get_param": "input"}}}},
                 parameters={"input": {"type": "string"}},
                 outputs={"delay_stack": {"value": {"get_resource": "delay_stack"}}})
    template, env = load(tree(files(nested)) / "root.yaml")
    assert engine.create_stack("s", template, env, parameters={"input": "foo"})["stack_status"] == "CREATE_COMPLETE"
    first = make_engine()
    thread, box = in_thread(lambda: first.update_stack("s", template, env, parameters={"input": "bar"}))
    wait_for(lambda: {r["resource_name"]: r["resource_status"] for r in engine.resources("s", nested_depth=2)}
             .get("delay_resource") == "UPDATE_IN_PROGRESS")

    template, env = load(tree(files(hot({}, parameters={"input": {"type": "string"}}))) / "root.yaml")
    result = engine.update_stack("s", template, env, parameters={"input": "baz"})

    thread.join(15)
    assert not thread.is_alive()
    assert box["value"]["stack_status"] == "UPDATE_FAILED"
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert [r["resource_name"] for r in engine.resources("s", nested_depth=2)] == ["nested_stack"]
    [output] = engine.outputs("s")
    assert output["output_value"] is None and "delay_stack" in output["output_error"]
