"""Deleting stacks: reverse dependency order, deletion policies, external resources; conditions."""

from __future__ import annotations

import hashlib

import pytest

from stoker.errors import NotFound, ValidationFailed

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


def test_delete_runs_in_reverse_dependency_order(engine, files):
    chain = hot({
        "a": local_file(files / "a.txt", "a"),
        "b": {**local_file(files / "b.txt", {"get_attr": ["a", "path"]})},
        "c": {**local_file(files / "c.txt", "c"), "depends_on": "b"},
        "side": local_file(files / "side.txt", "side"),
    })
    created = engine.create_stack("chain", chain)
    stack_id = created["id"]
    assert files_under(files) == ["a.txt", "b.txt", "c.txt", "side.txt"]
    before = resource_events(engine, stack_id)

    info = engine.delete_stack("chain")

    assert info["stack_status"] == "DELETE_COMPLETE"
    assert info["deletion_time"] is not None
    assert files_under(files) == []
    events = resource_events(engine, stack_id)[len(before):]
    assert index(events, "c", "DELETE_COMPLETE") < index(events, "b", "DELETE_IN_PROGRESS")
    assert index(events, "b", "DELETE_COMPLETE") < index(events, "a", "DELETE_IN_PROGRESS")
    for name in ("a", "b", "c", "side"):
        assert [s for n, s in events if n == name] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert stack_events(engine, stack_id)[-2:] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    # the stack is gone by name; its name is free again; its events are kept, by id
    with pytest.raises(NotFound):
        engine.show_stack("chain")
    assert engine.list_stacks() == []
    assert [s["stack_name"] for s in engine.list_stacks(show_deleted=True)] == ["chain"]
    again = engine.create_stack("chain", hot({"x": tres()}))
    assert again["id"] != stack_id and again["stack_status"] == "CREATE_COMPLETE"


@pytest.mark.sqlite_only
def test_deleting_a_missing_stack_is_a_clear_error(engine):
    with pytest.raises(NotFound, match="nowhere"):
        engine.delete_stack("nowhere")


def test_deletion_policies_and_external_id(engine, files):
    existing = files / "existing.conf"
    existing.write_text("precious")
    digest = hashlib.sha256(b"precious").hexdigest()
    mtime = existing.stat().st_mtime_ns

    info = engine.create_stack("pol", template("policies.yaml"),
                               parameters={"dir": str(files), "existing": str(existing)})

    assert info["stack_status"] == "CREATE_COMPLETE", info
    found = statuses(engine, "pol")
    assert found["adopted"] in ("ADOPT_COMPLETE", "CHECK_COMPLETE")
    assert physical_ids(engine, "pol")["adopted"] == str(existing)
    outputs = outputs_by_key(info["outputs"])
    assert outputs["adopted_path"]["output_value"] == str(existing)
    assert outputs["adopted_sha256"]["output_value"] == digest
    adopted_events = [s for n, s in resource_events(engine, "pol") if n == "adopted"]
    assert "CREATE_IN_PROGRESS" not in adopted_events
    assert existing.read_text() == "precious"  # never written
    assert files_under(files) == ["deleted.txt", "existing.conf", "retained.txt", "retained_lowercase.txt"]

    stack_id = info["id"]
    assert engine.delete_stack("pol")["stack_status"] == "DELETE_COMPLETE"

    assert files_under(files) == ["existing.conf", "retained.txt", "retained_lowercase.txt"]
    assert existing.read_text() == "precious" and existing.stat().st_mtime_ns == mtime
    events = {n: s for n, s in resource_events(engine, stack_id)}
    assert events["retained"] == events["retained_lowercase"] == events["adopted"] == "DELETE_COMPLETE"


@pytest.mark.sqlite_only
def test_lowercase_retain_needs_2016_10_14(engine, files):
    stack = hot({"f": {**local_file(files / "f.txt"), "deletion_policy": "retain"}}, version="2016-04-08")
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("old", stack)
    assert "resources.f.deletion_policy" in str(caught.value)
    assert engine.list_stacks() == [] and files_under(files) == []


@pytest.mark.sqlite_only
def test_an_update_leaves_an_external_resource_alone(engine, files):
    existing = files / "existing.conf"
    existing.write_text("precious")
    engine.create_stack("pol", template("policies.yaml"),
                        parameters={"dir": str(files), "existing": str(existing)})

    info = engine.update_stack("pol", existing=True)

    assert info["stack_status"] == "UPDATE_COMPLETE", info["stack_status_reason"]
    assert existing.read_text() == "precious"


def test_retain_keeps_a_file_removed_by_an_update(engine, files):
    stack = hot({"kept": {**local_file(files / "kept.txt", "k"), "deletion_policy": "Retain"},
                 "other": local_file(files / "other.txt", "o")})
    engine.create_stack("ret", stack)
    info = engine.update_stack("ret", hot({"other": local_file(files / "other.txt", "o")}))
    assert info["stack_status"] == "UPDATE_COMPLETE"
    assert sorted(statuses(engine, "ret")) == ["other"]
    assert files_under(files) == ["kept.txt", "other.txt"]


# -- conditions -------------------------------------------------------------------------
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_conditions_switch_resources_and_outputs(engine, files, env):
    info = engine.create_stack("cond", template("conditions.yaml"),
                               parameters={"dir": str(files), "env": env})

    assert info["stack_status"] == "CREATE_COMPLETE"
    outputs = outputs_by_key(info["outputs"])
    assert outputs["mode"]["output_value"] == env
    assert outputs["always_path"]["output_value"] == str(files / "always.txt")
    names = set(statuses(engine, "cond"))
    event_names = {n for n, _ in resource_events(engine, "cond")}
    if env == "prod":
        assert names == event_names == {"always", "prod_only"}
        assert (files / "always.txt").read_text() == "production settings"
        assert files_under(files) == ["always.txt", "prod.txt"]
        assert outputs["prod_path"]["output_value"] == str(files / "prod.txt")
        assert outputs["dev_value"]["output_value"] is None
    else:
        assert names == event_names == {"always", "dev_only"}
        assert (files / "always.txt").read_text() == "development settings"
        assert files_under(files) == ["always.txt"]
        assert outputs["prod_path"]["output_value"] is None
        assert outputs["dev_value"]["output_value"] == physical_ids(engine, "cond")["dev_only"]
    for entry in outputs.values():
        assert "output_error" not in entry


def test_an_update_that_turns_a_condition_on_and_off(engine, files):
    engine.create_stack("cond", template("conditions.yaml"), parameters={"dir": str(files)})
    info = engine.update_stack("cond", existing=True, parameters={"env": "prod"})
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert set(statuses(engine, "cond")) == {"always", "prod_only"}
    assert (files / "always.txt").read_text() == "production settings"
    assert files_under(files) == ["always.txt", "prod.txt"]

    info = engine.update_stack("cond", existing=True, parameters={"env": "dev"})
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert set(statuses(engine, "cond")) == {"always", "dev_only"}
    assert files_under(files) == ["always.txt"]
    assert outputs_by_key(info["outputs"])["prod_path"]["output_value"] is None


@pytest.mark.sqlite_only
def test_delete_removes_the_empty_directories_the_files_were_put_in(engine, files):
    (files / "kept").mkdir()
    engine.create_stack("dirs", hot({
        "deep": local_file(files / "new" / "deeper" / "a.txt", "a"),
        "beside": local_file(files / "kept" / "sub" / "b.txt", "b"),
    }))
    (files / "kept" / "mine.txt").write_text("not the stack's")
    assert engine.delete_stack("dirs")["stack_status"] == "DELETE_COMPLETE"
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*")) == ["kept", "kept/mine.txt"]
