"""A create preview as Heat shows it: the pseudo parameters, and each resource's identity."""

from __future__ import annotations

import uuid

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
