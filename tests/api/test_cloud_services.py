"""The cloud in a box's own service routes (``/cloud/{tenant_id}/compute/v2.1``, ``.../network``):
Nova's key pairs and Neutron's network listings, as a Heat user's tools (and heat-tempest-plugin's
set-ups) call them, and how they meet stacks: a key pair made here passes ``nova.keypair``, a
stack's simulated network is listed, and a create preview expands a group whose members refer to
a network not made yet."""

from __future__ import annotations

import base64
import hashlib
import uuid

import httpx
import pytest
import yaml

from .helpers import heat, heat_error, start_server, wait_for

PUBLIC_ID = "5e4d3c2b-1a09-4876-9543-210fedcba987"
CLOUD = {
    "images": ["cirros"], "flavors": ["m1.tiny"], "keypairs": [],
    "networks": [{"name": "public", "id": PUBLIC_ID, "external": True}, "heat-net"],
    "subnets": [{"name": "public-subnet", "cidr": "172.24.4.0/24", "network": "public"}],
}
# an Ed25519 public key (the OpenSSH form), and its MD5 fingerprint worked out below from its blob
IMPORTED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDFOVnUaKPgebujABl2zDBXpVW94dN6c1fs9bZlXaVbr imported"


@pytest.fixture(scope="module")
def cloud_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cloud")
    (tmp / "cloud.yaml").write_text(yaml.safe_dump(CLOUD))
    server = start_server(tmp, f"sqlite:///{tmp / 'stoker.db'}", env={"STOKER_INVENTORY": str(tmp / "cloud.yaml")})
    yield server
    server.stop()


@pytest.fixture
def project():
    return f"p-{uuid.uuid4().hex[:8]}"


def _compute(server, project: str) -> str:
    return f"{server.url}/cloud/{project}/compute/v2.1/os-keypairs"


def _network(server, project: str) -> str:
    return f"{server.url}/cloud/{project}/network/v2.0"


def test_key_pairs_are_made_listed_shown_and_deleted_as_nova_does(cloud_server, project):
    url = _compute(cloud_server, project)
    made = httpx.post(url, json={"keypair": {"name": "ops key"}})
    assert made.status_code == 200, made.text
    keypair = made.json()["keypair"]
    assert keypair["name"] == "ops key" and keypair["public_key"].startswith("ssh-ed25519 ")
    assert keypair["private_key"].startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    blob = base64.b64decode(keypair["public_key"].split()[1])
    digest = hashlib.md5(blob).hexdigest()
    assert keypair["fingerprint"] == ":".join(digest[i:i + 2] for i in range(0, 32, 2))

    again = httpx.post(url, json={"keypair": {"name": "ops key"}})
    assert again.status_code == 409 and "already exists" in again.json()["conflictingRequest"]["message"]
    imported = httpx.post(url, json={"keypair": {"name": "imported", "public_key": IMPORTED}}).json()["keypair"]
    assert "private_key" not in imported and imported["public_key"] == IMPORTED

    listed = httpx.get(url).json()["keypairs"]
    assert [k["keypair"]["name"] for k in listed] == ["imported", "ops key"]
    assert httpx.get(_compute(cloud_server, "someone-else")).json() == {"keypairs": []}
    shown = httpx.get(f"{url}/imported").json()["keypair"]
    assert (shown["fingerprint"], shown["deleted"]) == (imported["fingerprint"], False)

    assert httpx.delete(f"{url}/imported").status_code == 202
    gone = httpx.get(f"{url}/imported")
    assert gone.status_code == 404 and "imported" in gone.json()["itemNotFound"]["message"]
    assert httpx.delete(f"{url}/imported").status_code == 404


@pytest.mark.parametrize("body, words", [
    ({"keypair": {"name": "no/slash"}}, "the name must be"),
    ({"keypair": {"name": ""}}, "the name must be"),
    ({"keypair": {"name": "k", "public_key": "ssh-rsa not-base64!"}}, "failed to generate fingerprint"),
    ({"keypair": {"name": "k", "public_key": 42}}, "public_key must be a string"),
    ({"keypair": {"name": "k", "type": "pgp"}}, "type must be one of"),
    ({"name": "k"}, "'keypair' map"),
])
def test_a_bad_key_pair_request_is_a_400_naming_what_is_wrong(cloud_server, project, body, words):
    refused = httpx.post(_compute(cloud_server, project), json=body)
    assert refused.status_code == 400, refused.text
    assert words in refused.json()["badRequest"]["message"]


SERVER = {
    "heat_template_version": "2018-08-31",
    "parameters": {"key": {"type": "string"}},
    "resources": {"server": {"type": "OS::Nova::Server",
                             "properties": {"image": "cirros", "flavor": "m1.tiny", "key_name": {"get_param": "key"}}}},
}


def test_a_key_pair_made_through_the_compute_routes_passes_the_keypair_check_while_it_exists(cloud_server, project):
    stacks = f"{cloud_server.endpoint(project)}/stacks"

    def create(name: str) -> httpx.Response:
        return httpx.post(stacks, json={"stack_name": name, "template": SERVER, "parameters": {"key": "deployer"}})

    assert "The Key (deployer) could not be found." in heat_error(create("before"), 400)["message"]
    assert httpx.post(_compute(cloud_server, project), json={"keypair": {"name": "deployer"}}).status_code == 200
    assert create("keyed").status_code == 201
    assert wait_for(heat(cloud_server, project), "keyed").stack_status == "CREATE_COMPLETE"
    # another project's key pair of that name is not this one's
    other = httpx.post(f"{cloud_server.endpoint('p-other')}/stacks",
                       json={"stack_name": "theirs", "template": SERVER, "parameters": {"key": "deployer"}})
    assert "The Key (deployer) could not be found." in heat_error(other, 400)["message"]

    assert httpx.delete(f"{_compute(cloud_server, project)}/deployer").status_code == 202
    assert "The Key (deployer) could not be found." in heat_error(create("after"), 400)["message"]


def test_networks_and_subnets_are_listed_from_the_inventory_and_the_live_stacks(cloud_server, project):
    url = _network(cloud_server, project)
    networks = httpx.get(f"{url}/networks").json()["networks"]
    assert [(n["name"], n["id"], n["router:external"]) for n in networks] == [
        ("public", PUBLIC_ID, True), ("heat-net", "heat-net", False)]
    subnets = httpx.get(f"{url}/subnets").json()["subnets"]
    assert [(s["name"], s["network_id"], s["gateway_ip"]) for s in subnets] == [
        ("public-subnet", PUBLIC_ID, "172.24.4.1")]
    assert networks[0]["subnets"] == [subnets[0]["id"]]

    client = heat(cloud_server, project)
    template = {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": "app-net"}},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.7.0.0/24"}}}}
    client.stacks.create(stack_name="nets", template=template)
    stack = wait_for(client, "nets")
    assert stack.stack_status == "CREATE_COMPLETE"
    net_id = client.resources.get("nets", "net").physical_resource_id
    subnet_id = client.resources.get("nets", "subnet").physical_resource_id

    found = httpx.get(f"{url}/networks", params={"name": "app-net"}).json()["networks"]
    assert [(n["id"], n["subnets"], n["status"]) for n in found] == [(net_id, [subnet_id], "ACTIVE")]
    shown = httpx.get(f"{url}/subnets/{subnet_id}").json()["subnet"]
    assert (shown["network_id"], shown["cidr"], shown["gateway_ip"]) == (net_id, "10.7.0.0/24", "10.7.0.1")
    only_ids = httpx.get(f"{url}/networks", params=[("name", "public"), ("name", "app-net"), ("fields", "id")])
    assert only_ids.json() == {"networks": [{"id": PUBLIC_ID}, {"id": net_id}]}
    # another project's cloud has the inventory, not this project's stacks
    assert "app-net" not in {n["name"] for n in httpx.get(f"{_network(cloud_server, 'p-other')}/networks").json()["networks"]}

    client.stacks.delete(stack.id)
    assert wait_for(client, stack.id).stack_status == "DELETE_COMPLETE"
    assert httpx.get(f"{url}/networks", params={"name": "app-net"}).json() == {"networks": []}
    missing = httpx.get(f"{url}/networks/{net_id}")
    assert missing.status_code == 404 and missing.json()["NeutronError"]["type"] == "NetworkNotFound"


def test_what_the_cloud_routes_do_not_serve_is_a_404_in_the_services_own_words(cloud_server, project):
    servers = httpx.get(f"{cloud_server.url}/cloud/{project}/compute/v2.1/servers/abc")
    assert servers.status_code == 404 and "os-keypairs only" in servers.json()["itemNotFound"]["message"]
    ports = httpx.post(f"{_network(cloud_server, project)}/ports", json={"port": {}})
    assert ports.status_code == 404 and ports.json()["NeutronError"]["type"] == "HTTPNotFound"


def test_the_cloud_routes_ask_for_the_projects_token(token_server):
    url = _compute(token_server, "alpha")
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"X-Auth-Token": token_server.tokens["beta"]}).status_code == 403
    assert httpx.get(url, headers={"X-Auth-Token": token_server.tokens["alpha"]}).json() == {"keypairs": []}
    networks = httpx.get(f"{_network(token_server, 'alpha')}/networks", headers={"X-Auth-Token": "nonsense"})
    assert networks.status_code == 401


NESTED_PORT = """\
heat_template_version: 2015-04-30
parameters:
  fixed_network_id: {type: string}
resources:
  port:
    type: OS::Neutron::Port
    properties:
      network_id: {get_param: fixed_network_id}
"""


def test_a_preview_expands_a_group_whose_members_name_a_network_not_made_yet(cloud_server, project):
    """With networks in the inventory, the member's network is the name standing for the network
    the stack will make: a preview lists the member's port (Heat checks no values in nested stacks)."""
    template = {"heat_template_version": "2015-04-30", "resources": {
        "fixed_network": {"type": "OS::Neutron::Net"},
        "rg": {"type": "OS::Heat::ResourceGroup", "properties": {"count": 1, "resource_def": {
            "type": "nested.yaml", "properties": {"fixed_network_id": {"get_resource": "fixed_network"}}}}}}}
    preview = heat(cloud_server, project).stacks.preview(stack_name="pv", template=template,
                                                          files={"nested.yaml": NESTED_PORT}).to_dict()
    fixed_network, members = preview["resources"]
    assert isinstance(members, list), f"the group is not expanded: {members}"
    assert fixed_network["resource_name"] == "fixed_network"
    (port,), = members
    assert (port["resource_name"], port["properties"]["network"]) == ("port", "fixed_network")
    # a create still checks the member's network: the one made by the stack, so it passes
    client = heat(cloud_server, project)
    client.stacks.create(stack_name="grouped", template=template, files={"nested.yaml": NESTED_PORT})
    assert wait_for(client, "grouped").stack_status == "CREATE_COMPLETE"
