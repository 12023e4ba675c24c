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
