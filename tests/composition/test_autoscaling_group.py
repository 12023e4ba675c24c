"""``OS::Heat::AutoScalingGroup`` and ``OS::Heat::ScalingPolicy``, end to end: create,
attributes, resizes by policy signals (bounds, cooldown, each adjustment type), stack
updates (resize keeps members, a new member definition rolls in batches), delete."""

from __future__ import annotations

import re

import pytest
import yaml

from stoker.errors import ValidationFailed
from stoker.resources.builtin.scaling_policy import SECRET_KEY
from stoker.secretbox import MARK
from stoker.store.locks import new_engine_id
from stoker.template.template import Template

from .conftest import hot, load, messages, outputs

GROUP_OUTPUTS = {
    "size": {"value": {"get_attr": ["g", "current_size"]}},
    "values": {"value": {"get_attr": ["g", "outputs_list", "value"]}},
    "by_name": {"value": {"get_attr": ["g", "outputs", "value"]}},
    "refs": {"value": {"get_attr": ["g", "refs"]}},
    "refs_map": {"value": {"get_attr": ["g", "refs_map"]}},
    "first": {"value": {"get_attr": ["g", "resource.0"]}},
    "second_value": {"value": {"get_attr": ["g", "resource.1.value"]}},
    "second_path": {"value": {"get_attr": ["g", "resource.1", "value"]}},
}


def group_props(min_size=2, max_size=5, desired=3, value="member", **extra) -> dict:
    props = {"min_size": min_size, "max_size": max_size,
             "resource": {"type": "OS::Heat::Value", "properties": {"value": value}}, **extra}
    if desired is not None:
        props["desired_capacity"] = desired
    return props


def policy(adjustment, kind="change_in_capacity", **extra) -> dict:
    return {"type": "OS::Heat::ScalingPolicy",
            "properties": {"auto_scaling_group_id": {"get_resource": "g"}, "adjustment_type": kind,
                           "scaling_adjustment": adjustment, **extra}}


def stack(policies: dict | None = None, **props) -> dict:
    return hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": group_props(**props)},
                **(policies or {})}, outputs=GROUP_OUTPUTS)


def member_names(engine, name="s") -> list[str]:
    """The members, oldest first (the order of ``refs``)."""
    rows = {r["physical_resource_id"]: r["resource_name"]
            for r in engine.resources(name, nested_depth=1) if r.get("parent_resource") == "g"}
    return [rows[ref] for ref in outputs(engine.outputs(name))["refs"]]


def signal_events(engine, name="s") -> list[tuple[str, str, str]]:
    return [(e["resource_name"], e["resource_status"], e["resource_status_reason"])
            for e in engine.events(name) if e["resource_status"].startswith("SIGNAL")]


def created(engine, template, name="s") -> dict:
    result = engine.create_stack(name, template)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    return outputs(result)


def test_create_with_desired_capacity_and_the_attributes(engine):
    got = created(engine, stack())
    rows = {r["resource_name"]: r for r in engine.resources("s", nested_depth=1) if r.get("parent_resource") == "g"}
    assert len(rows) == 3 and all(re.fullmatch(r"[a-z2-7]{12}", n) for n in rows)
    assert got["size"] == 3
    assert got["values"] == ["member"] * 3
    assert got["by_name"] == {n: "member" for n in rows}
    ids = {n: r["physical_resource_id"] for n, r in rows.items()}
    assert got["refs_map"] == ids and sorted(got["refs"]) == sorted(ids.values())
    assert got["first"] == got["refs"][0]
    assert got["second_value"] == got["second_path"] == "member"
    group = engine.resource("s", "g")
    assert group["physical_resource_id"] == engine.store.children(engine.get_record("s").id)[0].id
    assert group["metadata"]["scaling_in_progress"] is False
    assert list(group["metadata"]["cooldown_end"].values()) == ["ExactCapacity : 3"]


def test_without_desired_capacity_the_group_starts_at_min_size(engine):
    assert created(engine, stack(desired=None))["size"] == 2


def test_change_in_capacity_signals_grow_to_max_size_and_shrink_to_min_size(engine):
    created(engine, stack({"up": policy(1), "down": policy(-1)}, cooldown=0))
    sizes = []
    for _ in range(3):
        engine.signal("s", "up")
        sizes.append(outputs(engine.outputs("s"))["size"])
    assert sizes == [4, 5, 5]
    # the signal that changed nothing left no event, as in Heat
    assert signal_events(engine) == [("up", "SIGNAL_COMPLETE", "No signal details provided")] * 2
    for _ in range(4):
        engine.signal("s", "down", {"previous": "ok", "current": "alarm", "reason": "cpu high"})
    assert outputs(engine.outputs("s"))["size"] == 2
    assert signal_events(engine)[-1] == ("down", "SIGNAL_COMPLETE",
                                         "alarm state changed from ok to alarm (cpu high)")
    assert len(signal_events(engine)) == 5


def test_a_resize_keeps_the_members_and_removes_the_oldest(engine):
    created(engine, stack({"up": policy(2), "two": policy(2, "exact_capacity")}, cooldown=0))
    first = member_names(engine)
    engine.signal("s", "up")
    grown = member_names(engine)
    assert grown[:3] == first and len(grown) == 5
    engine.signal("s", "two")
    assert member_names(engine) == grown[3:]


def test_exact_and_percent_adjustments(engine):
    created(engine, stack({"five": policy(5, "exact_capacity"),
                           "half_off": policy(-50, "percent_change_in_capacity"),
                           "tenth_at_least_two": policy(10, "percent_change_in_capacity", min_adjustment_step=2)},
                          min_size=1, max_size=10, cooldown=0))
    engine.signal("s", "five")
    assert outputs(engine.outputs("s"))["size"] == 5
    engine.signal("s", "half_off")  # -2.5 members: -2
    assert outputs(engine.outputs("s"))["size"] == 3
    engine.signal("s", "tenth_at_least_two")  # 0.3 member: 1, but at least 2
    assert outputs(engine.outputs("s"))["size"] == 5


def test_a_signal_in_the_cooldown_changes_nothing_and_records_nothing(engine):
    created(engine, stack({"up": policy(1, cooldown=0)}, cooldown=60))
    before = member_names(engine)
    engine.signal("s", "up")
    assert member_names(engine) == before
    assert signal_events(engine) == []
    metadata = engine.resource("s", "g")["metadata"]
    assert metadata["scaling_in_progress"] is False


def test_the_policys_cooldown_starts_after_its_scaling(engine):
    created(engine, stack({"up": policy(1, cooldown=600)}, cooldown=0))
    engine.signal("s", "up")
    engine.signal("s", "up")
    assert outputs(engine.outputs("s"))["size"] == 4
    assert list(engine.resource("s", "g")["metadata"]["cooldown_end"].values()) == ["change_in_capacity : 1"]


def test_update_resizes_to_desired_capacity_and_keeps_members(engine):
    created(engine, stack({"up": policy(1)}, cooldown=0))
    engine.signal("s", "up")
    four = member_names(engine)
    # an update that leaves desired_capacity out keeps the size the policies made
    result = engine.update_stack("s", stack({"up": policy(1)}, cooldown=0, desired=None, max_size=6))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert member_names(engine) == four
    result = engine.update_stack("s", stack({"up": policy(1)}, cooldown=0, desired=2, max_size=6))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert member_names(engine) == four[2:]


def nested_updates(engine, name="s") -> int:
    child = engine.store.children(engine.get_record(name).id)[0]
    return sum(e["resource_status_reason"] == "Stack UPDATE started" and e["resource_name"] == child.name
               for e in engine.events(name, nested_depth=1))


def test_a_new_member_definition_rolls_in_batches(engine):
    rolling = {"max_batch_size": 2, "min_in_service": 0}
    created(engine, stack(desired=4, rolling_updates=rolling))
    before = member_names(engine)
    result = engine.update_stack("s", stack(desired=4, rolling_updates=rolling, value="v2"))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert outputs(result)["values"] == ["v2"] * 4
    assert sorted(member_names(engine)) == sorted(before)
    assert nested_updates(engine) == 3  # two batches of two, then the resize


def test_a_rolling_update_keeps_min_in_service_by_growing_first(engine):
    rolling = {"max_batch_size": 2, "min_in_service": 4}
    created(engine, stack(desired=4, max_size=6, rolling_updates=rolling))
    a, b, c, d = member_names(engine)
    result = engine.update_stack("s", stack(desired=4, max_size=6, rolling_updates=rolling, value="v2"))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    after = member_names(engine)
    # two new members first (six serve), then the two oldest change, then the two left go
    assert len(after) == 4 and after[2:] == [a, b] and not {c, d} & set(after)
    assert outputs(result)["values"] == ["v2"] * 4
    assert nested_updates(engine) == 4


def test_members_from_a_provider_template(engine, tree):
    root = tree({
        "top.yaml": hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 3, "desired_capacity": 2, "resource": {"type": "randomstr.yaml"}}},
            "up": policy(1)},
            outputs={"all": {"value": {"get_attr": ["g", "outputs_list", "random_str"]}},
                     "first": {"value": {"get_attr": ["g", "resource.0.random_str"]}}}),
        "randomstr.yaml": hot({"r": {"type": "OS::Heat::RandomString"}},
                              outputs={"random_str": {"value": {"get_attr": ["r", "value"]}}}),
    })
    template, _ = load(root / "top.yaml")
    got = created(engine, template)
    assert len(got["all"]) == 2 and all(len(v) == 32 for v in got["all"])
    assert got["first"] == got["all"][0]
    engine.signal("s", "up")
    grown = outputs(engine.outputs("s"))["all"]
    assert grown[:2] == got["all"] and len(grown) == 3


def test_delete_removes_the_members(engine):
    created(engine, stack())
    child = engine.store.children(engine.get_record("s").id)[0]
    engine.delete_stack("s")
    assert engine.store.get_stack(child.id, "default", show_deleted=True).deleted_at is not None


def test_the_policy_keeps_its_secret_sealed_and_gives_urls(engine):
    created(engine, hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": group_props()},
                         "up": policy(1)},
                        outputs={"alarm": {"value": {"get_attr": ["up", "alarm_url"]}},
                                 "signal": {"value": {"get_attr": ["up", "signal_url"]}}}))
    got = outputs(engine.outputs("s"))
    stack_id = engine.get_record("s").id
    assert got["signal"] == f"stoker://stacks/s/{stack_id}/resources/up/signal"
    assert re.fullmatch(re.escape(got["signal"]) + r"\?signature=[0-9a-f]{64}", got["alarm"])
    row = next(r for r in engine.store.get_resources(stack_id) if r.name == "up")
    assert set(row.data[SECRET_KEY]) == {MARK}


def test_the_cli_signals_a_policy(engine, cli):
    created(engine, stack({"up": policy(1)}, cooldown=0))
    done = cli("stack", "resource", "signal", "s", "up")
    assert done.code == 0, done.output
    assert outputs(engine.outputs("s"))["size"] == 4


@pytest.mark.parametrize("props, place, text", [
    (group_props(min_size=4, max_size=2, desired=None), "resources.g.properties.min_size",
     "MinSize can not be greater than MaxSize"),
    (group_props(desired=9), "resources.g.properties.desired_capacity", "DesiredCapacity must be between"),
    (group_props(max_size=-1), "resources.g.properties.max_size", "-1 is out of range"),
    ({**group_props(), "resource": {"properties": {}}}, "resources.g.properties.resource.type", "needs a type"),
    # the member is checked as its nested stack will check it, as Heat validates a group of one
    ({**group_props(), "resource": {"type": "Bogus::Type"}}, "resources.g.properties.resource.type",
     "The Resource Type (Bogus::Type) could not be found."),
    ({**group_props(), "resource": {"type": "OS::Heat::Value", "properties": {"value": 1, "colour": 2}}},
     "resources.g.properties.resource.properties.colour", "Unknown Property colour"),
])
def test_invalid_groups_are_refused_with_the_place(engine, props, place, text):
    with pytest.raises(ValidationFailed) as exc:
        engine.validate_template(hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": props}}))
    assert place in messages(exc) and text in messages(exc)


@pytest.mark.parametrize("extra, place, text", [
    ({"min_adjustment_step": 2}, "resources.p:", "min_adjustment_step property should only be specified for "
                                                 "adjustment_type with value percent_change_in_capacity"),
    ({"adjustment_type": "more"}, "resources.p.properties.adjustment_type:", '"more" is not an allowed value'),
])
def test_invalid_policies_are_refused(engine, extra, place, text):
    p = policy(1)
    p["properties"].update(extra)
    with pytest.raises(ValidationFailed) as exc:
        engine.validate_template(hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": group_props()},
                                      "p": p}))
    assert f"{place} {text}" in messages(exc)


def test_update_preview_shows_the_members_that_change(engine):
    created(engine, stack(desired=2))
    names = member_names(engine)
    plan = engine.update_stack("s", stack(desired=3, value="v2"), dry_run=True, show_nested=True)
    nested = {kind: sorted(e["resource_name"] for e in entries if e.get("parent_resource") == "g")
              for kind, entries in plan.items()}
    assert nested["updated"] == sorted(names)
    assert len(nested["added"]) == 1 and nested.get("deleted", []) == []
    unchanged = engine.update_stack("s", stack(desired=2), dry_run=True, show_nested=True)
    kept = [e["resource_name"] for e in unchanged["unchanged"] if e.get("parent_resource") == "g"]
    assert sorted(kept) == sorted(names)


def test_the_aws_policy_adjusts_the_group_and_its_reference_is_the_alarm_url(engine):
    aws = {"type": "AWS::AutoScaling::ScalingPolicy",
           "properties": {"AutoScalingGroupName": {"get_resource": "g"}, "AdjustmentType": "ExactCapacity",
                          "ScalingAdjustment": 4}}
    got = created(engine, hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": group_props(cooldown=0)},
                               "aws": aws},
                              outputs={"ref": {"value": {"get_resource": "aws"}},
                                       "url": {"value": {"get_attr": ["aws", "AlarmUrl"]}},
                                       "size": GROUP_OUTPUTS["size"]}))
    stack_id = engine.get_record("s").id
    assert got["ref"] == got["url"]
    assert got["url"].startswith(f"stoker://stacks/s/{stack_id}/resources/aws/signal?signature=")
    engine.signal("s", "aws")
    assert outputs(engine.outputs("s"))["size"] == 4
    aws["properties"].update(AdjustmentType="ChangeInCapacity", MinAdjustmentStep=1)
    with pytest.raises(ValidationFailed) as exc:
        engine.validate_template(hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": group_props()},
                                      "aws": aws}))
    assert ("MinAdjustmentStep property should only be specified for AdjustmentType with value "
            "PercentChangeInCapacity") in messages(exc)


def test_a_rolling_update_whose_pauses_outlast_the_timeout_is_refused(engine):
    rolling = {"max_batch_size": 1, "pause_time": 30}
    result = engine.create_stack("s", stack(desired=3, rolling_updates=rolling), timeout_mins=1)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    before = member_names(engine)
    result = engine.update_stack("s", stack(desired=3, rolling_updates=rolling, value="v2"))
    assert result["stack_status"] == "UPDATE_FAILED"
    assert "The current update policy will result in stack update timeout." in result["stack_status_reason"]
    assert member_names(engine) == before


def test_a_change_only_inside_the_member_template_is_applied_on_update(engine):
    top = yaml.safe_dump(hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 3, "desired_capacity": 2, "resource": {"type": "m.yaml"}}}},
        outputs={"values": {"value": {"get_attr": ["g", "outputs_list", "v"]}}, "refs": GROUP_OUTPUTS["refs"]}))

    def member(length: int) -> str:
        return yaml.safe_dump(hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": length}}},
                                  outputs={"v": {"value": {"get_attr": ["r", "value"]}}}))

    got = created(engine, Template.from_text(top, "top.yaml", files={"m.yaml": member(5)}))
    assert [len(v) for v in got["values"]] == [5, 5]
    result = engine.update_stack("s", Template.from_text(top, "top.yaml", files={"m.yaml": member(9)}))
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert [len(v) for v in outputs(result)["values"]] == [9, 9]
    assert outputs(result)["refs"] == got["refs"]  # the same members (their nested stacks), updated


def test_a_signal_while_another_action_holds_the_stack_is_ignored(engine):
    created(engine, stack({"up": policy(1)}, cooldown=0))
    stack_id = engine.get_record("s").id
    other = new_engine_id()
    engine.store.acquire_lock(stack_id, other, "UPDATE")
    engine.signal("s", "up")
    assert outputs(engine.outputs("s"))["size"] == 3 and signal_events(engine) == []
    engine.store.release_lock(stack_id, other)
    engine.signal("s", "up")
    assert outputs(engine.outputs("s"))["size"] == 4
