"""Updating stacks: untouched, in place, replaced, added, removed; dry runs; rollback."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed
from stoker.template.template import Template

from .helpers import (
    files_under,
    hot,
    index,
    local_file,
    outputs_by_key,
    physical_ids,
    resource_events,
    resources_by_name,
    stack_events,
    statuses,
    template,
    tres,
)

V1, V2 = template("update_v1.yaml"), template("update_v2.yaml")


def _create_v1(engine, files, name="site", **params):
    info = engine.create_stack(name, V1, parameters={"dir": str(files), **params})
    assert info["stack_status"] == "CREATE_COMPLETE", info
    return info


def _loaded(path):
    """A template file as Stoker stores it."""
    return Template.from_file(path).data


def _new_events(engine, name, before):
    return resource_events(engine, name)[len(before):]


def test_update_touches_only_what_changed(engine, files):
    _create_v1(engine, files)
    ids = physical_ids(engine, "site")
    before = resource_events(engine, "site")

    info = engine.update_stack("site", V2, parameters={"dir": str(files), "value": "two"})

    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert info["stack_status_reason"] == "Stack UPDATE completed successfully"
    events = _new_events(engine, "site", before)
    touched = {name for name, _ in events}
    # untouched: no event, same physical resource, same state
    assert "untouched" not in touched
    now = resources_by_name(engine, "site")
    assert now["untouched"]["physical_resource_id"] == ids["untouched"]
    assert now["untouched"]["resource_status"] == "CREATE_COMPLETE"
    # in place: same file, new content
    assert now["in_place"]["resource_status"] == "UPDATE_COMPLETE"
    assert now["in_place"]["physical_resource_id"] == ids["in_place"]
    assert (files / "in_place.txt").read_text() == "two changed"
    assert [s for n, s in events if n == "in_place"] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    # replaced (path changes): the new file first, then the old one deleted
    assert now["moved"]["physical_resource_id"] == str(files / "new_place.txt") != ids["moved"]
    assert now["moved"]["resource_status"] == "CREATE_COMPLETE"
    assert index(events, "moved", "CREATE_COMPLETE") < index(events, "moved", "DELETE_IN_PROGRESS")
    deleted = [e for e in engine.events("site") if e["resource_name"] == "moved"
               and e["resource_status"] == "DELETE_COMPLETE"]
    assert [e["physical_resource_id"] for e in deleted] == [ids["moved"]]
    # replaced (a property that cannot change): a new random string
    assert now["token"]["physical_resource_id"] != ids["token"]
    # removed and added
    assert "removed" not in now
    assert [s for n, s in events if n == "removed"] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert now["added"]["resource_status"] == "CREATE_COMPLETE"
    # the resource list holds each resource once: the replaced ones are gone
    names = sorted(r["resource_name"] for r in engine.resources("site"))
    assert names == ["added", "in_place", "moved", "token", "untouched"]
    assert files_under(files) == ["added.txt", "in_place.txt", "new_place.txt", "untouched.txt"]
    outputs = outputs_by_key(info["outputs"])
    assert outputs["moved_path"]["output_value"] == str(files / "new_place.txt")
    assert stack_events(engine, "site")[-2:] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    assert engine.template("site") == _loaded(V2)


def test_updating_to_the_same_template_changes_nothing(engine, files):
    _create_v1(engine, files)
    ids = physical_ids(engine, "site")
    before = resource_events(engine, "site")

    info = engine.update_stack("site", V1, parameters={"dir": str(files)})

    assert info["stack_status"] == "UPDATE_COMPLETE"
    assert _new_events(engine, "site", before) == []
    assert physical_ids(engine, "site") == ids


@pytest.mark.sqlite_only
def test_an_unchanged_test_resource_is_not_updated(engine):
    stack = hot({"same": tres(value="x"), "other": tres(value="a")})
    engine.create_stack("same", stack)
    before = resource_events(engine, "same")
    stack["resources"]["other"]["properties"]["value"] = "b"

    plan = engine.update_stack("same", stack, dry_run=True)
    assert [e["resource_name"] for e in plan["unchanged"]] == ["same"]
    engine.update_stack("same", stack)

    assert {n for n, _ in _new_events(engine, "same", before)} == {"other"}


def test_test_resource_in_place_and_replacement(engine):
    stack = hot({"inplace": tres(value="one"), "replaced": tres(value="one", update_replace=True)},
                outputs={"ref": {"value": {"get_resource": "replaced"}}})
    engine.create_stack("tr", stack)
    ids = physical_ids(engine, "tr")
    stack["resources"]["inplace"]["properties"]["value"] = "two"
    stack["resources"]["replaced"]["properties"]["value"] = "two"

    info = engine.update_stack("tr", stack)

    assert info["stack_status"] == "UPDATE_COMPLETE"
    now = resources_by_name(engine, "tr")
    assert now["inplace"]["resource_status"] == "UPDATE_COMPLETE"
    assert now["inplace"]["physical_resource_id"] == ids["inplace"]
    assert now["replaced"]["resource_status"] == "CREATE_COMPLETE"
    assert now["replaced"]["physical_resource_id"] != ids["replaced"]
    assert outputs_by_key(info["outputs"])["ref"]["output_value"] == now["replaced"]["physical_resource_id"]
    assert len(engine.resources("tr")) == 2
    replaced_events = [(e["resource_status"], e["physical_resource_id"]) for e in engine.events("tr")
                       if e["resource_name"] == "replaced"]
    assert ("DELETE_COMPLETE", ids["replaced"]) in replaced_events
    assert ("CREATE_COMPLETE", now["replaced"]["physical_resource_id"]) in replaced_events


def test_dry_run_says_what_would_change_and_changes_nothing(engine, files):
    _create_v1(engine, files)
    before = (resource_events(engine, "site"), physical_ids(engine, "site"), files_under(files),
              engine.template("site"), engine.show_stack("site")["parameters"])

    plan = engine.update_stack("site", V2, parameters={"dir": str(files), "value": "two"}, dry_run=True)

    def names(change):
        return sorted(e["resource_name"] for e in plan[change])

    assert names("added") == ["added"]
    assert names("deleted") == ["removed"]
    assert "token" in names("replaced")
    token = next(e for e in plan["replaced"] if e["resource_name"] == "token")
    assert "length" in token["reason"]
    assert "in_place" in names("updated")
    in_place = next(e for e in plan["updated"] if e["resource_name"] == "in_place")
    assert "content" in in_place["reason"]
    assert names("unchanged") == ["untouched"]

    after = (resource_events(engine, "site"), physical_ids(engine, "site"), files_under(files),
             engine.template("site"), engine.show_stack("site")["parameters"])
    assert after == before
    assert engine.show_stack("site")["stack_status"] == "CREATE_COMPLETE"


@pytest.mark.sqlite_only
def test_dry_run_says_which_readers_of_a_changing_resource_may_change(engine, files):
    def stack(value):
        return hot({
            "base": local_file(files / f"{value}.txt", value),      # another path: replaced
            "tuned": tres(value=value),                              # updated in place
            "names_base": tres(value={"get_resource": "base"}),
            "reads_base": tres(value={"get_attr": ["base", "path"]}),
            "reads_tuned": tres(value={"get_attr": ["tuned", "output"]}),
            "names_tuned": tres(value={"get_resource": "tuned"}),    # same id after an in-place update
            "reads_reader": tres(value={"get_attr": ["reads_base", "output"]}),
            "after_only": {**tres(value="x"), "depends_on": "base"},  # ordered after, reads nothing
        })

    engine.create_stack("knock", stack("one"))
    plan = engine.update_stack("knock", stack("two"), dry_run=True)

    reasons = {e["resource_name"]: e.get("reason") for e in plan["updated"]}
    assert [e["resource_name"] for e in plan["replaced"]] == ["base"]
    assert reasons == {
        "names_base": "may change: it reads get_resource base, and base is replaced",
        "reads_base": "may change: it reads get_attr base.path, and base is replaced",
        "reads_reader": "may change: it reads get_attr reads_base.output, and reads_base changes",
        "reads_tuned": "may change: it reads get_attr tuned.output, and tuned changes",
        "tuned": "changes value",
    }
    assert sorted(e["resource_name"] for e in plan["unchanged"]) == ["after_only", "names_tuned"]

    # and the update does change them
    engine.update_stack("knock", stack("two"))
    outputs = {n: engine.resource("knock", n)["attributes"].get("output") for n in ("reads_base", "reads_reader")}
    assert outputs == {"reads_base": str(files / "two.txt"), "reads_reader": str(files / "two.txt")}


@pytest.mark.sqlite_only
def test_dry_run_reports_a_path_change_as_a_replacement(engine, files):
    _create_v1(engine, files)
    plan = engine.update_stack("site", V2, parameters={"dir": str(files)}, dry_run=True)
    moved = [e for e in plan["replaced"] if e["resource_name"] == "moved"]
    assert moved and "path" in moved[0]["reason"]


def test_existing_keeps_the_template_and_merges_the_parameters(engine, files):
    _create_v1(engine, files, value="one")
    before = physical_ids(engine, "site")
    template_before = engine.template("site")

    info = engine.update_stack("site", existing=True, parameters={"value": "two"})

    assert info["stack_status"] == "UPDATE_COMPLETE"
    assert engine.template("site") == template_before
    shown = engine.show_stack("site")["parameters"]
    assert shown["value"] == "two" and shown["dir"] == str(files)
    assert (files / "in_place.txt").read_text() == "two"
    assert physical_ids(engine, "site") == before
    # without --existing, a template is needed
    with pytest.raises(ValidationFailed, match="existing"):
        engine.update_stack("site", parameters={"value": "three"})


def test_an_immutable_parameter_cannot_change(engine, files):
    stack = hot({"f": {"type": "Stoker::Local::File",
                       "properties": {"path": {"get_param": "path"}, "content": {"get_param": "content"}}}},
                parameters={"path": {"type": "string", "immutable": True},
                            "content": {"type": "string", "default": "a"}})
    engine.create_stack("imm", stack, parameters={"path": str(files / "one.txt")})
    before = (resource_events(engine, "imm"), engine.show_stack("imm"))

    with pytest.raises(ValidationFailed) as caught:
        engine.update_stack("imm", existing=True, parameters={"path": str(files / "two.txt")})

    assert "immutable" in str(caught.value) and "path" in str(caught.value)
    after = (resource_events(engine, "imm"), engine.show_stack("imm"))
    assert after == before
    assert after[1]["stack_status"] == "CREATE_COMPLETE"
    assert files_under(files) == ["one.txt"]
    # other parameters still may change
    engine.update_stack("imm", existing=True, parameters={"content": "b"})
    assert (files / "one.txt").read_text() == "b"


def test_a_failed_update_rolls_back_to_the_previous_template_and_parameters(engine, files):
    v1 = hot({"config": {"type": "Stoker::Local::File",
                         "properties": {"path": str(files / "config.txt"), "content": {"get_param": "value"}}},
              "server": tres(value={"get_param": "value"}, update_replace=True),
              "keep": {"type": "OS::Heat::None"}},
             parameters={"value": {"type": "string"}},
             outputs={"server": {"value": {"get_resource": "server"}}})
    engine.create_stack("rb", v1, parameters={"value": "one"}, disable_rollback=False)
    ids = physical_ids(engine, "rb")
    v2 = hot({**v1["resources"], "boom": {**tres(fail=True), "depends_on": ["server", "config"]},
              "extra": {"type": "Stoker::Local::File",
                        "properties": {"path": str(files / "extra.txt"), "content": "x"}}},
             parameters=v1["parameters"], outputs=v1["outputs"])

    info = engine.update_stack("rb", v2, parameters={"value": "two"})

    assert info["stack_status"] == "ROLLBACK_COMPLETE", info
    assert stack_events(engine, "rb")[-4:] == ["UPDATE_IN_PROGRESS", "UPDATE_FAILED",
                                               "ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]
    assert engine.template("rb") == v1
    assert engine.show_stack("rb")["parameters"]["value"] == "one"
    # what the update created is gone, what it changed is back
    assert sorted(statuses(engine, "rb")) == ["config", "keep", "server"]
    assert files_under(files) == ["config.txt"]
    assert (files / "config.txt").read_text() == "one"
    # the replaced server is restored (same physical id), not re-created
    now = physical_ids(engine, "rb")
    assert now["server"] == ids["server"]
    assert now["keep"] == ids["keep"]
    assert len(engine.resources("rb")) == 3
    assert outputs_by_key(engine.outputs("rb"))["server"]["output_value"] == ids["server"]
    # and the stack can be updated again
    assert engine.update_stack("rb", existing=True, parameters={"value": "three"})["stack_status"] \
        == "UPDATE_COMPLETE"
    assert (files / "config.txt").read_text() == "three"


def test_a_failed_update_without_rollback_can_be_fixed_by_another(engine, files):
    _create_v1(engine, files)
    broken = _loaded(V2)
    broken["resources"]["boom"] = {**tres(fail=True), "depends_on": "in_place"}

    info = engine.update_stack("site", broken, parameters={"dir": str(files)}, disable_rollback=True)
    assert info["stack_status"] == "UPDATE_FAILED"
    assert "Test Resource failed boom" in info["stack_status_reason"]
    assert statuses(engine, "site")["boom"] == "CREATE_FAILED"

    info = engine.update_stack("site", V2, parameters={"dir": str(files)})
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert "boom" not in statuses(engine, "site")
    assert set(statuses(engine, "site").values()) <= {"CREATE_COMPLETE", "UPDATE_COMPLETE"}
    assert files_under(files) == ["added.txt", "in_place.txt", "new_place.txt", "untouched.txt"]


def test_a_resource_whose_update_failed_is_replaced_by_the_next_update(engine):
    # as Heat: a *_FAILED resource is replaced, even when its definition did not change
    stack = hot({"server": tres(value="one")})
    engine.create_stack("rf", stack)
    original = physical_ids(engine, "rf")["server"]
    stack["resources"]["server"]["properties"].update(value="two", fail=True)
    assert engine.update_stack("rf", stack)["stack_status"] == "UPDATE_FAILED"
    assert statuses(engine, "rf")["server"] == "UPDATE_FAILED"

    again = engine.update_stack("rf", stack)  # the same failing definition: tried again, not skipped
    assert again["stack_status"] == "UPDATE_FAILED", again
    assert "Test Resource failed server" in again["stack_status_reason"]

    stack["resources"]["server"]["properties"].update(fail=False)
    info = engine.update_stack("rf", stack)
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert statuses(engine, "rf") == {"server": "CREATE_COMPLETE"}
    assert physical_ids(engine, "rf")["server"] != original


@pytest.mark.sqlite_only
def test_rollback_restores_the_original_when_its_replacement_fails(engine):
    stack = hot({"server": tres(value="one", update_replace=True)},
                outputs={"server": {"value": {"get_resource": "server"}}})
    engine.create_stack("rr", stack, disable_rollback=False)
    original = physical_ids(engine, "rr")["server"]
    stack["resources"]["server"]["properties"].update(value="two", fail=True)

    info = engine.update_stack("rr", stack)

    assert info["stack_status"] == "ROLLBACK_COMPLETE"
    assert physical_ids(engine, "rr")["server"] == original
    created = [e for e in resource_events(engine, "rr") if e == ("server", "CREATE_COMPLETE")]
    assert len(created) == 1  # the original's create only: nothing re-created


def test_a_replacement_that_fails_without_rollback_keeps_the_original_until_fixed(engine):
    stack = hot({"server": tres(value="one", update_replace=True)})
    engine.create_stack("rr", stack)
    original = physical_ids(engine, "rr")["server"]
    stack["resources"]["server"]["properties"].update(value="two", fail=True)
    assert engine.update_stack("rr", stack)["stack_status"] == "UPDATE_FAILED"
    # the original is not deleted while its replacement failed
    deleted = [e for e in engine.events("rr") if e["physical_resource_id"] == original
               and e["resource_status"].startswith("DELETE")]
    assert deleted == []

    stack["resources"]["server"]["properties"].update(value="three", fail=False)
    info = engine.update_stack("rr", stack)
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert physical_ids(engine, "rr")["server"] != original
    assert len(engine.resources("rr")) == 1
    assert set(statuses(engine, "rr").values()) == {"CREATE_COMPLETE"}


def test_a_manual_rollback_after_a_failed_replacement_keeps_the_original(engine):
    # as Heat's test_stack_update_replace_manual_rollback: the original was never replaced
    first = hot({"server": tres(update_replace_value="1")})
    engine.create_stack("rr", first)
    original = physical_ids(engine, "rr")["server"]
    failing = hot({"server": tres(update_replace_value="2", fail=True)})
    assert engine.update_stack("rr", failing)["stack_status"] == "UPDATE_FAILED"

    info = engine.update_stack("rr", first)

    assert info["stack_status"] == "UPDATE_COMPLETE", info["stack_status_reason"]
    assert physical_ids(engine, "rr")["server"] == original
    assert len(engine.resources("rr")) == 1
    created = [e for e in resource_events(engine, "rr") if e == ("server", "CREATE_COMPLETE")]
    assert len(created) == 1


@pytest.mark.sqlite_only
def test_rollback_keeps_the_resources_the_update_removed(engine, files):
    v1 = hot({"config": {"type": "Stoker::Local::File",
                         "properties": {"path": str(files / "config.txt"), "content": "c"}},
              "server": tres(value="s"), "keep": {"type": "OS::Heat::None"}})
    engine.create_stack("rm", v1, disable_rollback=False)
    ids = physical_ids(engine, "rm")
    v2 = hot({"keep": {"type": "OS::Heat::None"}, "boom": tres(fail=True, wait_secs=0.2)})

    info = engine.update_stack("rm", v2)

    assert info["stack_status"] == "ROLLBACK_COMPLETE"
    assert physical_ids(engine, "rm") == ids
    assert (files / "config.txt").read_text() == "c"


def test_a_type_change_replaces_the_resource(engine, files):
    stack = hot({"thing": {"type": "OS::Heat::None"},
                 "after": {"type": "Stoker::Local::File", "depends_on": "thing",
                           "properties": {"path": str(files / "after.txt"), "content": "x"}}})
    engine.create_stack("ty", stack)
    ids = physical_ids(engine, "ty")
    stack["resources"]["thing"] = tres(value="now a test resource")

    info = engine.update_stack("ty", stack)

    assert info["stack_status"] == "UPDATE_COMPLETE", info
    rows = {r["resource_name"]: r for r in engine.resources("ty")}
    assert rows["thing"]["resource_type"] == "OS::Heat::TestResource"
    assert rows["thing"]["physical_resource_id"] != ids["thing"]
    assert rows["after"]["physical_resource_id"] == ids["after"]
    assert len(rows) == 2 and files_under(files) == ["after.txt"]


def test_removing_a_chain_deletes_dependents_first(engine, files):
    stack = hot({"base": {"type": "Stoker::Local::File",
                          "properties": {"path": str(files / "base.txt"), "content": "b"}},
                 "top": {"type": "Stoker::Local::File",
                         "properties": {"path": str(files / "top.txt"), "content": {"get_attr": ["base", "path"]}}},
                 "stay": {"type": "OS::Heat::None"}})
    engine.create_stack("chain", stack)
    before = resource_events(engine, "chain")

    info = engine.update_stack("chain", hot({"stay": {"type": "OS::Heat::None"}}))

    assert info["stack_status"] == "UPDATE_COMPLETE"
    events = _new_events(engine, "chain", before)
    assert index(events, "top", "DELETE_COMPLETE") < index(events, "base", "DELETE_IN_PROGRESS")
    assert files_under(files) == [] and list(statuses(engine, "chain")) == ["stay"]
