"""Heat's OpenStack resource types through ``stoker template validate`` and ``stoker resource type``:
checked against Heat's own schemas, with no cloud."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import pytest

from stoker.resources.openstack import inventory


@pytest.fixture(autouse=True)
def no_inventory(monkeypatch, tmp_path):
    """No inventory from the outside (``--inventory`` sets the variable: restored after the test)."""
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))


def test_a_misspelt_server_property_and_attribute_are_refused_with_place_and_suggestion(stoker):
    errors = stoker.validate_errors("openstack/server_typo.yaml")
    stoker.assert_errors(errors, [
        ("resources.server.properties.netwroks", "unknown-property", 10, 7,
         'Unknown Property netwroks; did you mean "networks"?'),
        ("outputs.address.value.get_attr", "unknown-attribute", 13, 13,
         'OS::Nova::Server has no attribute \'first_adress\'; did you mean "first_address"?'),
    ], file="openstack/server_typo.yaml")


def test_property_values_are_checked_against_heats_schema(stoker, tmp_path):
    template = tmp_path / "values.yaml"
    template.write_text("""
heat_template_version: 2021-04-16
resources:
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: private, ip_version: 5, cidr: 10.0.0.0/24}
  volume:
    type: OS::Cinder::Volume
    properties: {size: 0}
  server:
    type: OS::Nova::Server
    properties: {image: cirros}
""")
    # Heat's verdict: values are checked at create, so validate warns of them
    warnings = stoker.validate_warnings(str(template))
    found = {(w["path"], w["code"]) for w in warnings}
    assert ("resources.subnet.properties.ip_version", "constraint-violation") in found
    assert ("resources.volume.properties.size", "constraint-violation") in found
    assert ("resources.server.properties", "required-property") in found
    by_path = {w["path"]: w["message"] for w in warnings}
    assert "5 is not an allowed value [4, 6]" in by_path["resources.subnet.properties.ip_version"]
    assert "0 is out of range (min: 1, max: None)" in by_path["resources.volume.properties.size"]
    assert "Property flavor not assigned" in by_path["resources.server.properties"]


def test_a_mapping_in_the_environment_wins_over_the_simulated_type(stoker, tmp_path):
    environment = tmp_path / "env.yaml"
    environment.write_text("resource_registry:\n  OS::Nova::Server: OS::Heat::None\n")
    # mapped to None: nothing of the server is checked any more (as before simulated types)
    document = stoker.valid("openstack/server_typo.yaml", env=[str(environment)])
    assert document["Description"].startswith("An OS::Nova::Server")


def test_service_constraints_without_an_inventory_warn_and_with_one_are_checked(stoker, tmp_path):
    template = "openstack/network.yaml"
    warnings = stoker.validate_warnings(template)
    assert [(w["path"], w["code"]) for w in warnings] == [
        ("parameters.flavor.constraints.0.custom_constraint", "unchecked-constraint"),
        ("resources.server.properties.image", "unchecked-constraint")]
    assert "nova.flavor" in warnings[0]["message"] and "inventory" in warnings[0]["message"]
    assert warnings[1]["message"] == ('1 value(s) of "glance.image" not checked: no cloud inventory '
                                      "(--inventory) lists them; the first is here")
    # an inventory listing images checks them, and warns no more
    assert [w["path"] for w in stoker("--inventory", "openstack/cloud.yaml", "template", "validate", "-t", template,
                                      "-f", "json").expect(0).json.get("Warnings", [])] == []

    assert stoker.validate(template, extra=["-P", "flavor=m1.large"]).expect(0)
    run = stoker("--inventory", "openstack/cloud.yaml", "template", "validate", "-t", template,
                 "-P", "flavor=m1.huge", "-f", "json").expect(1)
    assert run.json[0]["path"] == "parameters.flavor"
    assert run.json[0]["message"] == "Error validating value 'm1.huge': The Flavor ID (m1.huge) could not be found."
    ok = stoker("--inventory", "openstack/cloud.yaml", "template", "validate", "-t", template,
                "-P", "flavor=5", "-f", "json").expect(0).json  # by id too
    assert "Warnings" not in ok


@pytest.mark.parametrize("content, message", [
    ("flavors: m1.small\n", "flavors must be a list"),
    ("clouds: []\n", "unknown section 'clouds'"),
    ("flavors: [[1]]\n", "flavors[0] must be a name or a map"),
    ("flavors: [\n", "inventory"),
])
def test_a_bad_inventory_is_refused_in_one_line(stoker, tmp_path, content, message):
    bad = tmp_path / "cloud.yaml"
    bad.write_text(content)
    run = stoker("--inventory", str(bad), "template", "validate", "-t", "openstack/network.yaml")
    assert run.exit_code == 1
    assert message in run.stderr and "Traceback" not in run.output
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("path, message", [
    ("/dev/zero", "not a regular file"),
    ("big", "max_template_size"),
    ("deep", "max_nesting"),
])
def test_a_hostile_inventory_is_refused_quickly_in_one_line(stoker, tmp_path, path, message):
    if path == "big":
        path = tmp_path / "big.yaml"
        path.write_text("flavors: [" + "m1.small, " * 100_000 + "]\n")
    elif path == "deep":
        path = tmp_path / "deep.yaml"
        path.write_text("flavors: " + "[" * 5_000 + "]" * 5_000 + "\n")
    run = stoker("--inventory", str(path), "template", "validate", "-t", "openstack/network.yaml")
    assert run.exit_code == 1 and message in run.stderr and "Traceback" not in run.output
    assert len(run.stderr.strip().splitlines()) == 1


def test_resource_type_list_and_show(stoker):
    listed = stoker("resource", "type", "list", "-f", "json").expect(0).json
    names = [row["resource_type"] for row in listed]
    assert {"OS::Nova::Server", "OS::Neutron::Port", "OS::Octavia::LoadBalancer", "OS::Heat::None"} <= set(names)
    assert "OS::Glance::Image" not in names  # hidden in Heat 27
    assert len(names) > 150

    nova = stoker("resource", "type", "list", "--filter", "name=Nova", "-f", "value").expect(0).stdout.split()
    assert "OS::Nova::Server" in nova and all("Nova" in name for name in nova)

    shown = stoker("resource", "type", "show", "OS::Nova::Server", "-f", "json").expect(0).json
    flavor = shown["properties"]["flavor"]
    assert flavor["required"] and flavor["update_allowed"] and flavor["type"] == "string"
    assert flavor["constraints"] == [{"custom_constraint": "nova.flavor"}]
    assert shown["properties"]["networks"]["schema"]["*"]["schema"]["port"]["type"] == "string"
    assert shown["attributes"]["addresses"]["type"] == "map"
    assert "first_address" not in shown["attributes"]  # hidden in Heat 27 (get_attr still reads it)
    assert shown["support_status"]["status"] == "SUPPORTED"

    generated = stoker("resource", "type", "show", "OS::Cinder::Volume", "--template-type", "hot",
                       "-f", "json").expect(0).json
    assert generated["resources"]["Volume"] == {
        "type": "OS::Cinder::Volume",
        "properties": {name: {"get_param": name} for name in generated["parameters"]}}

    missing = stoker("resource", "type", "show", "OS::Nova::Sever")
    assert missing.exit_code == 1 and "Did you mean OS::Nova::Server" in missing.stderr


def test_removed_types_are_placeholders_and_open_types_take_any_attribute(stoker, tmp_path):
    template = tmp_path / "open.yaml"
    template.write_text("""
heat_template_version: 2016-10-14
resources:
  restarter:
    type: OS::Heat::HARestarter
    properties: {InstanceId: anything, whatever: 1}
  deployment:
    type: OS::Heat::StructuredDeployment
    properties: {server: s1}
outputs:
  result: {value: {get_attr: [deployment, result]}}
  restarter: {value: {get_attr: [restarter, AlarmUrl]}}
""")
    assert "Warnings" not in stoker.valid(str(template))
    shown = stoker("resource", "type", "show", "OS::Heat::HARestarter", "-f", "json").expect(0).json
    assert shown["support_status"]["status"] == "HIDDEN"


def test_an_inventory_gone_after_the_start_fails_the_check_in_one_line(stoker, tmp_path, monkeypatch):
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, str(tmp_path / "gone.yaml"))
    errors = stoker("template", "validate", "-t", "openstack/network.yaml", "-f", "json")
    assert errors.exit_code == 1 and "Traceback" not in errors.output
    assert "cannot be read" in errors.stderr  # the command's own check, before anything runs
    from stoker.constraints import custom

    check = custom.get("nova.flavor")
    assert not custom.is_unchecked("nova.flavor")
    assert "gone.yaml: cannot be read" in check.error("m1.small")


def test_update_policies_are_checked_against_heats_schema(stoker, tmp_path):
    template = tmp_path / "policy.yaml"
    template.write_text("""
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::InstanceGroup
    properties: {LaunchConfigurationName: config, Size: 2, AvailabilityZones: [nova]}
    update_policy:
      RollingUpdate: {MinInstancesInService: 1, MaxBatchSize: 1}
""")
    stoker.valid(str(template))
    template.write_text(template.read_text().replace("RollingUpdate", "RolingUpdate"))
    errors = stoker.validate_errors(str(template))
    assert [(e["path"], e["code"]) for e in errors] == [("resources.group.update_policy.RolingUpdate",
                                                         "unknown-property")]
    assert 'did you mean "RollingUpdate"?' in errors[0]["message"]



def _physical_ids(stoker, stack: str) -> dict:
    rows = stoker("stack", "resource", "list", stack, "-f", "json").expect(0).json
    return {row["resource_name"]: row["physical_resource_id"] for row in rows}


def test_heats_deprecated_property_names_create_and_read_under_their_new_names(stoker, monkeypatch, tmp_path):
    """As Heat's translation rules: ``network_id``, ``fixed_ips``' ``subnet_id``, ``router_id``,
    ``floating_network_id``, a server network's ``uuid`` are taken for their new names."""
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    template = "openstack/old_names.yaml"
    warnings = stoker("template", "validate", "-t", template, "-f", "json").expect(0).json["Warnings"]
    assert {w["code"] for w in warnings} == {"unchecked-constraint"}
    stoker("stack", "create", "-t", template, "old", "--wait").expect(0)
    values = {o["output_key"]: o["output_value"]
              for o in stoker("stack", "output", "show", "old", "--all", "-f", "json").expect(0).json}
    net, subnet = values["net_id"], values["subnet_id"]
    assert values["port_network"] == values["port_network_attr"] == values["subnet_network"] == net
    assert [ip["subnet_id"] for ip in values["fixed_ips"]] == [subnet]
    assert values["fixed_ips"][0]["ip_address"].startswith("10.1.2.")
    assert values["floating_network"] == "public"
    assert list(values["server_networks"]) == [net, "private"]

    # the same template with the new names is the same stack: nothing is updated or replaced
    ids = _physical_ids(stoker, "old")
    renamed = tmp_path / "new_names.yaml"
    text = Path(template).read_text()  # the fixture runs in tests/templates
    for old, new in (("network_id:", "network:"), ("subnet_id:", "subnet:"), ("router_id:", "router:"),
                     ("floating_network_id:", "floating_network:"), ("uuid:", "network:")):
        text = text.replace(old, new)
    renamed.write_text(text)
    events = stoker("stack", "update", "-t", str(renamed), "old", "--wait").expect(0).output
    assert "UPDATE_COMPLETE Stack UPDATE completed" in events and "[port]" not in events
    assert _physical_ids(stoker, "old") == ids


def test_an_old_and_a_new_name_both_given_are_refused_as_heat_does(stoker, tmp_path):
    template = tmp_path / "both.yaml"
    port = {"type": "OS::Neutron::Port", "properties": {"network": "n", "fixed_ips": [
        {"subnet": "a"}, {"subnet": "b", "subnet_id": "c"}]}}
    template.write_text(json.dumps({"heat_template_version": "2021-04-16", "resources": {"port": port}}))
    errors = stoker.validate_errors(str(template))
    assert [(e["path"], e["code"], e["message"]) for e in errors] == [
        ("resources.port.properties.fixed_ips.1", "property-conflict",
         "Cannot define the following properties at the same time: fixed_ips.subnet, fixed_ips.subnet_id")]


def test_a_map_left_out_whose_keys_are_required_is_no_error_as_in_heat(stoker, monkeypatch, tmp_path):
    """A router with no ``external_gateway_info`` (its ``network`` is required only when it is given)."""
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    template = tmp_path / "router.yaml"
    template.write_text("""
heat_template_version: 2021-04-16
resources:
  router: {type: OS::Neutron::Router}
  gateway:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {enable_snat: true}}
outputs:
  info: {value: {get_attr: [router, external_gateway_info]}}
""")
    # given without its network: an error at create (a warning of validate, as Heat's verdict)
    warnings = stoker.validate_warnings(str(template))
    assert [(w["path"], w["message"]) for w in warnings if w["code"] == "required-property"] == [
        ("resources.gateway.properties.external_gateway_info", "Property network not assigned (an error at create)")]
    stoker("stack", "create", "-t", str(template), "gateway", "--wait").expect(1)
    template.write_text(template.read_text().replace("{enable_snat: true}", "{network: public}"))
    stoker("stack", "create", "-t", str(template), "router", "--wait").expect(0)
    assert stoker("stack", "output", "show", "router", "info", "-f", "json").expect(0).json["output_value"] == {}


def test_types_of_a_service_the_inventory_leaves_out_are_unavailable(stoker, tmp_path):
    cloud = tmp_path / "cloud.yaml"
    cloud.write_text("services: [nova, neutron]\n")
    template = tmp_path / "share.yaml"
    template.write_text("heat_template_version: 2015-10-15\nresources:\n  share:\n    type: OS::Manila::Share\n"
                        "    properties: {share_protocol: NFS, size: 1}\n")
    run = stoker("--inventory", str(cloud), "template", "validate", "-t", str(template))
    assert run.exit_code == 1 and "Traceback" not in run.output
    assert ("resources.share.type" in run.output and "Service manila is not available for resource type "
            "OS::Manila::Share, reason: Service endpoint not in service catalog." in run.output), run.output
    listed = stoker("--inventory", str(cloud), "resource", "type", "list", "-f", "json").json
    names = {row["resource_type"] for row in listed}
    assert {"OS::Nova::Server", "OS::Neutron::Port", "OS::Heat::None"} <= names
    assert not {"OS::Manila::Share", "OS::Cinder::Volume"} & names
    # without a services section every service is there
    cloud.write_text("flavors: [m1.small]\n")
    assert stoker("--inventory", str(cloud), "template", "validate", "-t", str(template)).exit_code == 0


def test_an_elastic_ips_reference_is_its_address_and_its_id_the_allocation(stoker, monkeypatch, tmp_path):
    """As Heat's ``AWS::EC2::EIP``: ``Ref``/``get_resource`` give the address (so an association's
    ``EIP``, an ``ip_addr``, takes it), ``AllocationId`` the id; an association's is its name."""
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    template = tmp_path / "eip.yaml"
    template.write_text("""
heat_template_version: 2013-05-23
resources:
  server:
    type: AWS::EC2::Instance
    properties: {ImageId: cirros, InstanceType: m1.small}
  eip:
    type: AWS::EC2::EIP
    properties: {InstanceId: {get_resource: server}}
  association:
    type: AWS::EC2::EIPAssociation
    properties: {EIP: {get_resource: eip}, InstanceId: {get_resource: server}}
outputs:
  address: {value: {get_resource: eip}}
  allocation: {value: {get_attr: [eip, AllocationId]}}
  association: {value: {get_resource: association}}
""")
    stoker("stack", "create", "-t", str(template), "ips", "--wait").expect(0)
    values = {o["output_key"]: o["output_value"]
              for o in stoker("stack", "output", "show", "ips", "--all", "-f", "json").expect(0).json}
    assert ipaddress.ip_address(values["address"]) in ipaddress.ip_network("172.24.4.0/24")
    assert values["allocation"] == _physical_ids(stoker, "ips")["eip"]
    assert re.fullmatch("ips-association-[a-z0-9]{12}", values["association"])


def test_a_resource_with_an_external_id_is_adopted_without_its_properties_checked(stoker, monkeypatch, tmp_path):
    """As Heat: an existing resource is taken over as it is, so neither ``template validate`` nor
    the create checks its properties (a server without its required flavor); an empty id fails."""
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    template = tmp_path / "adopt.yaml"
    template.write_text("""
heat_template_version: 2018-08-31
resources:
  server:
    type: OS::Nova::Server
    external_id: 0c0ffee0-0000-4000-8000-000000000001
    properties: {image: cirros}
  volume:
    type: OS::Cinder::Volume
    properties: {size: 1}
outputs:
  server: {value: {get_resource: server}}
""")
    assert stoker("template", "validate", "-t", str(template), "-f", "json").expect(0).json.get("Warnings", []) == []
    stoker("stack", "create", "-t", str(template), "adopting", "--wait").expect(0)
    rows = {row["resource_name"]: row
            for row in stoker("stack", "resource", "list", "adopting", "-f", "json").expect(0).json}
    assert rows["server"]["resource_status"] == "CHECK_COMPLETE"
    assert rows["server"]["physical_resource_id"] == "0c0ffee0-0000-4000-8000-000000000001"
    assert rows["volume"]["resource_status"] == "CREATE_COMPLETE"

    template.write_text(template.read_text().replace("0c0ffee0-0000-4000-8000-000000000001", "''"))
    failed = stoker("stack", "create", "-t", str(template), "empty", "--wait")
    assert failed.exit_code == 1 and "Resource ID was not provided." in failed.output
