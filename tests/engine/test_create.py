"""Creating stacks: dependency order, concurrency, outputs, failures and rollback."""

from __future__ import annotations


import pytest

from .helpers import (
    files_under,
    hot,
    index,
    local_file,
    outputs_by_key,
    physical_ids,
    resource_events,
    stack_events,
    statuses,
    template,
    tres,
)


def test_create_follows_the_dependencies(engine, files):
    info = engine.create_stack("deps", template("dependencies.yaml"), parameters={"dir": str(files)})

    assert info["stack_status"] == "CREATE_COMPLETE"
    assert info["stack_status_reason"] == "Stack CREATE completed successfully"
    assert statuses(engine, "deps") == {name: "CREATE_COMPLETE" for name in
                                        ("base", "derived", "reference", "file", "independent")}
    events = resource_events(engine, "deps")
    # each resource: exactly one IN_PROGRESS then one COMPLETE
    for name in ("base", "derived", "reference", "file", "independent"):
        assert [s for n, s in events if n == name] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    # get_attr, get_resource and depends_on all order the create
    for needed, needer in (("base", "derived"), ("derived", "reference"), ("reference", "file"),
                           ("derived", "file")):
        assert index(events, needed, "CREATE_COMPLETE") < index(events, needer, "CREATE_IN_PROGRESS")
    assert stack_events(engine, "deps") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]

    ids = physical_ids(engine, "deps")
    assert ids["file"] == str(files / "out.txt")
    assert (files / "out.txt").read_text() == "hello-derived"
    assert ids["derived"].startswith("deps-derived-")
    assert ids["base"] != ids["derived"]

    outputs = outputs_by_key(info["outputs"])
    assert outputs["reference"]["output_value"] == ids["derived"]
    assert outputs["file_path"]["output_value"] == str(files / "out.txt")
    assert outputs["file_size"]["output_value"] == len("hello-derived")
    assert outputs["reference"]["description"] == "the physical id of derived"
    # an output that fails is reported as such; the stack is still complete
    assert outputs["broken"]["output_value"] is None
    assert "map_merge" in outputs["broken"]["output_error"]
    assert "output_error" not in outputs["file_path"]
    # and the same outputs are read back from the store
    assert outputs_by_key(engine.outputs("deps")) == outputs
    assert engine.show_stack("deps")["stack_status"] == "CREATE_COMPLETE"


def test_independent_resources_run_concurrently(engine):
    resources = {f"r{i:02}": tres(wait_secs=1, value=f"v{i}") for i in range(20)}
    resources["last"] = {**tres(), "depends_on": sorted(resources)}
    info = engine.create_stack("wide", hot(resources))

    assert info["stack_status"] == "CREATE_COMPLETE"
    events = resource_events(engine, "wide")
    # all twenty had started before the first one finished
    first_done = min(i for i, (n, s) in enumerate(events) if s == "CREATE_COMPLETE")
    started_before = {n for n, s in events[:first_done] if s == "CREATE_IN_PROGRESS"}
    assert started_before == {f"r{i:02}" for i in range(20)}
    assert events[-2:] == [("last", "CREATE_IN_PROGRESS"), ("last", "CREATE_COMPLETE")]


def test_a_cycle_is_refused_before_anything_is_stored(engine):
    cyclic = hot({"a": {**tres(), "depends_on": "b"}, "b": {**tres(), "depends_on": "a"}})
    with pytest.raises(Exception) as caught:
        engine.create_stack("cycle", cyclic)
    assert "a" in str(caught.value) and "b" in str(caught.value)
    assert engine.list_stacks() == []


def test_resource_data_survives_a_reload(engine, make_engine):
    """Plug-in data (TestResource output, RandomString value) is stored, not only kept in memory."""
    stack = hot({"t": tres(value="kept"), "r": {"type": "OS::Heat::RandomString",
                                                "properties": {"length": 12}}},
                outputs={"t": {"value": {"get_attr": ["t", "output"]}},
                         "r": {"value": {"get_attr": ["r", "value"]}},
                         "ref": {"value": {"get_resource": "r"}}})
    created = outputs_by_key(engine.create_stack("data", stack)["outputs"])
    assert created["t"]["output_value"] == "kept"
    assert len(created["r"]["output_value"]) == 12

    later = outputs_by_key(make_engine().outputs("data"))
    assert later["t"]["output_value"] == "kept"
    assert later["r"]["output_value"] == created["r"]["output_value"]
    assert later["ref"]["output_value"] == created["r"]["output_value"]


# -- failures ---------------------------------------------------------------------------
def test_a_failed_resource_fails_the_stack_and_stops_its_dependents(engine, files):
    info = engine.create_stack("broken", template("failure.yaml"), parameters={"dir": str(files)})

    assert info["stack_status"] == "CREATE_FAILED"
    assert "Test Resource failed broken" in info["stack_status_reason"]
    assert info["stack_status_reason"].startswith("Resource CREATE failed: ")
    found = statuses(engine, "broken")
    assert found["first"] == found["second"] == "CREATE_COMPLETE"
    assert found["broken"] == "CREATE_FAILED"
    assert found.get("never", "INIT_COMPLETE") == "INIT_COMPLETE"
    assert found.get("never_file", "INIT_COMPLETE") == "INIT_COMPLETE"
    reasons = {r["resource_name"]: r["resource_status_reason"] for r in engine.resources("broken")}
    assert "Test Resource failed broken" in reasons["broken"]

    events = resource_events(engine, "broken")
    assert not [e for e in events if e[0] in ("never", "never_file")], events
    assert [s for n, s in events if n == "broken"] == ["CREATE_IN_PROGRESS", "CREATE_FAILED"]
    assert files_under(files) == ["first.txt", "second.txt"]
    assert stack_events(engine, "broken") == ["CREATE_IN_PROGRESS", "CREATE_FAILED"]

    # a failed stack can be deleted, and its files go with it
    assert engine.delete_stack("broken")["stack_status"] == "DELETE_COMPLETE"
    assert files_under(files) == []


def test_rollback_of_a_failed_create_deletes_everything(engine, files):
    info = engine.create_stack("rolled", template("failure.yaml"), parameters={"dir": str(files)},
                               disable_rollback=False)

    assert info["stack_status"] == "ROLLBACK_COMPLETE"
    assert files_under(files) == []
    assert engine.resources("rolled") == []
    assert stack_events(engine, "rolled") == ["CREATE_IN_PROGRESS", "CREATE_FAILED",
                                              "ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]
    events = resource_events(engine, "rolled")
    for name in ("first", "second"):
        assert index(events, name, "CREATE_COMPLETE") < index(events, name, "DELETE_COMPLETE")
    # deleted in reverse order: second (needs first) goes first
    assert index(events, "second", "DELETE_COMPLETE") < index(events, "first", "DELETE_IN_PROGRESS")
    # the stack is still there, to be looked at, then deleted
    assert engine.show_stack("rolled")["stack_status"] == "ROLLBACK_COMPLETE"
    assert engine.delete_stack("rolled")["stack_status"] == "DELETE_COMPLETE"


def test_a_name_in_use_is_refused(engine):
    engine.create_stack("taken", hot({"a": tres()}))
    with pytest.raises(Exception, match="already exists"):
        engine.create_stack("taken", hot({"b": tres()}))
    assert statuses(engine, "taken") == {"a": "CREATE_COMPLETE"}


def test_create_dry_run_stores_nothing(engine, files):
    plan = engine.create_stack("dry", template("dependencies.yaml"), parameters={"dir": str(files)},
                               dry_run=True)
    order = [r["resource_name"] for r in plan["resources"]]
    assert sorted(order) == ["base", "derived", "file", "independent", "reference"]
    assert order.index("base") < order.index("derived") < order.index("reference") < order.index("file")
    assert engine.list_stacks() == []
    assert files_under(files) == []


def test_a_file_inside_a_missing_folder_is_created_with_its_folders(engine, files):
    target = files / "a" / "b" / "c.txt"
    resource = local_file(target, "deep")
    resource["properties"]["mode"] = "0600"
    info = engine.create_stack("deep", hot({"f": resource}))
    assert info["stack_status"] == "CREATE_COMPLETE"
    assert target.read_text() == "deep"
    assert oct(target.stat().st_mode & 0o777) == "0o600"
