"""python-heatclient against `stoker api`: what Heat users' scripts do."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from heatclient import exc

from engine.helpers import wait_until

from .helpers import heat, template, wait_for


@pytest.fixture
def client(noauth_server):
    return heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")


def _name(prefix: str = "s") -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def test_create_get_list_outputs_resources_events(client):
    files, tpl = template("basic.yaml")
    name = _name()
    created = client.stacks.create(stack_name=name, template=tpl, files=files,
                                   parameters={"length": 12, "label": "hi"}, tags="a,b")
    stack_id = created["stack"]["id"]
    assert created["stack"]["links"][0]["href"].endswith(f"/stacks/{name}/{stack_id}")
    # visible at once: by name (a redirect) and by id
    assert client.stacks.get(name).stack_status in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    stack = wait_for(client, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.stack_name == name and stack.id == stack_id
    assert stack.description == "A random string and a value that uses it"
    assert stack.parameters["length"] == "12" and stack.parameters["OS::stack_id"] == stack_id
    assert sorted(stack.tags) == ["a", "b"]
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert len(outputs["secret_value"]) == 12 and outputs["label"] == "hi"

    assert [s.stack_name for s in client.stacks.list()] == [name]
    assert [o["output_key"] for o in client.stacks.output_list(name)["outputs"]] == ["secret_value", "label"]
    assert client.stacks.output_show(name, "label")["output"]["output_value"] == "hi"
    with pytest.raises(exc.HTTPNotFound):
        client.stacks.output_show(name, "nope")

    resources = {r.resource_name: r for r in client.resources.list(name)}
    assert set(resources) == {"secret", "holder"}
    assert resources["secret"].required_by == ["holder"]
    assert resources["holder"].resource_status == "CREATE_COMPLETE"
    secret = client.resources.get(name, "secret")
    assert secret.attributes["value"] == outputs["secret_value"]
    assert client.resources.metadata(name, "holder") == {"role": "holder"}
    assert [r.resource_name for r in client.resources.list(name, filters={"type": "OS::Heat::TestResource"})] \
        == ["holder"]

    events = client.events.list(name)
    assert events[0].resource_name == name and events[0].resource_status == "CREATE_IN_PROGRESS"
    assert events[-1].resource_name == name and events[-1].resource_status == "CREATE_COMPLETE"
    newest = client.events.list(name, sort_dir="desc", limit=2)
    assert [e.id for e in newest] == [events[-1].id, events[-2].id]
    after = client.events.list(name, marker=events[1].id, sort_dir="asc")
    assert [e.id for e in after] == [e.id for e in events[2:]]
    mine = client.events.list(name, resource_name="secret")
    assert [e.resource_status for e in mine] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    shown = client.events.get(name, "secret", mine[0].id)
    assert shown.resource_type == "OS::Heat::RandomString"

    assert client.stacks.template(name)["resources"]["secret"]["type"] == "OS::Heat::RandomString"
    assert client.stacks.environment(name)["parameters"] == {}
    assert client.stacks.files(name) == {}


def test_update_put_patch_and_preview(client):
    files, tpl = template("basic.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files, parameters={"label": "one"})
    wait_for(client, name)
    first = client.resources.get(name, "secret").physical_resource_id

    preview = client.stacks.preview_update(name, template=tpl, files=files, parameters={"length": 20})
    changes = preview["resource_changes"]
    assert [c["resource_name"] for c in changes["replaced"]] == ["secret"]
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"  # a preview changes nothing

    client.stacks.update(name, template=tpl, files=files, parameters={"length": 20, "label": "two"})
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert len(outputs["secret_value"]) == 20 and outputs["label"] == "two"
    assert client.resources.get(name, "secret").physical_resource_id != first

    # PATCH (--existing): keep the template and the other parameters
    client.stacks.update(name, existing=True, parameters={"label": "three"})
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert stack.parameters["length"] == "20" and stack.parameters["label"] == "three"
    client.stacks.update(name, existing=True, clear_parameters=["label"])
    stack = wait_for(client, name)
    assert stack.parameters["label"] == "hello" and stack.parameters["length"] == "20"


def test_delete_then_not_found_by_name(client):
    files, tpl = template("basic.yaml")
    name = _name()
    stack_id = client.stacks.create(stack_name=name, template=tpl, files=files)["stack"]["id"]
    wait_for(client, stack_id)
    client.stacks.delete(name)
    stack = wait_for(client, stack_id)  # by id, a deleted stack can still be polled
    assert stack.stack_status == "DELETE_COMPLETE"
    with pytest.raises(exc.HTTPNotFound):
        client.stacks.get(name)
    assert client.stacks.list() and False is False  # listing works
    assert [s.id for s in client.stacks.list(show_deleted=True) if s.id == stack_id] == [stack_id]
    assert all(s.id != stack_id for s in client.stacks.list())
    # the name is free again
    again = client.stacks.create(stack_name=name, template=tpl, files=files)["stack"]["id"]
    assert again != stack_id
    assert wait_for(client, again).stack_status == "CREATE_COMPLETE"


def test_validate(client):
    files, tpl = template("basic.yaml")
    result = client.stacks.validate(template=tpl, files=files)
    assert result["Description"] == "A random string and a value that uses it"
    assert result["Parameters"]["length"]["Type"] == "Number"
    assert result["Parameters"]["length"]["MinValue"] == 1
    files, bad = template("invalid.yaml")
    with pytest.raises(exc.HTTPBadRequest) as caught:
        client.stacks.validate(template=bad, files=files)
    message = str(caught.value)
    assert "OS::Heat::Nonexistent" in message and "no_such_property" in message
    # as in Heat, the undefined parameter a property reads is an error only at create
    assert "missing" not in message


def test_validate_gives_heats_verdict_on_values_known_only_at_create(client):
    """Heat's own test_resource_group validates a group whose count reads a parameter
    without a value; a condition in use that reads one is refused."""
    group = {"heat_template_version": "2016-10-14", "parameters": {"n": {"type": "number"}},
             "resources": {"g": {"type": "OS::Heat::ResourceGroup",
                                 "properties": {"count": {"get_param": "n"},
                                                "resource_def": {"type": "OS::Heat::None"}}}}}
    assert client.stacks.validate(template=group)["Parameters"]["n"]["Type"] == "Number"
    group["conditions"] = {"some": {"equals": [{"get_param": "n"}, 2]}}
    group["resources"]["g"]["condition"] = "some"
    with pytest.raises(exc.HTTPBadRequest) as caught:
        client.stacks.validate(template=group)
    assert "The Parameter (n) was not provided." in str(caught.value)


def test_preview_create(client):
    files, tpl = template("basic.yaml")
    stack = client.stacks.preview(stack_name="preview", template=tpl, files=files, parameters={"label": "x"})
    assert [r["resource_name"] for r in stack.resources] == ["secret", "holder"]
    assert stack.parameters["label"] == "x"
    assert list(client.stacks.list()) == []


def test_actions_and_mark_unhealthy(client):
    files, tpl = template("basic.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files)
    wait_for(client, name)
    for action, state in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                          ("check", "CHECK_COMPLETE")):
        getattr(client.actions, action)(name)
        assert wait_for(client, name).stack_status == state
    client.resources.mark_unhealthy(name, "holder", True, "broken on purpose")
    holder = client.resources.get(name, "holder")
    assert holder.resource_status == "CHECK_FAILED"
    assert holder.resource_status_reason == "broken on purpose"
    client.resources.mark_unhealthy(name, "holder", False, "")
    assert client.resources.get(name, "holder").resource_status == "CHECK_COMPLETE"


def test_status_shows_in_progress_and_cancel(client):
    files, tpl = template("slow.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files, parameters={"secs": 5})
    assert client.stacks.get(name).stack_status == "CREATE_IN_PROGRESS"
    with pytest.raises(exc.HTTPBadRequest):  # cancel_update is for updates only
        client.actions.cancel_update(name)
    client.actions.cancel_without_rollback(name)
    stack = wait_for(client, name, timeout=10)
    assert stack.stack_status == "CREATE_FAILED"
    assert "cancel" in stack.stack_status_reason.lower()


def test_an_update_preempts_the_action_in_progress(client):
    # as Heat's convergence: no 409; the running create stops (no rollback) and the update goes on
    def version(create_secs):
        return {"heat_template_version": "pike", "resources": {"slow": {
            "type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": create_secs}}}}}

    name = _name()
    client.stacks.create(stack_name=name, template=version(60))
    wait_until(lambda: client.resources.get(name, "slow").resource_status == "CREATE_IN_PROGRESS",
               what="the slow create to start")
    client.stacks.update(name, template=version(0))
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    states = [(e.resource_status, e.resource_status_reason) for e in client.events.list(name)
              if e.resource_name == name]
    assert states.index(("CREATE_FAILED", "Stack CREATE cancelled")) < states.index(
        ("UPDATE_IN_PROGRESS", "Stack UPDATE started"))
    assert client.resources.get(name, "slow").resource_status in ("CREATE_COMPLETE", "UPDATE_COMPLETE")


def test_cancel_without_rollback_lets_the_running_create_finish(client):
    # as Heat: the stack fails at once; the resource being created finishes, its dependent never starts
    tpl = {"heat_template_version": "pike", "resources": {
        "first": {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 2}}},
        "second": {"type": "OS::Heat::TestResource", "depends_on": "first"}}}
    name = _name()
    client.stacks.create(stack_name=name, template=tpl)
    wait_until(lambda: client.resources.get(name, "first").resource_status == "CREATE_IN_PROGRESS",
               what="the first resource to start")
    client.actions.cancel_without_rollback(name)
    stack = wait_for(client, name, timeout=10)
    assert (stack.stack_status, stack.stack_status_reason) == ("CREATE_FAILED", "Stack CREATE cancelled")
    wait_until(lambda: client.resources.get(name, "first").resource_status == "CREATE_COMPLETE",
               what="the first resource to finish")
    assert client.resources.get(name, "second").resource_status == "INIT_COMPLETE"


def test_a_patch_update_drops_the_parameters_the_new_template_no_longer_declares(client):
    def version(param):
        return {"heat_template_version": "2013-05-23",
                "parameters": {param: {"type": "string", "default": "x"}},
                "resources": {"r": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": param}}}}}

    name = _name()
    client.stacks.create(stack_name=name, template=version("one"), environment={"parameters": {"one": "kept"}})
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"
    client.stacks.update(name, template=version("two"), existing=True,
                         environment={"parameter_defaults": {"two": "new"}})
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert "one" not in stack.parameters and stack.parameters["two"] == "new"


def test_a_nested_stacks_arn_finds_it(client):
    # what get_resource gives for a provider-template resource; Heat's tests use it as a stack id
    files, tpl = template("nested.yaml")
    tpl["outputs"]["child_ref"] = {"value": {"get_resource": "child"}}
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files)
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"
    arn = client.stacks.output_show(name, "child_ref")["output"]["output_value"]
    assert arn.startswith("arn:openstack:heat::")
    nested = client.stacks.get(arn)
    assert nested.parent == client.stacks.get(name).id
    assert client.resources.get(arn, "inner").resource_status == "CREATE_COMPLETE"
    assert [r.resource_name for r in client.resources.list(arn)] == ["inner"]


def test_nested_stacks(client):
    files, tpl = template("nested.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files)
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert len(stack.outputs[0]["output_value"]) == 6
    top = {r.resource_name for r in client.resources.list(name)}
    assert top == {"child", "sibling"}
    deep = {r.resource_name: r for r in client.resources.list(name, nested_depth=1)}
    assert set(deep) == {"child", "sibling", "inner"}
    assert deep["inner"].parent_resource == "child"
    assert "nested" in [link["rel"] for link in deep["child"].links]
    assert len(client.events.list(name, nested_depth=1)) > len(client.events.list(name))
    assert len(list(client.stacks.list(show_nested=True))) == 2
    assert len(list(client.stacks.list())) == 1


def test_list_filters_sort_paging_tags(client, noauth_server):
    files, tpl = template("slow.yaml")
    names = [f"list{i}-{uuid.uuid4().hex[:4]}" for i in range(3)]
    for i, name in enumerate(names):
        client.stacks.create(stack_name=name, template=tpl, files=files, parameters={"secs": 0},
                             tags=["even" if i % 2 == 0 else "odd", "all"])
    for name in names:
        wait_for(client, name)
    assert sorted(s.stack_name for s in client.stacks.list(filters={"tags": "even"})) == [names[0], names[2]]
    assert sorted(s.stack_name for s in client.stacks.list(filters={"not_tags": "even"})) == [names[1]]
    assert [s.stack_name for s in client.stacks.list(sort_keys="stack_name", sort_dir="asc")] == sorted(names)
    assert [s.stack_name for s in client.stacks.list(filters={"name": names[1]})] == [names[1]]
    base = client.http_client.endpoint
    page = httpx.get(f"{base}/stacks", params={"limit": 2, "sort_keys": "name", "sort_dir": "asc"}).json()
    assert [s["stack_name"] for s in page["stacks"]] == sorted(names)[:2]
    assert page["links"][0]["rel"] == "next"
    rest = httpx.get(page["links"][0]["href"]).json()
    assert [s["stack_name"] for s in rest["stacks"]] == sorted(names)[2:]
    counted = httpx.get(f"{base}/stacks", params={"with_count": "true", "limit": 1}).json()
    assert counted["count"] == 3 and len(counted["stacks"]) == 1


def test_abandon_export_adopt(client):
    files, tpl = template("adoptable.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files)
    stack = wait_for(client, name)
    word = stack.outputs[0]["output_value"]
    exported = client.stacks.export(name)
    assert exported["resources"]["word"]["resource_data"]["value"] == word
    data = client.stacks.abandon(name)
    assert data["name"] == name and set(data["resources"]) == {"word", "other"}
    with pytest.raises(exc.HTTPNotFound):
        client.stacks.get(name)
    adopted = client.stacks.create(stack_name=name + "x", adopt_stack_data=json.dumps(data))["stack"]["id"]
    stack = wait_for(client, adopted)
    assert stack.stack_status == "ADOPT_COMPLETE", stack.stack_status_reason
    assert stack.outputs[0]["output_value"] == word
    word_resource = client.resources.get(name + "x", "word")
    assert word_resource.physical_resource_id == data["resources"]["word"]["resource_id"]


def test_template_versions_functions_resource_types(client):
    versions = [v.version for v in client.template_versions.list()]
    assert "heat_template_version.2021-04-16" in versions
    functions = [f.functions for f in client.template_versions.get("heat_template_version.2016-10-14")]
    assert "yaql" in functions and "equals" not in functions
    with_conditions = [f.functions for f in client.template_versions.get(
        "heat_template_version.2016-10-14", with_condition_func=True)]
    assert "equals" in with_conditions
    with pytest.raises(exc.HTTPNotFound):
        client.template_versions.get("heat_template_version.1999-01-01")
    types = [str(t.resource_type) for t in client.resource_types.list()]
    assert "OS::Heat::RandomString" in types and "OS::Heat::None" in types
    only = [str(t.resource_type) for t in client.resource_types.list(filters={"name": "Random"})]
    assert only == ["OS::Heat::RandomString"]
    schema = client.resource_types.get("OS::Heat::RandomString")
    assert schema["properties"]["length"]["type"] == "integer"
    assert "value" in schema["attributes"]
    generated = client.resource_types.generate_template("OS::Heat::RandomString", template_type="hot")
    assert generated["resources"]["RandomString"]["type"] == "OS::Heat::RandomString"
    # what it generates is a valid template
    assert client.stacks.validate(template=generated)["Parameters"]["length"]["Type"] == "Number"
    with pytest.raises(exc.HTTPNotFound):
        client.resource_types.get("OS::Nope::Nothing")


def test_software_configs_and_deployments(client):
    config = client.software_configs.create(name="cfg", group="script", config="#!/bin/sh\necho $foo",
                                            inputs=[{"name": "foo"}], outputs=[{"name": "result"}])
    assert client.software_configs.get(config.id).config.startswith("#!/bin/sh")
    assert [c.id for c in client.software_configs.list()] == [config.id]
    deployment = client.software_deployments.create(config_id=config.id, server_id="server-1",
                                                    input_values={"foo": "bar"}, action="CREATE",
                                                    status="IN_PROGRESS")
    metadata = client.software_deployments.metadata("server-1")
    assert metadata[0]["config"].startswith("#!/bin/sh")
    assert metadata[0]["inputs"][0]["value"] == "bar"
    client.software_deployments.update(deployment.id, output_values={"result": "ok", "deploy_status_code": 0})
    shown = client.software_deployments.get(deployment.id)
    assert shown.status == "COMPLETE" and shown.output_values["result"] == "ok"
    assert [d.id for d in client.software_deployments.list(server_id="server-1")] == [deployment.id]
    client.software_deployments.delete(deployment.id)
    client.software_configs.delete(config.id)
    with pytest.raises(exc.HTTPNotFound):
        client.software_configs.get(config.id)


def test_build_info(client):
    info = client.build_info.build_info()
    assert info["api"]["revision"].startswith("stoker-")


def test_concurrent_creates_of_one_name(client):
    """Two creates racing for one name: one wins, the other is a 409 (never the winner's id)."""
    import concurrent.futures

    files, tpl = template("slow.yaml")
    name = _name("race")

    def create():
        try:
            return client.stacks.create(stack_name=name, template=tpl, files=files,
                                        parameters={"secs": 0})["stack"]["id"]
        except exc.HTTPConflict:
            return "conflict"

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: create(), range(4)))
    winners = [r for r in results if r != "conflict"]
    assert len(winners) == 1, results
    assert wait_for(client, winners[0]).stack_status == "CREATE_COMPLETE"
    time.sleep(0)  # the losers left nothing behind
    assert [s.id for s in client.stacks.list()] == winners


def test_signal_releases_a_wait_condition(client):
    files, tpl = template("wait.yaml")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files=files)
    assert client.stacks.get(name).stack_status == "CREATE_IN_PROGRESS"
    with pytest.raises(exc.HTTPBadRequest):
        client.resources.signal(name, "handle", data={"status": "MAYBE"})
    client.resources.signal(name, "handle", data={"status": "SUCCESS", "data": "ready", "id": "1"})
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert "ready" in json.dumps(stack.outputs[0]["output_value"])
    without = client.stacks.get(name, resolve_outputs=False)
    assert not getattr(without, "outputs", None)


def test_abandon_and_adopt_any_version_with_nested_stacks(client):
    """Adopt works for every template version (2014-10-16 has no external_id), and the
    resources of a nested stack are adopted too; abandon data of a nested stack carries its template."""
    nested = ("heat_template_version: 2014-10-16\n"
              "resources:\n  inner: {type: OS::Heat::TestResource, properties: {value: inner}}\n"
              "outputs:\n  out: {value: {get_attr: [inner, output]}}\n")
    tpl = ("heat_template_version: 2014-10-16\n"
           "resources:\n  outer: {type: OS::Heat::TestResource, properties: {value: outer}}\n"
           "  nested: {type: nested.yaml}\n"
           "outputs:\n  out: {value: {get_attr: [nested, out]}}\n")
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files={"nested.yaml": nested})
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"
    data = client.stacks.abandon(name)
    assert data["resources"]["nested"]["template"]["resources"]["inner"]["type"] == "OS::Heat::TestResource"
    adopted = client.stacks.create(stack_name=name + "x", adopt_stack_data=json.dumps(data))["stack"]["id"]
    stack = wait_for(client, adopted)
    assert stack.stack_status == "ADOPT_COMPLETE", stack.stack_status_reason
    assert client.resources.get(adopted, "outer").physical_resource_id == data["resources"]["outer"]["resource_id"]
    nested_id = client.resources.get(adopted, "nested").physical_resource_id
    inner = client.resources.get(nested_id, "inner")
    assert inner.physical_resource_id == data["resources"]["nested"]["resources"]["inner"]["resource_id"]
    assert inner.resource_status in ("ADOPT_COMPLETE", "CHECK_COMPLETE")
    assert stack.outputs[0]["output_value"] == "inner"


def test_validate_gives_heats_environment_shape(client):
    """A count from a parameter with no value validates; the Environment is Heat's."""
    tpl = ("heat_template_version: 2016-10-14\nparameters:\n  the_count: {type: number}\n"
           "resources:\n  the_group:\n    type: OS::Heat::ResourceGroup\n    properties:\n"
           "      count: {get_param: the_count}\n      resource_def: {type: OS::Heat::RandomString}\n")
    assert client.stacks.validate(template=tpl) == {
        "Description": "No description",
        "Environment": {"event_sinks": [], "parameter_defaults": {}, "parameters": {},
                        "resource_registry": {"resources": {}}},
        "Parameters": {"the_count": {"Description": "", "Label": "the_count", "NoEcho": "false",
                                     "Type": "Number"}}}


def test_a_resource_of_a_nested_stack_shows_its_parent_resource(client):
    nested = "heat_template_version: 2013-05-23\nresources:\n  secret2: {type: OS::Heat::RandomString}\n"
    tpl = "heat_template_version: 2013-05-23\nresources:\n  secret1: {type: nested.yaml}\n"
    name = _name()
    client.stacks.create(stack_name=name, template=tpl, files={"nested.yaml": nested})
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"
    nested_id = client.resources.get(name, "secret1").physical_resource_id
    assert client.resources.get(nested_id, "secret2").parent_resource == "secret1"
    assert not hasattr(client.resources.get(name, "secret1"), "parent_resource")


def test_snapshots_with_heatclient(client):
    # heatclient's stacks.snapshot* calls: take, list, show, restore, delete (as Heat)
    tpl = {"heat_template_version": "2018-08-31", "parameters": {"word": {"type": "string"}},
           "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "word"}}}},
           "outputs": {"word": {"value": {"get_attr": ["v", "value"]}}}}
    name = _name()
    stack_id = client.stacks.create(stack_name=name, template=tpl, parameters={"word": "one"})["stack"]["id"]
    assert wait_for(client, stack_id).stack_status == "CREATE_COMPLETE"
    taken = client.stacks.snapshot(stack_id, "first")
    assert taken["name"] == "first" and taken["status"] in ("IN_PROGRESS", "COMPLETE")
    snapshot = wait_until(lambda: (s := client.stacks.snapshot_show(stack_id, taken["id"])["snapshot"])
                          ["status"] == "COMPLETE" and s)
    assert snapshot["data"]["environment"]["parameters"]["word"] == "one"
    assert snapshot["data"]["resources"]["v"]["action"] == "SNAPSHOT"
    assert [s["id"] for s in client.stacks.snapshot_list(stack_id)["snapshots"]] == [taken["id"]]

    client.stacks.update(stack_id, template=tpl, parameters={"word": "two"})
    assert wait_for(client, stack_id).stack_status == "UPDATE_COMPLETE"
    client.stacks.restore(stack_id, taken["id"])
    restored = wait_until(lambda: (s := client.stacks.get(stack_id)).stack_status.startswith("RESTORE_")
                          and s.stack_status != "RESTORE_IN_PROGRESS" and s)
    assert restored.stack_status == "RESTORE_COMPLETE", restored.stack_status_reason
    assert client.stacks.output_show(stack_id, "word")["output"]["output_value"] == "one"

    client.stacks.snapshot_delete(stack_id, taken["id"])
    assert client.stacks.snapshot_list(stack_id)["snapshots"] == []
    with pytest.raises(exc.HTTPNotFound):
        client.stacks.snapshot_show(stack_id, taken["id"])
