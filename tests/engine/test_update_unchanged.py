"""An update leaves alone what did not change, and still sees every change that reaches a resource.

``stoker/engine/unchanged.py`` lets an update skip resolving resources whose
template entry and inputs are as stored; these tests fail if it skips too
much: a changed parameter, a replaced or updated resource it refers to, a
changed condition or environment, a resource in a failed state.
"""

from __future__ import annotations

import pytest

from stoker.engine.actions import dependency_graph, leave_unchanged_alone
from stoker.engine.unchanged import may_leave_alone, same_definitions
from stoker.template.environment import Environment
from stoker.template.template import Template

from .helpers import hot, resource_events

pytestmark = pytest.mark.sqlite_only


def value(v) -> dict:
    return {"type": "OS::Heat::Value", "properties": {"value": v}}


def stored_values(engine, stack: str) -> dict:
    """The ``value`` property each live resource last applied, as stored."""
    record = engine.get_record(stack)
    return {row.name: (row.properties_data or {}).get("value") for row in engine.store.get_resources(record.id)
            if row.replaced_by is None}


def updated(engine, stack: str, template: dict, **kwargs) -> list[tuple[str, str]]:
    """Update; the resource events it made."""
    before = resource_events(engine, stack)
    info = engine.update_stack(stack, template, **kwargs)
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    return resource_events(engine, stack)[len(before):]


def test_one_changed_resource_is_updated_and_the_others_are_left_alone(engine):
    engine.create_stack("s", hot({f"r{i}": value(f"v{i}") for i in range(20)}))
    events = updated(engine, "s", hot({f"r{i}": value(f"v{i}" if i != 7 else "new") for i in range(20)}))
    assert events == [("r7", "UPDATE_IN_PROGRESS"), ("r7", "UPDATE_COMPLETE")]
    assert stored_values(engine, "s") == {f"r{i}": f"v{i}" if i != 7 else "new" for i in range(20)}


def test_a_changed_parameter_reaches_the_resources_that_read_it(engine):
    template = hot({"reads": value({"get_param": "p"}), "plain": value("x")},
                   parameters={"p": {"type": "string"}})
    engine.create_stack("s", template, parameters={"p": "one"})
    events = updated(engine, "s", template, parameters={"p": "two"})
    assert ("reads", "UPDATE_COMPLETE") in events
    assert stored_values(engine, "s") == {"reads": "two", "plain": "x"}


def test_a_changed_parameter_default_reaches_the_resources_that_read_it(engine):
    engine.create_stack("s", hot({"reads": value({"get_param": "p"})},
                                 parameters={"p": {"type": "string", "default": "one"}}))
    updated(engine, "s", hot({"reads": value({"get_param": "p"})},
                             parameters={"p": {"type": "string", "default": "two"}}))
    assert stored_values(engine, "s") == {"reads": "two"}


def test_a_replaced_resource_reaches_what_refers_to_it(engine):
    def template(length: int) -> dict:
        return hot({"token": {"type": "OS::Heat::RandomString", "properties": {"length": length}},
                    "ref": value({"get_resource": "token"}),
                    "after_ref": value({"get_resource": "ref"})})

    engine.create_stack("s", template(8))
    first = stored_values(engine, "s")["ref"]
    assert len(first) == 8  # a random string's reference is its value
    events = updated(engine, "s", template(10))
    now = stored_values(engine, "s")
    assert len(now["ref"]) == 10 and ("ref", "UPDATE_COMPLETE") in events


def test_an_updated_attribute_source_reaches_what_reads_it(engine):
    def template(v: str) -> dict:
        return hot({"source": value(v), "reader": value({"get_attr": ["source", "value"]}),
                    "reader_of_reader": value({"list_join": ["-", [{"get_attr": ["reader", "value"]}, "z"]]})})

    engine.create_stack("s", template("one"))
    events = updated(engine, "s", template("two"))
    assert ("reader", "UPDATE_COMPLETE") in events and ("reader_of_reader", "UPDATE_COMPLETE") in events
    assert stored_values(engine, "s") == {"source": "two", "reader": "two", "reader_of_reader": "two-z"}


def test_a_changed_condition_reaches_the_resources_it_enables(engine):
    def template(on: bool) -> dict:
        return hot({"maybe": {**value("m"), "condition": "on"}, "always": value("a")},
                   conditions={"on": {"equals": [on, True]}})

    engine.create_stack("s", template(False))
    assert set(stored_values(engine, "s")) == {"always"}
    events = updated(engine, "s", template(True))
    assert ("maybe", "CREATE_COMPLETE") in events
    assert stored_values(engine, "s") == {"maybe": "m", "always": "a"}


# -- which definitions count as unchanged ----------------------------------------------------
def _defined(engine, data: dict, parameters: dict | None = None, environment: dict | None = None,
             previous=None):
    stack = engine.new_stack("s")
    stack.define(Template(data), Environment.from_dict(environment or {}), parameters or {}, previous=previous)
    return stack


def test_unchanged_entries_with_the_same_inputs_are_the_ones_left_alone(engine):
    data = hot({"a": value("x"), "b": value({"get_resource": "a"}), "c": value({"get_attr": ["a", "value"]}),
                "d": value("changes")})
    old = _defined(engine, data)
    new = _defined(engine, {**data, "resources": {**data["resources"], "d": value("changed")}}, previous=old)
    # c reads an attribute, which may change without an update; d's entry changed
    assert new.unchanged == {"a", "b"}


@pytest.mark.parametrize("change", ["parameter", "environment", "conditions", "files"])
def test_any_changed_input_leaves_nothing_unchanged(engine, change):
    data = hot({"a": value("x")}, parameters={"p": {"type": "string", "default": "d"}},
               conditions={"c": {"equals": [1, 1]}})
    old = _defined(engine, data)
    args: dict = {}
    if change == "parameter":
        args["parameters"] = {"p": "other"}
    elif change == "environment":
        args["environment"] = {"resource_registry": {"My::Value": "OS::Heat::Value"}}
    elif change == "conditions":
        data = {**data, "conditions": {"c": {"equals": [1, 2]}}}
    new_template = Template(data, files={"f.txt": "new"} if change == "files" else None)
    stack = engine.new_stack("s")
    stack.define(new_template, Environment.from_dict(args.get("environment") or {}), args.get("parameters") or {},
                 previous=old)
    assert stack.unchanged == frozenset()
    assert same_definitions(old, old, old.definition) == {"a"}


def test_a_resource_is_left_alone_only_healthy_and_after_all_it_refers_to(engine):
    data = hot({"a": value("x"), "b": value({"get_resource": "a"}), "group": {
        "type": "OS::Heat::ResourceGroup", "properties": {"count": 1, "resource_def": value("g")}}})
    new = _defined(engine, data, previous=_defined(engine, data))
    assert new.unchanged == {"a", "b", "group"}
    a, b, group = (new.instantiate(name, new.definition.resources[name]) for name in ("a", "b", "group"))
    for resource in (a, b, group):
        resource.action, resource.status = "CREATE", "COMPLETE"

    def leaves(resource) -> bool:
        return may_leave_alone(new, resource, new.definition.resources[resource.name])

    assert leaves(a)
    assert not leaves(b)  # a has not been left alone (yet)
    new.left_alone.add("a")
    assert leaves(b)
    assert not leaves(group)  # a nested stack is always updated: its own resources decide
    for action, status in (("UPDATE", "FAILED"), ("CREATE", "IN_PROGRESS"), ("SUSPEND", "COMPLETE")):
        a.action, a.status = action, status
        assert not leaves(a), (action, status)


# -- what the update settles before its walk ---------------------------------------------------
def _updating(engine, data: dict, new_data: dict, environment: dict | None = None):
    """The stack an update of ``data`` to ``new_data`` walks, its resources healthy as created."""
    new = _defined(engine, new_data, environment=environment,
                   previous=_defined(engine, data, environment=environment))
    for name, definition in new.definition.resources.items():
        resource = new.resources[name] = new.instantiate(name, definition)
        resource.action, resource.status = "CREATE", "COMPLETE"
    return new, dependency_graph(new, set(new.definition.resources))


def test_the_walk_gets_only_what_the_update_could_not_leave_alone_before_it(engine):
    data = hot({"a": value("x"), "b": value({"get_resource": "a"}), "c": value("changes"),
                "d": value({"get_resource": "c"}), "e": value({"list_join": ["-", [{"get_resource": "b"}]]})})
    changed = {**data, "resources": {**data["resources"], "c": value("changed")}}
    stack, graph = _updating(engine, data, changed)
    rest = leave_unchanged_alone(stack, graph)
    assert stack.left_alone == {"a", "b", "e"}
    assert rest.requires == {"c": set(), "d": {"c"}}  # d still waits for c, as in the whole graph


@pytest.mark.parametrize("case", ["pre-update hook", "unhealthy", "another row of its name", "external id"])
def test_what_might_not_be_left_alone_goes_through_the_walk_with_its_dependents(engine, case):
    entry_b = value({"get_resource": "a"})
    if case == "external id":
        entry_b["external_id"] = "outside"
    data = hot({"a": value("x"), "b": entry_b, "c": value({"get_resource": "b"}), "d": value("changes")})
    changed = {**data, "resources": {**data["resources"], "d": value("changed")}}
    hooks = {"resource_registry": {"resources": {"b": {"hooks": "pre-update"}}}} if case == "pre-update hook" else None
    stack, graph = _updating(engine, data, changed, environment=hooks)
    b = stack.resources["b"]
    if case == "unhealthy":
        b.action, b.status = "CHECK", "FAILED"
    elif case == "another row of its name":
        stack.retired.append(stack.instantiate("b", stack.definition.resources["b"]))
    rest = leave_unchanged_alone(stack, graph)
    assert stack.left_alone == {"a"}
    assert rest.requires == {"b": set(), "c": {"b"}, "d": set()}

