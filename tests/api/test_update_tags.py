"""Tags on update, as Heat: a full update (PUT) without tags clears them; a PATCH keeps them."""

from __future__ import annotations

import uuid

from .helpers import heat, wait_for

TEMPLATE = "heat_template_version: 2016-10-14\nresources:\n  r: {type: OS::Heat::None}\n"


def test_an_update_without_tags_clears_them_a_patch_keeps_them(noauth_server):
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    name = f"t{uuid.uuid4().hex[:8]}"
    client.stacks.create(stack_name=name, template=TEMPLATE, tags="one,two")
    assert wait_for(client, name).tags == ["one", "two"]
    client.stacks.update(name, existing=True)
    assert wait_for(client, name).tags == ["one", "two"]
    client.stacks.update(name, template=TEMPLATE, tags="three")
    assert wait_for(client, name).tags == ["three"]
    client.stacks.update(name, template=TEMPLATE)
    stack = wait_for(client, name)
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert not stack.tags


def test_stacks_with_a_hidden_tag_are_listed_only_when_asked(noauth_server):
    # Heat's hidden_stack_tags (default data-processing-cluster), as heat-tempest-plugin's test_hidden_stack
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    template = {"heat_template_version": "2018-08-31", "resources": {"n": {"type": "OS::Heat::None"}}}
    client.stacks.create(stack_name="seen", template=template, tags="foo")
    hidden_id = client.stacks.create(stack_name="unseen", template=template,
                                     tags="foo,data-processing-cluster")["stack"]["id"]
    assert [s.stack_name for s in client.stacks.list()] == ["seen"]
    assert {s.stack_name for s in client.stacks.list(show_hidden=True)} == {"seen", "unseen"}
    assert [s.stack_name for s in client.stacks.list(filters={"tags": "foo"})] == ["seen"]
    assert client.stacks.get(hidden_id).stack_name == "unseen"  # hidden from lists only
