"""Heat's ``test_resource_group_zero_novalidate`` through python-heatclient: an empty group of a
bad member template is created; growing it, or creating it with members, is a 400 in Heat's words."""

from __future__ import annotations

import uuid

import pytest
import yaml
from heatclient import exc

from .helpers import heat, wait_for

TOP = {"heat_template_version": "2013-05-23",
       "parameters": {"count": {"type": "number", "default": 0}},
       "resources": {"random_group": {"type": "OS::Heat::ResourceGroup", "properties": {
           "count": {"get_param": "count"},
           "resource_def": {"type": "My::RandomString", "properties": {"length": 30, "salt": "initial"}}}}}}
PROVIDER = {"heat_template_version": "2013-05-23",
            "parameters": {"length": {"type": "string", "default": 50},
                           "salt": {"type": "string", "default": "initial"}},
            "resources": {"random": {"type": "OS::Heat::RandomString", "properties": {"length": "BAD"}}}}
ENV = {"resource_registry": {"My::RandomString": "provider.yaml"}}
HEATS_WORDS = ("resources.random_group<nested_stack>.resources.0<provider.yaml>.resources.random: : "
               "Value 'BAD' is not an integer")


def test_growing_an_empty_group_of_a_bad_member_is_a_400(noauth_server):
    client = heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")
    files = {"provider.yaml": yaml.safe_dump(PROVIDER)}
    name = f"g{uuid.uuid4().hex[:8]}"
    client.stacks.create(stack_name=name, template=TOP, files=files, environment=ENV)
    created = wait_for(client, name)
    assert created.stack_status == "CREATE_COMPLETE", created.stack_status_reason
    assert [r.resource_name for r in client.resources.list(name, nested_depth=1)] == ["random_group"]

    with pytest.raises(exc.HTTPBadRequest) as refused:
        client.stacks.update(created.id, template=TOP, files=files, environment=ENV, parameters={"count": 2})
    assert HEATS_WORDS in str(refused.value)
    after = client.stacks.get(created.id)
    assert (after.stack_status, after.parameters["count"]) == ("CREATE_COMPLETE", "0")

    with pytest.raises(exc.HTTPBadRequest) as refused:
        client.stacks.create(stack_name=f"{name}x", template=TOP, files=files, environment=ENV,
                             parameters={"count": 2})
    assert HEATS_WORDS in str(refused.value)
    assert [s.stack_name for s in client.stacks.list()] == [name]
