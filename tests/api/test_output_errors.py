"""An output Heat cannot evaluate shows its ``output_error`` through the API, as Heat shapes it."""

from __future__ import annotations

import uuid

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
