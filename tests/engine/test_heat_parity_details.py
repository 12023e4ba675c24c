"""Heat's smaller behaviours on update, each as Heat's functional tests check it."""

from __future__ import annotations


def _one(**props) -> dict:
    return {"heat_template_version": "2013-05-23",
            "resources": {"test1": {"type": "OS::Heat::TestResource",
                                    "properties": {"value": "Test1", **props}}}}


def test_an_update_after_a_failed_replacement_keeps_the_original(engine):
    """Heat's test_stack_update_replace_manual_rollback: back to the first template, the
    original (never replaced) is kept and the failed replacement goes."""
    engine.create_stack("manual", _one(update_replace_value="1"))
    original = engine.resource("manual", "test1")["physical_resource_id"]
    failed = engine.update_stack("manual", _one(update_replace_value="2", fail=True), disable_rollback=True)
    assert failed["stack_status"] == "UPDATE_FAILED"
    back = engine.update_stack("manual", _one(update_replace_value="1"))
    assert back["stack_status"] == "UPDATE_COMPLETE", back["stack_status_reason"]
    assert engine.resource("manual", "test1")["physical_resource_id"] == original
    rows = engine.resources("manual")
    assert [(r["resource_name"], r["resource_status"]) for r in rows] == [("test1", "CREATE_COMPLETE")]


def test_adding_an_external_id_on_update_fails_as_in_heat(engine):
    """Heat's test_update_with_external_ref: the update fails, the resource is left as it was."""
    plain = {"heat_template_version": "2016-10-14", "resources": {"test1": {"type": "OS::Heat::TestResource"}}}
    referenced = {"heat_template_version": "2016-10-14",
                  "resources": {"test1": {"type": "OS::Heat::TestResource", "external_id": "foobar"}}}
    engine.create_stack("ref", plain)
    before = engine.resource("ref", "test1")["physical_resource_id"]
    failed = engine.update_stack("ref", referenced)
    assert failed["stack_status"] == "UPDATE_FAILED"
    assert ("NotSupported: resources.test1: Update to property external_id of test1 (OS::Heat::TestResource) "
            "is not supported.") in failed["stack_status_reason"]
    assert engine.resource("ref", "test1")["physical_resource_id"] == before


def test_an_unchanged_external_id_leaves_the_resource_alone(engine):
    referenced = {"heat_template_version": "2016-10-14",
                  "resources": {"test1": {"type": "OS::Heat::TestResource", "external_id": "foobar"}},
                  "outputs": {"str": {"value": {"get_resource": "test1"}}}}
    engine.create_stack("kept", referenced)
    assert engine.update_stack("kept", referenced)["stack_status"] == "UPDATE_COMPLETE"
    assert engine.outputs("kept")[0]["output_value"] == "foobar"
