"""Stacks of Heat's OpenStack types, simulated offline: created, updated (in place, replaced or
refused as Heat decides), suspended, resumed, checked and deleted, with realistic attributes, a
cloud inventory for service constraints, and injected faults for rollbacks and timeouts."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
import yaml

from stoker.engine.engine import Engine
from stoker.errors import ValidationFailed
from stoker.resources.openstack import inventory
from stoker.resources.openstack.simulated import SimulatedResource
from stoker.resources.resource import Resource
from stoker.template.environment import Environment, load_environments
from stoker.template.loader import load

from .helpers import hot, outputs_by_key, physical_ids, resources_by_name, statuses

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "openstack"
NETWORK = TEMPLATES / "network.yaml"


@pytest.fixture(autouse=True)
def no_inventory(monkeypatch):
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")


@pytest.fixture
def cloud(tmp_path, monkeypatch):
    """Use an inventory: ``cloud(data)`` writes it and puts it in force."""
    def use(data: dict) -> Path:
        path = tmp_path / "cloud.yaml"
        path.write_text(yaml.safe_dump(data))
        monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, str(path))
        return path
    return use


def outputs(engine: Engine, name: str) -> dict:
    return {key: o["output_value"] for key, o in outputs_by_key(engine.outputs(name)).items()}


def test_a_server_on_a_port_of_a_subnet_creates_offline_with_realistic_outputs(engine):
    created = engine.create_stack("net", NETWORK)
    assert created["stack_status"] == "CREATE_COMPLETE", created
    ids = physical_ids(engine, "net")
    values = outputs(engine, "net")

    subnet = ipaddress.ip_network("192.168.10.0/24")
    address = values["first_address"]
    assert ipaddress.ip_address(address) in subnet and address not in ("192.168.10.0", "192.168.10.1")
    assert values["fixed_ips"] == [{"subnet_id": ids["subnet"], "ip_address": address}]
    assert values["subnet_id"] == ids["subnet"]
    assert values["gateway"] == "192.168.10.1"
    assert values["networks"] == {ids["net"]: [address], "private": [address]}
    assert values["mac"].startswith("fa:16:3e:") and len(values["mac"].split(":")) == 6
    assert values["size"] == 2 and values["volume_status"] == "available"

    server = engine.resource("net", "server")
    assert server["simulated"] is True
    assert server["attributes"]["addresses"]["private"][0]["addr"] == address
    assert server["attributes"]["addresses"]["private"][0]["OS-EXT-IPS-MAC:mac_addr"] == values["mac"]
    assert all(row["simulated"] for row in engine.resources("net"))
    assert engine.show_stack("net")["simulated_resources"] == ["net", "port", "server", "subnet", "volume"]

    # the same stack answers the same, from another engine (another process) too
    again = Engine(db_url=engine._db_url)
    try:
        assert outputs(again, "net") == values and physical_ids(again, "net") == ids
    finally:
        again.close()
    # another stack gets its own ids
    engine.create_stack("other", NETWORK)
    assert set(physical_ids(engine, "other").values()).isdisjoint(ids.values())


@pytest.mark.sqlite_only
def test_update_in_place_replace_and_refusal_follow_the_schema(engine):
    engine.create_stack("up", NETWORK)
    before = physical_ids(engine, "up")

    # size may be updated in place; a subnet's cidr may not (replaced), and the port that
    # names the subnet follows it in place, with an address in the new subnet
    info = engine.update_stack("up", NETWORK, parameters={"size": 5, "cidr": "10.1.0.0/24"})
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    after = physical_ids(engine, "up")
    assert after["volume"] == before["volume"] and after["port"] == before["port"]
    assert after["subnet"] != before["subnet"]
    values = outputs(engine, "up")
    assert values["size"] == 5
    assert values["fixed_ips"][0]["subnet_id"] == after["subnet"]
    assert ipaddress.ip_address(values["fixed_ips"][0]["ip_address"]) in ipaddress.ip_network("10.1.0.0/24")

    # a server's availability zone is not updatable: replaced
    engine.update_stack("up", NETWORK, parameters={"size": 5, "cidr": "10.1.0.0/24", "zone": "other"})
    server = physical_ids(engine, "up")["server"]
    assert server != after["server"]
    # its flavor is resized in place, unless its flavor_update_policy says REPLACE (as Heat's server)
    engine.update_stack("up", NETWORK, parameters={"size": 5, "cidr": "10.1.0.0/24", "zone": "other",
                                                   "flavor": "m1.large"})
    assert physical_ids(engine, "up")["server"] == server
    replacing = load(NETWORK.read_text())
    replacing["resources"]["server"]["properties"]["flavor_update_policy"] = "REPLACE"
    engine.update_stack("up", replacing, parameters={"size": 5, "cidr": "10.1.0.0/24", "zone": "other"})
    assert physical_ids(engine, "up")["server"] != server

    # an immutable property: the update is refused, as Heat refuses it
    trunk = hot({"net": {"type": "OS::Neutron::Net"},
                 "p1": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
                 "p2": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
                 "trunk": {"type": "OS::Neutron::Trunk", "properties": {"port": {"get_resource": "p1"}}}})
    engine.create_stack("trunk", trunk)
    trunk["resources"]["trunk"]["properties"]["port"] = {"get_resource": "p2"}
    refused = engine.update_stack("trunk", trunk)
    assert refused["stack_status"] == "UPDATE_FAILED"
    assert "Update to properties port of trunk (OS::Neutron::Trunk) is not supported" in refused["stack_status_reason"]


def test_a_servers_addresses_follow_its_port_updated_in_place(engine):
    engine.create_stack("moved", NETWORK)
    server = physical_ids(engine, "moved")["server"]
    engine.update_stack("moved", NETWORK, parameters={"cidr": "10.7.0.0/24"})  # the port moves in place
    ids = physical_ids(engine, "moved")
    assert ids["server"] == server
    values = outputs(engine, "moved")
    address = values["fixed_ips"][0]["ip_address"]
    assert ipaddress.ip_address(address) in ipaddress.ip_network("10.7.0.0/24")
    assert values["first_address"] == address
    assert values["networks"] == {ids["net"]: [address], "private": [address]}


@pytest.mark.sqlite_only
def test_suspend_resume_check_delete_and_deletion_policies(engine):
    template = load(NETWORK.read_text())
    template["resources"]["volume"]["deletion_policy"] = "Snapshot"
    template["resources"]["net"]["deletion_policy"] = "Retain"
    engine.create_stack("life", template)
    engine.suspend_stack("life")
    assert set(statuses(engine, "life").values()) == {"SUSPEND_COMPLETE"}
    assert outputs(engine, "life")["server_status"] == "SUSPENDED"
    engine.resume_stack("life")
    assert outputs(engine, "life")["server_status"] == "ACTIVE"
    assert engine.check_stack("life")["stack_status"] == "CHECK_COMPLETE"
    deleted = engine.delete_stack("life")
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted
    events = [(e["resource_name"], e["resource_status_reason"]) for e in engine.events(deleted["id"])]
    assert ("net", "retained (deletion_policy Retain)") in events

    # Snapshot only where Heat allows it
    template["resources"]["subnet"]["deletion_policy"] = "Snapshot"
    with pytest.raises(ValidationFailed, match='"Snapshot" deletion policy not supported'):
        engine.validate_template(template, at_validate=True)


@pytest.mark.sqlite_only
def test_service_constraints_check_the_inventory_and_the_stacks_own_resources(engine, cloud):
    cloud({"flavors": ["m1.small"], "networks": [{"name": "public", "id": "6c3b2a1e"}],
           "subnets": [{"name": "public-subnet", "cidr": "172.24.4.0/24", "network": "public"}]})
    template = hot({
        "net": {"type": "OS::Neutron::Net"},
        "own": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
        "outside": {"type": "OS::Neutron::Port", "properties": {"network": "public"}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "flavor": {"get_param": "flavor"}, "networks": [{"network": "6c3b2a1e"}]}},
    }, parameters={"flavor": {"type": "string", "default": "m1.small"}},
        outputs={"outside": {"value": {"get_attr": ["outside", "fixed_ips", 0, "ip_address"]}},
                 "server": {"value": {"get_attr": ["server", "networks", "public", 0]}}})
    created = engine.create_stack("inv", template)
    assert created["stack_status"] == "CREATE_COMPLETE", created  # the stack's own net is known
    values = outputs(engine, "inv")
    for key in ("outside", "server"):  # addresses in the inventory's subnet of that network
        assert ipaddress.ip_address(values[key]) in ipaddress.ip_network("172.24.4.0/24"), values

    with pytest.raises(ValidationFailed) as refused:
        engine.create_stack("bad", template, parameters={"flavor": "m1.huge"})
    assert [(".".join(p.path), p.message) for p in refused.value.problems] == [
        ("resources.server.properties.flavor",
         "Error validating value 'm1.huge': The Flavor ID (m1.huge) could not be found.")]


@pytest.mark.sqlite_only
def test_an_injected_failure_rolls_the_create_back(engine, cloud):
    cloud({"faults": [{"resource": "server", "action": "create", "fail": "No valid host was found",
                       "seconds": 0.2}]})
    info = engine.create_stack("roll", NETWORK, disable_rollback=False)
    assert info["stack_status"] == "ROLLBACK_COMPLETE", info
    events = [(e["resource_name"], e["resource_status"], e["resource_status_reason"])
              for e in engine.events("roll")]
    assert ("server", "CREATE_FAILED", "InjectedFailure: resources.server: No valid host was found") in events
    assert {row["resource_status"] for row in engine.resources("roll")} <= {"DELETE_COMPLETE"}


@pytest.mark.sqlite_only
def test_injected_faults_hit_a_type_or_an_action(engine, cloud):
    cloud({"faults": [{"type": "OS::Cinder::Volume", "action": "delete", "fail": True}]})
    assert engine.create_stack("typed", NETWORK)["stack_status"] == "CREATE_COMPLETE"
    deleted = engine.delete_stack("typed")
    assert deleted["stack_status"] == "DELETE_FAILED"
    assert statuses(engine, "typed")["volume"] == "DELETE_FAILED"
    assert "injected failure" in resources_by_name(engine, "typed")["volume"]["resource_status_reason"]

    cloud({"faults": [{"resource": "volume", "seconds": "long"}]})
    failed = engine.create_stack("slow", NETWORK)
    assert "seconds must be a number from 0 to 86400" in failed["stack_status_reason"]


def test_faults_in_an_environment_are_refused_as_heat_refuses_them_pointing_at_the_inventory(tmp_path):
    """Heat refuses an environment with a section it does not know, so faults stay in the inventory."""
    env = tmp_path / "env.yaml"
    env.write_text(yaml.safe_dump({"faults": [{"resource": "server", "fail": True}]}))
    with pytest.raises(ValidationFailed) as refused:
        load_environments([env])
    [problem] = refused.value.problems
    assert problem.code == "unknown-section"
    assert problem.message.endswith("(injected faults go in the cloud inventory: --inventory FILE)")


def test_a_plugin_for_the_type_wins_over_simulation(make_engine, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "server.py").write_text(
        "from stoker.resources.resource import Resource\n"
        "class Server(Resource):\n"
        "    '''A real server plug-in.'''\n"
        "def resource_mapping():\n"
        "    return {'OS::Nova::Server': Server}\n")
    engine = make_engine(plugin_dirs=[str(plugins)])
    cls = engine.resource_class("OS::Nova::Server")
    assert issubclass(cls, Resource) and not issubclass(cls, SimulatedResource)
    assert issubclass(engine.resource_class("OS::Nova::Flavor"), SimulatedResource)


@pytest.mark.sqlite_only
def test_a_resource_registry_mapping_wins_over_simulation(engine):
    mapped = Environment.from_dict({"resource_registry": {"OS::Cinder::Volume": "OS::Heat::None"}})
    engine.create_stack("mapped", NETWORK, environment=mapped)
    assert "simulated" not in engine.resource("mapped", "volume")
    assert outputs(engine, "mapped")["size"] is None
    assert "volume" not in engine.show_stack("mapped")["simulated_resources"]


@pytest.mark.sqlite_only
def test_an_injected_wait_meets_the_stacks_timeout(engine, cloud):
    cloud({"faults": [{"resource": "volume", "action": "create", "seconds": 600}]})
    info = engine.create_stack("late", NETWORK, timeout_mins=0.01)  # 0.6 s: the volume takes 10 minutes
    assert info["stack_status"] == "CREATE_FAILED", info
    assert "Timed out after 0.6 seconds" in info["stack_status_reason"]
    volume = resources_by_name(engine, "late")["volume"]
    assert (volume["resource_status"], volume["resource_status_reason"]) == ("CREATE_FAILED", "CREATE timed out")


def test_a_simulated_network_of_another_stack_is_part_of_the_cloud_while_it_exists(engine, cloud):
    cloud({"networks": ["public"]})
    engine.create_stack("base", hot({"net": {"type": "OS::Neutron::Net"}}))
    net = physical_ids(engine, "base")["net"]
    on_it = hot({"port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": "net"}}}},
                parameters={"net": {"type": "string"}})
    assert engine.create_stack("user", on_it, parameters={"net": net})["stack_status"] == "CREATE_COMPLETE"
    engine.delete_stack("base")
    with pytest.raises(ValidationFailed, match=f"Unable to find network with name or id '{net}'"):
        engine.create_stack("late", on_it, parameters={"net": net})


@pytest.mark.sqlite_only
def test_floating_ips_key_pairs_load_balancers_and_ports_named_by_network_only(engine, cloud):
    cloud({"networks": ["public"], "subnets": [{"name": "public-subnet", "cidr": "172.24.4.0/24", "network": "public"}]})
    template = hot({
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.5.0.0/24"}},
        # no subnet named: the network's subnet, whether the walk created it first or not
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
        "fip": {"type": "OS::Neutron::FloatingIP",
                "properties": {"floating_network": "public", "port_id": {"get_resource": "port"}}},
        "key": {"type": "OS::Nova::KeyPair", "properties": {"name": "ops"}},
        "lb": {"type": "OS::Octavia::LoadBalancer", "properties": {"vip_subnet": {"get_resource": "subnet"}}},
    }, outputs={key: {"value": {"get_attr": path}} for key, path in {
        "port": ["port", "fixed_ips", 0], "fip": ["fip", "floating_ip_address"],
        "fixed": ["fip", "fixed_ip_address"], "key": ["key", "public_key"], "vip": ["lb", "vip_address"],
        "vip_subnet": ["lb", "vip_subnet_id"], "subnets": ["net", "subnets"]}.items()})
    engine.create_stack("edge", template)
    ids = physical_ids(engine, "edge")
    values = outputs(engine, "edge")
    local, public = ipaddress.ip_network("10.5.0.0/24"), ipaddress.ip_network("172.24.4.0/24")
    assert values["port"]["subnet_id"] == ids["subnet"] and ipaddress.ip_address(values["port"]["ip_address"]) in local
    assert values["subnets"] == [ids["subnet"]]
    assert ipaddress.ip_address(values["fip"]) in public and values["fixed"] == values["port"]["ip_address"]
    assert values["key"].startswith("ssh-ed25519 ") and values["key"].endswith(" ops")
    assert ipaddress.ip_address(values["vip"]) in local and values["vip_subnet"] == ids["subnet"]
