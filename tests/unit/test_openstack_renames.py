"""Heat's property renames on raw property data: top-level, through lists, out of nested maps;
both names given is Heat's error; the template's own data is never changed."""

from __future__ import annotations

import copy

import pytest

from stoker.errors import ValidationFailed
from stoker.resources.openstack import catalogue
from stoker.resources.openstack.renames import from_entries, renamed

PATH = ("resources", "r", "properties")
PORT = from_entries(catalogue.entry("OS::Neutron::Port")["renames"])
WORKFLOW = from_entries(catalogue.entry("OS::Mistral::Workflow")["renames"])


def test_the_catalogue_holds_heats_renames():
    assert (("network_id",), ("network",)) in PORT
    assert (("fixed_ips", "subnet_id"), ("fixed_ips", "subnet")) in PORT
    assert (("router_id",), ("router",)) in from_entries(catalogue.entry("OS::Neutron::RouterInterface")["renames"])
    assert catalogue.entry("OS::Neutron::Net").get("renames") is None


def test_old_names_move_to_the_new_ones_and_the_data_given_is_kept():
    data = {"network_id": {"get_resource": "net"}, "name": "p",
            "fixed_ips": [{"subnet_id": "s1", "ip_address": "10.0.0.5"}, {"subnet": "s2"}, {"get_param": "x"}]}
    before = copy.deepcopy(data)
    assert renamed(PORT, data, PATH) == {
        "network": {"get_resource": "net"}, "name": "p",
        "fixed_ips": [{"subnet": "s1", "ip_address": "10.0.0.5"}, {"subnet": "s2"}, {"get_param": "x"}]}
    assert data == before


def test_data_without_old_names_is_returned_as_it_is():
    data = {"network": "n", "fixed_ips": [{"subnet": "s"}]}
    assert renamed(PORT, data, PATH) is data
    function = {"get_param": "port_properties"}
    assert renamed(PORT, function, PATH) is function
    assert renamed(PORT, {"fixed_ips": {"get_param": "ips"}}, PATH) == {"fixed_ips": {"get_param": "ips"}}


def test_a_null_old_value_leaves_the_new_one_and_an_empty_one_replaces_it_as_in_heat():
    assert renamed(PORT, {"network": "n", "network_id": None}, PATH) == {"network": "n", "network_id": None}
    assert renamed(PORT, {"network": "n", "network_id": ""}, PATH) == {"network": ""}


def test_a_value_in_a_nested_map_moves_up_to_its_new_place():
    data = {"tasks": [{"name": "t", "policies": {"retry": {"count": 2}, "timeout": 5}}]}
    assert renamed(WORKFLOW, data, PATH) == {
        "tasks": [{"name": "t", "policies": {}, "retry": {"count": 2}, "timeout": 5}]}


@pytest.mark.parametrize("data, place, names", [
    ({"network": "a", "network_id": "b"}, "resources.r.properties", "network, network_id"),
    ({"fixed_ips": [{"subnet": "a"}, {"subnet": "b", "subnet_id": "c"}]}, "resources.r.properties.fixed_ips.1",
     "fixed_ips.subnet, fixed_ips.subnet_id"),
])
def test_both_names_given_is_heats_error_at_its_place(data, place, names):
    with pytest.raises(ValidationFailed) as failed:
        renamed(PORT, data, PATH)
    (problem,) = failed.value.problems
    assert ".".join(map(str, problem.path)) == place
    assert problem.code == "property-conflict"
    assert problem.message == f"Cannot define the following properties at the same time: {names}"
