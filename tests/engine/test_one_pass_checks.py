"""The checks generated per OpenStack type and set of given keys (``one_pass``) against the
generic ones (shape, values, the unchecked-constraint walk): a generated check may give up (the
generic path then reports), but when it answers, the generic checks find nothing wrong and note
the same places; a template's problems and warnings are the same with or without it."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stoker.constraints import AllowedPattern, AllowedValues, CustomConstraint, Length, Modulo, Range
from stoker.engine.engine import Engine
from stoker.errors import ValidationFailed
from stoker.resources.openstack import inventory, one_pass
from stoker.resources.openstack.simulated import SimulatedResource, simulated_class
from stoker.resources.properties import Properties, Schema, Schemata
from stoker.template.template import Template

ONE_PASS = SimulatedResource.checked_at_once


def _checked_with_oracle(self, verdicts):
    """The generated check's answer, held against the generic checks of the same resource."""
    places = ONE_PASS(self, verdicts)
    if places is not None:
        self.validate_shape()  # raises what they find
        self.validate_template()
        assert list(places) == self.unchecked_constraints(inventory.Verdicts()), self.name
        ANSWERED.append(self.name)
    return places


ANSWERED: list[str] = []
ENGINE = Engine()  # checking a template opens no database

PARAMETERS = {"image": {"type": "string", "default": "cirros"}, "size": {"type": "number", "default": 3},
              "names": {"type": "comma_delimited_list", "default": "a,b"},
              "config": {"type": "json", "default": {"a": 1}}}


def verdicts(template: dict, at_validate: bool = False, one_pass_on: bool = True) -> list[tuple]:
    """Every problem and warning of ``template`` (path, code, severity, message), in order."""
    had = SimulatedResource.checked_at_once
    SimulatedResource.checked_at_once = _checked_with_oracle if one_pass_on else None
    try:
        _, found = ENGINE.check_template(Template(template), at_validate=at_validate)
    finally:
        SimulatedResource.checked_at_once = had
    return [(p.path, p.code, p.severity, p.message) for p in found.items]


def hot(resources: dict) -> dict:
    return {"heat_template_version": "2018-08-31", "parameters": PARAMETERS, "resources": resources}


@pytest.fixture(autouse=True)
def no_inventory(monkeypatch):
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, "")
    ANSWERED.clear()


@pytest.fixture
def cloud(tmp_path, monkeypatch):
    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump({"flavors": ["m1.small"], "images": ["cirros"], "networks": ["public"],
                                    "subnets": ["sub"], "volume_types": ["lvm"]}))
    monkeypatch.setenv(inventory.ENVIRONMENT_VARIABLE, str(path))


# -- a corpus: every way a value may be given, right and wrong ---------------------------------
CORPUS = {
    "net": {"type": "OS::Neutron::Net", "properties": {"name": {"list_join": ["-", ["net", "a"]]}}},
    "net_int_name": {"type": "OS::Neutron::Net", "properties": {"name": 7, "admin_state_up": False}},
    "net_bad_bool": {"type": "OS::Neutron::Net", "properties": {"admin_state_up": "yes"}},
    "net_typo": {"type": "OS::Neutron::Net", "properties": {"nmae": "x"}},
    "net_null": {"type": "OS::Neutron::Net", "properties": {"name": None}},
    "net_retain": {"type": "OS::Neutron::Net", "deletion_policy": "Retain", "properties": {"admin_state_up": True}},
    "net_snapshot": {"type": "OS::Neutron::Net", "deletion_policy": "Snapshot", "properties": {}},
    "subnet": {"type": "OS::Neutron::Subnet",
               "properties": {"network": {"get_resource": "net"}, "cidr": "10.0.0.0/24", "ip_version": 4,
                              "enable_dhcp": True, "dns_nameservers": ["8.8.8.8"],
                              "allocation_pools": [{"start": "10.0.0.10", "end": "10.0.0.20"}]}},
    "subnet_literal_net": {"type": "OS::Neutron::Subnet", "properties": {"network": "public", "cidr": "10.1.0.0/16"}},
    "subnet_bad": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": "private", "cidr": "10.0.0.300/24", "ip_version": 5}},
    "subnet_old_name": {"type": "OS::Neutron::Subnet", "properties": {"network_id": "public"}},
    "subnet_no_network": {"type": "OS::Neutron::Subnet", "properties": {"cidr": "10.2.0.0/24"}},
    "subnet_pool_call": {"type": "OS::Neutron::Subnet",
                         "properties": {"network": "n", "allocation_pools": [{"get_param": "config"}]}},
    "subnet_bad_pool": {"type": "OS::Neutron::Subnet",
                        "properties": {"network": "n", "allocation_pools": [{"start": "10.0.0.1", "end": "x"}, 7]}},
    "port": {"type": "OS::Neutron::Port",
             "properties": {"network": {"get_resource": "net"}, "fixed_ips": [{"subnet": {"get_resource": "subnet"}}],
                            "security_groups": ["default"]}},
    "port_old_subnet": {"type": "OS::Neutron::Port",
                        "properties": {"network": "public", "fixed_ips": [{"subnet_id": "sub"}]}},
    "port_literals": {"type": "OS::Neutron::Port",
                      "properties": {"network": "public", "fixed_ips": [{"subnet": "sub", "ip_address": "10.0.0.5"},
                                                                         {"ip_address": "10.0.0.999"}]}},
    "port_groups_calls": {"type": "OS::Neutron::Port",
                          "properties": {"network": "public", "security_groups": [{"get_resource": "group_ok"}, "x"]}},
    "port_groups_param": {"type": "OS::Neutron::Port", "properties": {"network": "public",
                                                                      "security_groups": {"get_param": "names"}}},
    "port_groups_mixed": {"type": "OS::Neutron::Port",
                          "properties": {"network": "public", "security_groups": [{"list_join": ["", ["a"]]}]}},
    "port_groups_text": {"type": "OS::Neutron::Port", "properties": {"network": "n", "security_groups": "default"}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"name": {"str_replace": {"template": "vm-N", "params": {"N": "1"}}},
                              "image": {"get_param": "image"}, "flavor": "m1.small",
                              "networks": [{"port": {"get_resource": "port"}}, {"network": "public"}],
                              "metadata": {"group": "1"}, "user_data_format": "RAW",
                              "user_data": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]}}},
    "server_bad": {"type": "OS::Nova::Server",
                   "properties": {"flavor": "m1.huge", "image": 5, "user_data_format": "BAD",
                                  "metadata": [1, 2], "networks": [{"network": "x", "fixd_ip": "y"}]}},
    "server_nested_call": {"type": "OS::Nova::Server",
                           "properties": {"flavor": "m1.small", "metadata": {"a": {"get_param": "config"}},
                                          "networks": [{"uuid": "public"}]}},
    "server_policy": {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small"},
                      "update_policy": {"x": 1}},
    "volume": {"type": "OS::Cinder::Volume", "properties": {"size": 2, "name": {"list_join": ["-", ["v", "1"]]}}},
    "volume_param_size": {"type": "OS::Cinder::Volume", "properties": {"size": {"get_param": "size"}}},
    "volume_zero": {"type": "OS::Cinder::Volume", "properties": {"size": 0}},
    "volume_text_size": {"type": "OS::Cinder::Volume", "properties": {"size": "3", "volume_type": "lvm"}},
    "volume_float_size": {"type": "OS::Cinder::Volume", "properties": {"size": 2.0}},
    "volume_bad_type": {"type": "OS::Cinder::Volume", "properties": {"size": 1, "volume_type": "ssd"}},
    "group": {"type": "OS::Neutron::SecurityGroup",
              "properties": {"rules": [{"protocol": "tcp", "port_range_min": 22, "port_range_max": 22,
                                        "remote_ip_prefix": "0.0.0.0/0"},
                                       {"protocol": "icmp", "direction": "sideways"},
                                       {"port_range_min": 70000}]}},
    "group_ok": {"type": "OS::Neutron::SecurityGroup",
                 "properties": {"rules": [{"protocol": "tcp", "port_range_min": 80, "port_range_max": 80}]}},
    "keypair": {"type": "OS::Nova::KeyPair", "properties": {"name": "ops", "save_private_key": True}},
}


@pytest.mark.parametrize("at_validate", [False, True])
@pytest.mark.parametrize("with_inventory", [False, True])
def test_the_corpus_gives_the_same_problems_with_and_without_one_pass(at_validate, with_inventory, request):
    if with_inventory:
        request.getfixturevalue("cloud")
    template = hot(CORPUS)
    generic = verdicts(template, at_validate, one_pass_on=False)
    assert verdicts(template, at_validate) == generic
    assert generic  # the corpus has problems: the comparison is not between two empty lists
    answered = set(ANSWERED)
    assert {"net", "subnet", "port", "server", "volume", "volume_param_size", "group_ok", "keypair",
            "net_int_name", "net_retain", "subnet_literal_net", "port_groups_calls", "port_groups_param"} <= answered
    assert not answered & {"net_typo", "net_snapshot", "subnet_bad", "subnet_old_name", "subnet_no_network",
                           "port_old_subnet", "server_bad", "server_policy", "volume_zero", "group"}


def test_a_valid_template_is_checked_in_one_pass_with_the_same_warnings():
    resources = {name: CORPUS[name] for name in ("net", "subnet", "port", "server", "volume")}
    found = verdicts(hot(resources))
    assert found == verdicts(hot(resources), one_pass_on=False)
    assert sorted(ANSWERED) == sorted(resources)
    assert [code for _, code, _, _ in found] == ["unchecked-constraint"] * 2  # nova.flavor, glance.image


def test_a_generated_check_reads_as_code_and_is_kept_per_set_of_keys():
    schemas = Schemata({"size": Schema(Schema.INTEGER, constraints=[Range(1)]), "name": Schema(Schema.STRING)})
    kept: dict = {}
    check = one_pass.checker(schemas, ("size",), None, kept)
    assert one_pass.checker(schemas, ("size",), None, kept) is check
    assert "v0 >= low" in check.source
    assert one_pass.checker(schemas, ("nmae",), None, kept) is one_pass.never
    assert check({"size": 2}, (), None, inventory.Verdicts()) == []
    assert check({"size": 0}, (), None, inventory.Verdicts()) is None


def test_past_its_bound_a_schema_writes_no_more_checks(monkeypatch):
    """A template giving a type many sets of keys: past the bound, the generic path (writing and
    compiling a function costs more than it saves on one resource)."""
    monkeypatch.setattr(one_pass, "_KEY_SETS_KEPT", 1)
    schemas = Schemata({"size": Schema(Schema.INTEGER), "name": Schema(Schema.STRING)})
    kept: dict = {}
    assert one_pass.checker(schemas, ("size",), None, kept)({"size": 1}, (), None, {}) == []
    assert one_pass.checker(schemas, ("name",), None, kept) is one_pass.never
    assert list(kept) == [("size",)]


# -- one property of every kind: the generated verdict is the generic one ---------------------
SCHEMAS = {
    "range": Schema(Schema.INTEGER, constraints=[Range(1, 10)]),
    "number": Schema(Schema.NUMBER, constraints=[Range(-1.5, 2.5), Modulo(2, 0)]),
    "length": Schema(Schema.STRING, constraints=[Length(2, 4)]),
    "pattern": Schema(Schema.STRING, constraints=[AllowedPattern("a|ab")]),
    "allowed": Schema(Schema.STRING, constraints=[AllowedValues(["a", "1", "True"])]),
    "allowed_int": Schema(Schema.INTEGER, constraints=[AllowedValues([4, 6])]),
    "flag": Schema(Schema.BOOLEAN),
    "ip": Schema(Schema.STRING, constraints=[CustomConstraint("ip_addr")]),
    "anything": Schema(Schema.ANY),
    "items": Schema(Schema.LIST, constraints=[Length(1, 2)]),
    "map": Schema(Schema.MAP),
    "words": Schema(Schema.LIST, schema=Schema(Schema.STRING, constraints=[AllowedValues(["x", "y"])])),
}
LITERALS = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["a", "ab", "abc", "abcde", "1", "True", "x", "y", "10.0.0.1", "10.0.0.999", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["k", "x"]), inner, max_size=2),
    max_leaves=4)


def generic_verdict(schema: Schema, value) -> bool:
    try:
        Properties(Schemata({"p": schema}), {"p": value}, resolver=None).validate()
    except ValidationFailed:
        return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SCHEMAS)), value=LITERALS)
def test_a_literal_gets_the_generic_verdict(name, value):
    schema = SCHEMAS[name]
    check = one_pass.checker(Schemata({"p": schema}), ("p",), None, {})
    answer = check({"p": value}, (), None, inventory.Verdicts())
    if answer is not None:  # it answers only what the generic check also finds valid
        assert generic_verdict(schema, value)
    kind = type(value)
    taken = {Schema.STRING: (str, int, bool), Schema.INTEGER: (int,), Schema.NUMBER: (int, float),
             Schema.BOOLEAN: (bool,), Schema.ANY: (str, int, float, bool)}.get(schema.type, ())
    if kind in taken and schema.schema is None:  # and a literal it takes as it is, it always answers
        assert (answer is not None) == generic_verdict(schema, value), (name, value)
    if isinstance(value, float) and math.isnan(value) and schema.constraints:
        assert answer is None


# -- any template of a few types, built from the schema's own keys -----------------------------
TYPES = ["OS::Neutron::Net", "OS::Neutron::Subnet", "OS::Neutron::Port", "OS::Nova::Server",
         "OS::Cinder::Volume", "OS::Neutron::SecurityGroup"]
CALLS = [{"get_param": "image"}, {"get_param": "size"}, {"get_param": "names"}, {"get_param": "config"},
         {"get_resource": "r0"}, {"get_attr": ["r0", "name"]}, {"list_join": ["-", ["a", "b"]]},
         {"str_replace": {"template": "x-N", "params": {"N": 2}}}]
VALUES = st.recursive(
    st.sampled_from([None, True, False, 0, 1, 4, 6, 22, 70000, 2.0, 1.5, "", "public", "m1.small", "cirros",
                     "10.0.0.0/24", "10.0.0.300/24", "8.8.8.8", "RAW", "tcp", "ingress", "default", "sub"])
    | st.sampled_from(CALLS),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(
        st.sampled_from(["subnet", "subnet_id", "ip_address", "port", "network", "uuid", "protocol",
                        "port_range_min", "start", "end", "group"]), inner, max_size=3),
    max_leaves=6)


@st.composite
def resources(draw) -> dict:
    found = {}
    for i in range(draw(st.integers(1, 4))):
        type_name = draw(st.sampled_from(TYPES))
        names = sorted(simulated_class(type_name).properties_schema) + ["nmae"]
        keys = draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
        found[f"r{i}"] = {"type": type_name, "properties": {key: draw(VALUES) for key in keys}}
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=resources(), at_validate=st.booleans())
def test_any_template_gives_the_same_problems_with_and_without_one_pass(template, at_validate):
    assert verdicts(hot(template), at_validate) == verdicts(hot(template), at_validate, one_pass_on=False)
