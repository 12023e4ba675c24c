"""The values of OpenStack types' properties, checked by the checkers each schema builds once:
literals of every property type, calls resolved (static ones used as parsed), calls waiting for a
resource, lists and maps with nested schemas, the size limit and service constraints; every
problem at its place with Heat's words (the same list as the generic reading gave)."""

from __future__ import annotations

import pytest
import yaml

from stoker.resources.openstack import inventory
from stoker.template.template import Template

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  config: {type: json, default: {a: 1}}
  flavor: {type: string, default: m1.small}
  OS::stack_name: {type: string, default: mine}
resources:
  net:
    type: OS::Neutron::Net
    properties:
      name: {list_join: ["-", ["net", "a"]]}
      admin_state_up: "yes"
  long:
    type: OS::Neutron::Net
    properties:
      name: {list_join: ["-", ["0123456789012345678901234567890123456789", "0123456789012345678901234567890123456789"]]}
  subnet:
    type: OS::Neutron::Subnet
    properties:
      network: {get_resource: net}
      cidr: 10.0.0.300/24
      ip_version: 5
      enable_dhcp: 1
      dns_nameservers: [8.8.8.8, {get_param: flavor}]
      allocation_pools: [{start: 10.0.0.10, end: not-an-ip}, 7]
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: net}
      fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.0.0.999}]
      security_groups: default
  server:
    type: OS::Nova::Server
    properties:
      name: {get_param: config}
      flavor: {get_param: flavor}
      image: {str_replace: {template: img-N, params: {N: 3}}}
      metadata: [1, 2]
      user_data_format: BAD
      networks: [{port: {get_resource: port}, fixed_ip: 10.1.1.1.1}, {network: net0, fixd_ip: x}]
      user_data: {get_param: OS::stack_name}
  volume:
    type: OS::Cinder::Volume
    properties:
      size: 0
      name: {str_replace: {template: vol-NNNNNNNNNNNNNNNNNNNN, params: {N: "0123456789"}}}
  volume2:
    type: OS::Cinder::Volume
    properties:
      size: "3"
      name: {list_join: [",", []]}
      metadata: {a: 1, b: [2]}
"""

IP = "Invalid IP address"
EVERY_TIME = [
    (("long", "name", "list_join"), "result-too-large",
     'The result of "list_join" (1 pieces of about 82 bytes) would be 82 bytes or more, over the limit of 64 '
     "bytes (max_value_size)"),
    (("net", "admin_state_up"), "invalid-property-value", '"yes" is not a valid boolean'),
    (("port", "fixed_ips", 0, "ip_address"), "constraint-violation", f"Error validating value '10.0.0.999': {IP}"),
    (("port", "security_groups"), "invalid-property-value", "\"'default'\" is not a list"),
    (("server", "metadata"), "invalid-property-value", '"[1, 2]" is not a map'),
    (("server", "name"), "invalid-property-value", "Value must be a string; got {'a': 1}"),
    (("server", "networks", 0, "fixed_ip"), "constraint-violation", f"Error validating value '10.1.1.1.1': {IP}"),
    (("server", "networks", 1, "fixd_ip"), "unknown-property", 'Unknown Property fixd_ip; did you mean "fixed_ip"?'),
    (("server", "user_data_format"), "constraint-violation",
     '"BAD" is not an allowed value ["HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG"]'),
    (("subnet", "allocation_pools", 0, "end"), "constraint-violation", f"Error validating value 'not-an-ip': {IP}"),
    (("subnet", "allocation_pools", 1), "invalid-property-value", '"7" is not a map'),
    (("subnet", "cidr"), "constraint-violation",
     "Error validating value '10.0.0.300/24': '10.0.0.300/24' is not a valid IP subnet"),
    (("subnet", "enable_dhcp"), "invalid-property-value", '"1" is not a valid boolean'),
    (("subnet", "ip_version"), "constraint-violation", "5 is not an allowed value [4, 6]"),
    (("volume", "name", "str_replace"), "result-too-large",
     'The result of "str_replace" (1 pieces of about 204 bytes) would be 204 bytes or more, over the limit of '
     "64 bytes (max_value_size)"),
    (("volume", "size"), "constraint-violation", "0 is out of range (min: 1, max: None)"),
]


def problems(engine) -> list[tuple]:
    """(resource and place under its properties, code, severity, message), sorted by place."""
    _, found = engine.check_template(Template.from_text(TEMPLATE, "values.yaml"))
    return sorted(((p.path[1:2] + p.path[3:], p.code, p.severity, p.message) for p in found.items), key=str)


def errors(expected: list[tuple]) -> list[tuple]:
    return [(path, code, "error", message) for path, code, message in expected]


def by_place(found: list[tuple]) -> list[tuple]:
    return sorted(found, key=str)


@pytest.fixture(autouse=True)
def small_values(monkeypatch):
    monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "64")


def test_every_value_problem_at_its_place_without_an_inventory(engine, monkeypatch):
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")
    assert problems(engine) == by_place(errors(EVERY_TIME) + [
        (("server", "networks", 1, "network"), "unchecked-constraint", "warning",
         '1 value(s) of "neutron.network" not checked: no cloud inventory (--inventory) lists them; '
         "the first is here")])


def test_service_constraints_check_literals_and_call_results_against_the_inventory(engine, monkeypatch, tmp_path):
    cloud = tmp_path / "cloud.yaml"
    cloud.write_text(yaml.safe_dump({"flavors": ["m1.large"], "images": ["img-3"], "networks": ["public"]}))
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, str(cloud))
    assert problems(engine) == by_place(errors(EVERY_TIME) + [
        (("server", "flavor"), "constraint-violation", "error",
         "Error validating value 'm1.small': The Flavor ID (m1.small) could not be found."),
        (("server", "networks", 1, "network"), "constraint-violation", "error",
         "Error validating value 'net0': Unable to find network with name or id 'net0'")])


def test_the_same_template_validates_again_with_the_same_problems(engine, monkeypatch):
    """Checkers and plans are kept per schema: a second template meets the same answers."""
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")
    first = problems(engine)
    assert problems(engine) == first
