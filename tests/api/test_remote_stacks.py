"""Remote stacks: ``OS::Heat::Stack`` with ``context.region_name`` naming a region of
``[regions]`` in stoker.conf lives in that region, another ``stoker api`` on loopback here,
created, updated, suspended, resumed and deleted there over the Heat v1 API."""

from __future__ import annotations

import pytest
from heatclient import exc

from .helpers import heat, start_server, wait_for

REMOTE = """\
heat_template_version: 2013-05-23
parameters:
  length: {type: number, default: 32}
resources:
  random1: {type: OS::Heat::RandomString, properties: {length: {get_param: length}}}
outputs:
  remote_key: {value: {get_attr: [random1, value]}}
"""


def parent(region: str) -> str:
    return f"""\
heat_template_version: 2013-05-23
parameters:
  length: {{type: number, default: 32}}
resources:
  my_stack:
    type: OS::Heat::Stack
    properties:
      context: {{region_name: {region}}}
      template: {{get_file: remote_stack.yaml}}
      parameters: {{length: {{get_param: length}}}}
outputs:
  key: {{value: {{get_attr: [my_stack, outputs]}}}}
"""


@pytest.fixture(scope="module")
def regions(tmp_path_factory):
    there_home = tmp_path_factory.mktemp("region-two")
    there = start_server(there_home, f"sqlite:///{there_home / 'stoker.db'}")
    here_home = tmp_path_factory.mktemp("region-one")
    (here_home / "stoker.conf").write_text(f"[regions]\nRegionTwo = {there.endpoint('far')}\n"
                                           "Nowhere = not a url\nClosed = http://127.0.0.1:9/v1/x\n")
    here = start_server(here_home, f"sqlite:///{here_home / 'stoker.db'}")
    yield heat(here, "near"), heat(there, "far")
    here.stop()
    there.stop()


def test_a_stack_in_another_region_lives_there(regions):
    near, far = regions
    files = {"remote_stack.yaml": REMOTE}
    stack_id = near.stacks.create(stack_name="parent", template=parent("RegionTwo"), files=files)["stack"]["id"]
    stack = wait_for(near, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    remote_id = near.resources.get(stack_id, "my_stack").physical_resource_id
    remote = far.stacks.get(remote_id)
    assert remote.stack_status == "CREATE_COMPLETE"
    remote_value = {o["output_key"]: o["output_value"] for o in remote.outputs}["remote_key"]
    assert {o["output_key"]: o["output_value"] for o in stack.outputs}["key"] == {"remote_key": remote_value}
    assert len(remote_value) == 32
    with pytest.raises(exc.HTTPNotFound):
        near.stacks.get(remote_id)  # not here

    near.stacks.update(stack_id, template=parent("RegionTwo"), files=files, parameters={"length": 8})
    assert wait_for(near, stack_id).stack_status == "UPDATE_COMPLETE"
    assert far.stacks.get(remote_id).stack_status == "UPDATE_COMPLETE"
    updated = wait_for(near, stack_id)
    assert len({o["output_key"]: o["output_value"] for o in updated.outputs}["key"]["remote_key"]) == 8

    near.actions.suspend(stack_id)
    assert wait_for(near, stack_id).stack_status == "SUSPEND_COMPLETE"
    assert far.stacks.get(remote_id).stack_status == "SUSPEND_COMPLETE"
    near.actions.resume(stack_id)
    assert wait_for(near, stack_id).stack_status == "RESUME_COMPLETE"
    assert far.stacks.get(remote_id).stack_status == "RESUME_COMPLETE"

    near.stacks.delete(stack_id)
    assert wait_for(near, stack_id).stack_status == "DELETE_COMPLETE"
    assert far.stacks.get(remote_id).stack_status == "DELETE_COMPLETE"


def test_this_region_runs_here_and_an_unknown_region_is_refused_with_heats_words(regions):
    near, _ = regions
    files = {"remote_stack.yaml": REMOTE}
    here_id = near.stacks.create(stack_name="local", template=parent("RegionOne"), files=files)["stack"]["id"]
    assert wait_for(near, here_id).stack_status == "CREATE_COMPLETE"
    nested_id = near.resources.get(here_id, "my_stack").physical_resource_id
    assert near.stacks.get(nested_id).stack_status == "CREATE_COMPLETE"
    with pytest.raises(exc.HTTPBadRequest) as refused:
        near.stacks.create(stack_name="dark", template=parent("DARKHOLE"), files=files)
    assert str(refused.value).startswith(
        'ERROR: Cannot establish connection to Heat endpoint at region "DARKHOLE" due to '
        '"public endpoint for orchestration service in DARKHOLE region not found"')
    broken = {"remote_stack.yaml": REMOTE.replace("resources", "resource")}
    with pytest.raises(exc.HTTPBadRequest) as refused:
        near.stacks.create(stack_name="broken", template=parent("RegionTwo"), files=broken)
    assert str(refused.value).startswith(
        'ERROR: Failed validating stack template using Heat endpoint at region "RegionTwo" due to "ERROR: ')


def test_a_template_this_region_refuses_is_refused_in_heats_remote_words(regions):
    # heat-tempest-plugin's test_stack_resource_validation_fail (the region named is this one)
    near, _ = regions
    broken = {"remote_stack.yaml": REMOTE.replace("resources", "resource")}
    with pytest.raises(exc.HTTPBadRequest) as refused:
        near.stacks.create(stack_name="broken-here", template=parent("RegionOne"), files=broken)
    assert str(refused.value) == ('ERROR: Failed validating stack template using Heat endpoint at region '
                                  '"RegionOne" due to "ERROR: The template section is invalid: resource"')


def test_a_region_that_cannot_be_reached_is_a_clear_refusal(regions):
    near, _ = regions
    files = {"remote_stack.yaml": REMOTE}
    for name in ("Nowhere", "Closed"):
        with pytest.raises(exc.HTTPBadRequest) as refused:
            near.stacks.create(stack_name=f"to-{name.lower()}", template=parent(name), files=files)
        assert f'Heat endpoint at region "{name}"' in str(refused.value)
