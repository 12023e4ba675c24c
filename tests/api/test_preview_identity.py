"""A create preview as Heat shows it: the pseudo parameters, and each resource's identity."""

from __future__ import annotations

import uuid

import pytest
from heatclient import exc

from .helpers import heat

TEMPLATE = """\
heat_template_version: 2016-10-14
parameters:
  x: {type: string, default: a}
resources:
  r: {type: OS::Heat::TestResource, properties: {value: {get_param: x}}}
"""


def test_create_preview_has_pseudo_parameters_and_resource_identity(noauth_server):
    project = f"p-{uuid.uuid4().hex[:8]}"
    client = heat(noauth_server, project)
    stack = client.stacks.preview(stack_name="pv", template=TEMPLATE)
    assert stack.parameters["OS::stack_id"] == "None"
    assert stack.parameters["OS::stack_name"] == "pv"
    assert stack.parameters["OS::project_id"] == project
    assert stack.parameters["x"] == "a"
    [resource] = stack.resources
    assert resource["resource_identity"] == {"tenant": project, "stack_name": "pv", "stack_id": "None",
                                             "path": "/resources/r"}
    assert resource["stack_identity"] == {"tenant": project, "stack_name": "pv", "stack_id": "None", "path": ""}
    assert list(client.stacks.list()) == []


MAIN = """\
heat_template_version: 2015-04-30
parameters:
  incoming: {type: string}
resources:
  one: {type: OS::Heat::TestResource, properties: {value: fred}}
  two:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [one, output]}}
  main: {type: nested.yaml, properties: {value: {get_param: incoming}}}
"""
NESTED = """\
heat_template_version: 2015-04-30
parameters:
  value: {type: string}
resources:
  inner: {type: OS::Heat::TestResource, properties: {value: {get_param: value}}}
"""


def test_create_preview_resolves_properties_shows_attributes_and_expands_nested_stacks(noauth_server):
    # heat-tempest-plugin's test_preview: test_basic_pass and test_nested_pass
    project = f"p-{uuid.uuid4().hex[:8]}"
    client = heat(noauth_server, project)
    stack = client.stacks.preview(stack_name="pv", template=MAIN, files={"nested.yaml": NESTED},
                                  environment={"parameters": {"incoming": "abc"}}).to_dict()
    flat = {r["resource_name"]: r for r in stack["resources"] if isinstance(r, dict)}
    assert set(flat) == {"one", "two"}
    assert flat["one"]["properties"]["value"] == "fred"
    assert flat["one"]["properties"]["fail"] is False and flat["one"]["properties"]["wait_secs"] == 0
    assert flat["two"]["properties"]["value"] is None  # waits for one
    assert "output" in flat["one"]["attributes"] and "show" not in flat["one"]["attributes"]
    assert flat["one"]["required_by"] == ["two"] and flat["two"]["requires"] == ["one"]
    [nested] = [r for r in stack["resources"] if isinstance(r, list)]
    [inner] = nested
    assert inner["resource_name"] == "inner" and inner["parent_resource"] == "main"
    assert inner["stack_name"] == "pv-main" and inner["properties"]["value"] == "abc"
    assert inner["resource_identity"]["stack_name"] == "pv-main"
    assert (inner["resource_action"], inner["resource_status"]) == ("INIT", "COMPLETE")


def test_refusals_start_with_heats_words(noauth_server):
    # heat-tempest-plugin's test_preview.test_basic_fail and test_template_validate_fail_version
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    wont_work = MAIN.replace("get_param: incoming", "get_param: missing").replace("{get_attr: [one, output]}",
                                                                                  "{get_param: missing}")
    with pytest.raises(exc.HTTPBadRequest) as refused:
        client.stacks.preview(stack_name="pv", template=wont_work, files={"nested.yaml": NESTED},
                              environment={"parameters": {"incoming": "abc"}})
    assert ("Property error: : resources.two.properties.value: : The Parameter (missing) was not provided."
            in str(refused.value))
    with pytest.raises(exc.HTTPBadRequest) as refused:
        client.stacks.validate(template=TEMPLATE.replace("2016-10-14", "invalid"))
    assert "The template version is invalid" in str(refused.value)


def test_a_preview_refers_to_resources_not_made_yet_by_name_and_expands_a_group_reading_one(noauth_server):
    # as Heat's preview: get_resource of a resource without a physical id gives its name, so a
    # group whose members read one is expanded too (heat-tempest-plugin's preview of a group)
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    main = ("heat_template_version: 2015-04-30\nresources:\n  net: {type: OS::Neutron::Net}\n"
            "  rg:\n    type: OS::Heat::ResourceGroup\n    properties:\n      count: 1\n"
            "      resource_def: {type: nested.yaml, properties: {net_id: {get_resource: net}}}\n")
    nested = ("heat_template_version: 2015-04-30\nparameters:\n  net_id: {type: string}\n"
              "resources:\n  port: {type: OS::Heat::TestResource, properties: {value: {get_param: net_id}}}\n")
    stack = client.stacks.preview(stack_name="grp", template=main, files={"nested.yaml": nested})

    def flat(entries):
        for entry in entries:
            yield from (flat(entry) if isinstance(entry, list) else [entry])

    found = {entry["resource_name"]: entry for entry in flat(stack.resources)}
    assert {"net", "port"} <= set(found)
    assert found["port"]["properties"]["value"] == "net"
