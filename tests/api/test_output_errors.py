"""Outputs through the API as Heat shapes them: one Heat cannot evaluate shows its ``output_error``;
those (and resources) whose condition is false."""

from __future__ import annotations

import uuid

import pytest
from heatclient import exc

from .helpers import heat, wait_for

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  thing: {type: OS::Heat::TestResource, properties: {value: made}}
outputs:
  strict:
    description: a param the template lacks
    value: {str_replace_strict: {template: "hello", params: {missing: x}}}
  fine:
    value: {get_attr: [thing, output]}
"""


def test_output_error_in_output_show_list_and_stack_show(noauth_server):
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    name = f"o{uuid.uuid4().hex[:8]}"
    client.stacks.create(stack_name=name, template=TEMPLATE)
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    shown = client.stacks.output_show(name, "strict")["output"]
    assert set(shown) == {"output_key", "description", "output_value", "output_error"}
    assert shown["output_value"] is None and shown["description"] == "a param the template lacks"
    assert "The following params were not found in the template: missing" in shown["output_error"]
    assert client.stacks.output_show(name, "fine")["output"] == {
        "output_key": "fine", "description": "No description given", "output_value": "made"}
    assert {o["output_key"]: o for o in stack.outputs}["strict"] == shown
    listed = client.stacks.output_list(name)["outputs"]
    assert sorted(o["output_key"] for o in listed) == ["fine", "strict"]


CONDITIONAL = """\
heat_template_version: 2016-10-14
parameters: {env: {type: string, default: test}}
conditions: {prod: {equals: [{get_param: env}, prod]}}
resources:
  always: {type: OS::Heat::TestResource, properties: {value: here}}
  only_prod: {type: OS::Heat::TestResource, condition: prod}
outputs:
  o_prod: {description: only in prod, value: {get_attr: [only_prod, output]}, condition: prod}
  o_always: {value: {get_attr: [always, output]}}
"""


def test_outputs_and_resources_whose_condition_is_false(noauth_server):
    """As Heat: a disabled resource does not exist; a disabled output is listed, its value null, no error."""
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    name = f"c{uuid.uuid4().hex[:8]}"
    client.stacks.create(stack_name=name, template=CONDITIONAL)
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    disabled = {"output_key": "o_prod", "description": "only in prod", "output_value": None}
    assert {o["output_key"]: o for o in stack.outputs}["o_prod"] == disabled
    assert client.stacks.output_show(name, "o_prod")["output"] == disabled
    assert sorted(o["output_key"] for o in client.stacks.output_list(name)["outputs"]) == ["o_always", "o_prod"]
    assert [r.resource_name for r in client.resources.list(name)] == ["always"]
    with pytest.raises(exc.HTTPNotFound, match="only_prod"):
        client.resources.get(name, "only_prod")

    client.stacks.update(name, existing=True, parameters={"env": "prod"})
    assert wait_for(client, name).stack_status == "UPDATE_COMPLETE"
    assert client.stacks.output_show(name, "o_prod")["output"]["output_value"] == "test_string"
    assert sorted(r.resource_name for r in client.resources.list(name)) == ["always", "only_prod"]
