"""``OS::Heat::SoftwareDeployment(Group)`` through the API: a deployment waits IN_PROGRESS
for its server's report (a signal, or a PUT of the deployment as heat-config agents do),
keeps the input values in its derived config, and fails on a non-zero status code."""

from __future__ import annotations

import time
import uuid

import httpx
from heatclient.exc import HTTPNotFound

from .helpers import heat, template, wait_for


def _in_progress(client, stack: str, resource: str, action: str = "CREATE", timeout: float = 30.0):
    """The resource once it is ``action``_IN_PROGRESS with a deployment (its physical id)."""
    deadline = time.monotonic() + timeout
    status = "not there yet"
    while True:
        try:
            found = client.resources.get(stack, resource)
        except HTTPNotFound:  # the stack's resources are stored after its create starts
            found = None
        if found is not None:
            status = found.resource_status
            if status == f"{action}_IN_PROGRESS" and found.physical_resource_id:
                return found
        assert time.monotonic() < deadline, f"{resource} is {status}"
        time.sleep(0.05)


def _create(client, name: str, template_name: str, **parameters):
    files, data = template(template_name)
    client.stacks.create(stack_name=name, template=data, files=files, parameters=parameters)


def _derived_input(client, deployment) -> dict:
    config = client.software_configs.get(deployment.config_id)
    return {i["name"]: i.get("value") for i in config.inputs}


def test_a_deployment_waits_for_its_signal_and_keeps_what_the_server_reported(noauth_server):
    client = heat(noauth_server, "sd")
    name = f"sd-{uuid.uuid4().hex[:6]}"
    _create(client, name, "deployment.yaml")
    resource = _in_progress(client, name, "deployment")
    deployment = client.software_deployments.get(resource.physical_resource_id)
    assert deployment.status == "IN_PROGRESS"
    assert deployment.server_id == "server-1"
    assert deployment.input_values == {"foo": "first"}
    inputs = _derived_input(client, deployment)
    assert inputs["foo"] == "first" and inputs["bar"] == "bar_default"
    assert inputs["deploy_server_id"] == "server-1" and inputs["deploy_action"] == "CREATE"
    assert inputs["deploy_resource_name"] == "deployment"
    assert inputs["deploy_signal_id"].endswith(f"/stacks/{name}/{client.stacks.get(name).id}"
                                               "/resources/deployment/signal")
    assert client.stacks.get(name).stack_status == "CREATE_IN_PROGRESS"

    client.resources.signal(name, "deployment", data={
        "deploy_stdout": "hello", "deploy_stderr": "", "deploy_status_code": 0, "result": "42"})
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs == {"stdout": "hello", "code": 0, "result": "42"}
    done = client.software_deployments.get(resource.physical_resource_id)
    assert done.status == "COMPLETE" and done.output_values["result"] == "42"

    # an update with a new input runs again, in place, on the same deployment
    files, data = template("deployment.yaml")
    client.stacks.update(name, template=data, files=files, parameters={"input": "second"})
    _in_progress(client, name, "deployment", "UPDATE")
    deadline = time.monotonic() + 30
    while (updated := client.software_deployments.get(resource.physical_resource_id)).action != "UPDATE":
        assert time.monotonic() < deadline, updated.action  # the row follows the resource's state
        time.sleep(0.05)
    assert updated.status == "IN_PROGRESS" and updated.input_values == {"foo": "second"}
    assert _derived_input(client, updated)["foo"] == "second"
    assert updated.config_id != deployment.config_id
    client.resources.signal(name, "deployment", data={"deploy_status_code": 0})
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason

    client.stacks.delete(name)
    _wait_gone(client, name)
    response = httpx.get(f"{noauth_server.endpoint('sd')}/software_deployments/{resource.physical_resource_id}")
    assert response.status_code == 404


def _wait_gone(client, name: str) -> None:
    deadline = time.monotonic() + 60
    while _exists(client, name):
        assert time.monotonic() < deadline, client.stacks.get(name).stack_status
        time.sleep(0.1)


def _exists(client, name: str) -> bool:
    try:
        return client.stacks.get(name).stack_status != "DELETE_COMPLETE"
    except HTTPNotFound:  # gone already
        return False


def test_a_non_zero_status_code_fails_the_deployment_with_its_stderr(noauth_server):
    client = heat(noauth_server, "sd")
    name = f"sd-{uuid.uuid4().hex[:6]}"
    _create(client, name, "deployment.yaml")
    _in_progress(client, name, "deployment")
    client.resources.signal(name, "deployment", data={
        "deploy_stdout": "", "deploy_stderr": "boom", "deploy_status_code": 3})
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_FAILED"
    resource = client.resources.get(name, "deployment")
    assert resource.resource_status == "CREATE_FAILED"
    assert "Deployment exited with non-zero status code: 3" in resource.resource_status_reason
    deployment = client.software_deployments.get(resource.physical_resource_id)
    assert deployment.status == "FAILED" and deployment.output_values["deploy_stderr"] == "boom"


def test_an_agent_completes_a_deployment_by_updating_it(noauth_server):
    client = heat(noauth_server, "sd")
    name = f"sd-{uuid.uuid4().hex[:6]}"
    _create(client, name, "deployment.yaml")
    resource = _in_progress(client, name, "deployment")
    response = httpx.put(
        f"{noauth_server.endpoint('sd')}/software_deployments/{resource.physical_resource_id}",
        json={"status": "COMPLETE", "output_values": {"deploy_stdout": "by agent", "deploy_status_code": 0}})
    assert response.status_code == 200, response.text
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["stdout"] == "by agent"


def test_no_signal_completes_at_once(noauth_server):
    client = heat(noauth_server, "sd")
    name = f"sd-{uuid.uuid4().hex[:6]}"
    _create(client, name, "deployment.yaml", transport="NO_SIGNAL")
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    deployment = client.software_deployments.get(client.resources.get(name, "deployment").physical_resource_id)
    assert deployment.status == "COMPLETE"
    assert "deploy_signal_id" not in _derived_input(client, deployment)


def _members(client, name: str) -> tuple[str, list]:
    nested = client.resources.get(name, "group").physical_resource_id
    deadline = time.monotonic() + 30
    while True:
        members = client.resources.list(nested)
        if len(members) == 2 and all(m.resource_status.endswith("IN_PROGRESS") and m.physical_resource_id
                                     for m in members):
            return nested, members
        assert time.monotonic() < deadline, [(m.resource_name, m.resource_status) for m in members]
        time.sleep(0.05)


def _group_waiting(client) -> tuple[str, str, list]:
    """A new stack of deployment_group.yaml, once its members wait: (name, nested id, members)."""
    name = f"sdg-{uuid.uuid4().hex[:6]}"
    _create(client, name, "deployment_group.yaml")
    _in_progress(client, name, "group")
    return (name, *_members(client, name))


def test_a_group_deploys_to_each_server_and_updates_them_in_batches(noauth_server):
    client = heat(noauth_server, "sd")
    name, nested, members = _group_waiting(client)
    assert sorted(m.resource_name for m in members) == ["a", "b"]
    servers = {m.resource_name: client.software_deployments.get(m.physical_resource_id).server_id
               for m in members}
    assert servers == {"a": "server-a", "b": "server-b"}
    for member in members:
        client.resources.signal(nested, member.resource_name, data={
            "deploy_stdout": f"out-{member.resource_name}", "deploy_status_code": 0,
            "result": member.resource_name.upper()})
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs == {"stdouts": {"a": "out-a", "b": "out-b"}, "codes": {"a": 0, "b": 0},
                       "results": {"a": "A", "b": "B"}}

    files, data = template("deployment_group.yaml")
    client.stacks.update(name, template=data, files=files, parameters={"input": "second"})
    deadline = time.monotonic() + 60
    updating_together = set()  # how many members were seen updating at once
    while (stack := client.stacks.get(name)).stack_status == "UPDATE_IN_PROGRESS":
        updating = [m.resource_name for m in client.resources.list(nested)
                    if m.resource_status == "UPDATE_IN_PROGRESS"]
        updating_together.add(len(updating))
        for member in updating:
            client.resources.signal(nested, member, data={"deploy_status_code": 0})
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert max(updating_together) == 1  # rolling_update: max_batch_size 1
    for member in members:
        deployment = client.software_deployments.get(member.physical_resource_id)
        assert deployment.input_values == {"foo": "second"}
        assert _derived_input(client, deployment)["foo"] == "second"


def test_deleting_a_group_while_its_deployments_wait(noauth_server):
    client = heat(noauth_server, "sd")
    name, nested, members = _group_waiting(client)
    client.stacks.delete(name)
    _wait_gone(client, name)
    for member in members:
        response = httpx.get(f"{noauth_server.endpoint('sd')}/software_deployments/{member.physical_resource_id}")
        assert response.status_code == 404


COMPONENT = """
heat_template_version: 2016-10-14
resources:
  structured:
    type: OS::Heat::StructuredConfig
    properties: {group: os-apply-config, config: {port: 8080}}
  component:
    type: OS::Heat::SoftwareComponent
    properties:
      configs:
        - {actions: [CREATE], config: "install", tool: script}
        - {actions: [UPDATE], config: "upgrade", tool: script}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: component}, server: server-9}
"""


def test_maps_are_kept_as_maps_for_agents_structured_configs_and_components(noauth_server):
    """As in Heat, a config's ``config`` is any JSON: an agent reads a component's ``configs``
    list (and a structured config's map) from the API, not a string holding them."""
    client = heat(noauth_server, "sd")
    name = f"sc-{uuid.uuid4().hex[:6]}"
    client.stacks.create(stack_name=name, template=COMPONENT)
    resource = _in_progress(client, name, "deployment")
    structured = client.software_configs.get(client.resources.get(name, "structured").physical_resource_id)
    assert structured.config == {"port": 8080}
    deployment = client.software_deployments.get(resource.physical_resource_id)
    derived = client.software_configs.get(deployment.config_id)
    assert derived.group == "component"
    assert [c["config"] for c in derived.config["configs"]] == ["install", "upgrade"]
    [metadata] = client.software_deployments.metadata(server_id="server-9")
    assert metadata["config"]["configs"][0]["actions"] == ["CREATE"]
    assert {i["name"]: i.get("value") for i in metadata["inputs"]}["deploy_action"] == "CREATE"
    client.resources.signal(name, "deployment", data={"deploy_status_code": 0})
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"

    made = client.software_configs.create(name="by-api", group="ansible", config={"tasks": [{"ping": None}]})
    assert client.software_configs.get(made.id).config == {"tasks": [{"ping": None}]}
