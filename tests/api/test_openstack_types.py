"""Heat's OpenStack types through the API, as ``openstack orchestration resource type`` and
``openstack stack`` read them: listed, described, and simulated by a stack create."""

from __future__ import annotations

import uuid

import pytest

from .helpers import heat, wait_for


@pytest.fixture
def client(noauth_server):
    return heat(noauth_server, f"p-{uuid.uuid4().hex[:8]}")


def test_resource_types_list_show_and_generate(client):
    types = [str(t.resource_type) for t in client.resource_types.list()]
    assert {"OS::Nova::Server", "OS::Neutron::Port", "OS::Cinder::Volume", "OS::Heat::None"} <= set(types)
    assert "OS::Glance::Image" not in types  # hidden in Heat 27, as Heat hides it
    # as Heat: the types its policy keeps for admin projects are not listed to others
    assert not {"OS::Nova::Flavor", "OS::Cinder::VolumeType", "OS::Manila::ShareType"} & set(types)
    described = client.resource_types.list(filters={"name": "OS::Neutron::Port$"}, with_description=True)
    assert [(t.resource_type, "simulated" in t.description) for t in described] == [("OS::Neutron::Port", True)]
    unsupported = [str(t.resource_type) for t in client.resource_types.list(filters={"support_status": "UNSUPPORTED"})]
    assert "OS::Neutron::PortChain" in unsupported and "OS::Nova::Server" not in unsupported

    schema = client.resource_types.get("OS::Nova::Server")
    assert schema["properties"]["flavor"]["constraints"] == [{"custom_constraint": "nova.flavor"}]
    assert schema["properties"]["networks"]["schema"]["*"]["type"] == "map"
    assert schema["attributes"]["networks"]["type"] == "map"
    generated = client.resource_types.generate_template("OS::Nova::KeyPair", template_type="hot")
    assert generated["resources"]["KeyPair"]["type"] == "OS::Nova::KeyPair"
    assert client.stacks.validate(template=generated)["Parameters"]["name"]["Type"] == "String"


def test_a_stack_of_openstack_types_is_simulated_and_marked(client):
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {"type": "OS::Neutron::Subnet",
                       "properties": {"network": {"get_resource": "net"}, "cidr": "10.9.8.0/24"}},
            "port": {"type": "OS::Neutron::Port",
                     "properties": {"network": {"get_resource": "net"},
                                    "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
        },
        "outputs": {"ip": {"value": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]}}},
    }
    name = f"s{uuid.uuid4().hex[:8]}"
    client.stacks.create(stack_name=name, template=template)
    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.outputs[0]["output_value"].startswith("10.9.8.")
    assert stack.to_dict()["simulated_resources"] == ["net", "port", "subnet"]
    port = client.resources.get(stack.id, "port")
    assert port.to_dict()["simulated"] is True
    assert port.attributes["fixed_ips"][0]["ip_address"] == stack.outputs[0]["output_value"]
