"""``Engine.begin``: a stack action under way in a thread, its ``Started`` handle returned once the
action shows (the stack row stored, its state IN_PROGRESS), its end and outputs through ``wait``."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed

SLOW = {"heat_template_version": "2018-08-31",
        "resources": {"slow": {"type": "OS::Heat::TestResource",
                               "properties": {"value": "made", "action_wait_secs": {"create": 1, "delete": 0}}}},
        "outputs": {"made": {"value": {"get_attr": ["slow", "output"]}}}}


def test_begin_returns_while_the_create_runs_and_wait_gives_its_end(engine):
    started = engine.begin("create", "s", SLOW)
    assert started.id == engine.get_record("s").id
    assert started.state()["stack_status"] == "CREATE_IN_PROGRESS"
    ended = started.wait()
    assert ended["stack_status"] == "CREATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in ended["outputs"]} == {"made": "made"}
    deleted = engine.begin("delete", "s").wait()
    assert deleted["stack_status"] == "DELETE_COMPLETE"


def test_a_refusal_before_the_action_shows_is_raised_by_begin(engine):
    with pytest.raises(ValidationFailed):
        engine.begin("create", "bad", {"heat_template_version": "2018-08-31",
                                       "resources": {"x": {"type": "OS::Heat::Nonexistent"}}})
    assert engine.list_stacks() == []


def test_a_starter_that_drops_the_result_gets_none_and_wait_still_reads_the_end(engine):
    """The API drops what a create returns (it answers with the id): the action does not re-read
    the stack for it, and whoever waits on the handle still gets the stack as it ended, outputs
    included."""
    from stoker.engine import starting
    from stoker.started import in_thread

    def create(copy):
        return copy.create_stack("s", SLOW)

    started = starting.begin(engine, create, in_thread, summary=False)
    assert started.future.result() is None
    ended = started.wait()
    assert ended["stack_status"] == "CREATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in ended["outputs"]} == {"made": "made"}
    assert engine.create_stack("t", SLOW)["stack_status"] == "CREATE_COMPLETE"  # the engine's own verb still answers
