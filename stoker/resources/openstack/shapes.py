"""Realistic attribute values for simulated resources, the same for the same stack.

Every attribute gets a value of its declared type.  One named like a property reads that
property (a volume's ``size``); ``name``, ``id`` and ``status`` read as a cloud would answer
them; the network types compute what Neutron would give: a subnet's gateway and pools from its
CIDR, a port's ``fixed_ips`` from its subnet, a server's ``networks``, ``addresses`` and
``first_address`` from the ports and networks it is given, a floating IP's address in its
network's subnet, an elastic IP's in DevStack's public range, a load balancer's VIP in its subnet; a key pair
gets a made-up public key.  Values that a real cloud would pick
(an address in a subnet, a MAC) come from a digest of the stack's id and the resource's name.
"""

from __future__ import annotations

import hashlib
import ipaddress
from contextvars import ContextVar
from typing import Any, Callable, Iterator

from stoker.resources.openstack import inventory

#: the data key holding a simulated resource's attribute values (its presence marks the row simulated)
ATTRIBUTES_KEY = "simulated:attributes"
#: the CIDR of a subnet Stoker knows nothing about (not simulated, not in the inventory)
DEFAULT_CIDR = "10.0.0.0/24"
#: where public addresses (an ``AWS::EC2::EIP``'s) come from: DevStack's default floating range
PUBLIC_CIDR = "172.24.4.0/24"
_EMPTY = {"String": "", "Map": {}, "List": [], "Integer": 0, "Number": 0, "Boolean": False, None: None}
_STATUS = {"OS::Cinder::Volume": "available", "OS::Cinder::VolumeAttachment": "in-use"}


def digest(resource: Any, purpose: str) -> int:
    """A number fixed by the stack, the resource's name and ``purpose``."""
    text = f"{resource.stack.id}/{resource.name}/{purpose}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def attribute_values(resource: Any) -> dict:
    """Every attribute of ``resource`` (``show`` aside), computed from what it has now."""
    token = _PEERS.set({})
    try:
        return _values(resource)
    finally:
        _PEERS.reset(token)


def _values(resource: Any) -> dict:
    props = _properties(resource)
    values = {}
    for name, schema in resource.attribute_schemata().items():
        if name == "show":
            continue
        if name in props and props[name] is not None:
            values[name] = props[name]
        else:
            values[name] = _EMPTY.get(schema.type, None)
    values.update(_common(resource, props, values))
    special = _SPECIAL.get(resource.heat_type)
    if special is not None:
        values.update({k: v for k, v in special(resource, props).items() if k in values})
    return values


def current_values(resource: Any, stored: dict, wanted: str | None = None) -> dict:
    """``stored`` (the values computed at the last create or update), with the attributes that
    follow other resources computed again from them now: a server's addresses after its port was
    updated in place (the server itself was not, so nothing stored them again).  ``wanted``: the one
    attribute asked for (the others are not computed again for it)."""
    names = _FOLLOWING.get(resource.heat_type)
    if not names or not stored or (wanted is not None and wanted not in names):
        return stored
    token = _PEERS.set({})
    try:
        fresh = _SPECIAL[resource.heat_type](resource, _properties(resource))
    finally:
        _PEERS.reset(token)
    return {**stored, **{name: fresh[name] for name in names if name in stored}}


def show(resource: Any, values: dict) -> dict:
    """The whole resource as its service would show it: properties, then attributes, and its id."""
    return {**_properties(resource), **values, "id": resource.resource_id}


def _properties(resource: Any) -> dict:
    return dict(resource.properties_data or {})


def _common(resource: Any, props: dict, values: dict) -> dict:
    found: dict[str, Any] = {}
    if "name" in values:
        found["name"] = props.get("name") or resource.physical_resource_name()
    if "id" in values:
        found["id"] = resource.resource_id
    found["status"] = _STATUS.get(resource.heat_type, "ACTIVE")  # in ``show`` when not an attribute
    for key in ("tenant_id", "project_id"):
        if key in values and not values[key]:
            found[key] = resource.stack.project_id if hasattr(resource.stack, "project_id") else ""
    return found


# -- peers: the simulated resources this one refers to ---------------------------------------
def known(other: Any) -> tuple[dict, str] | None:
    """(properties, physical id) of a simulated resource of the stack, created or still to be: one
    not created yet has its id already (``physical_id``) and its properties from its definition,
    so what refers to it reads the same whichever of the two the walk created first."""
    if not getattr(other, "simulated", False):
        return None
    if other.resource_id is not None:
        return dict(other.properties_data or {}), str(other.resource_id)
    if other.id is None:
        return None
    try:
        return other.build_properties(other.t.properties).resolved(), other.physical_id()
    except Exception:  # noqa: BLE001 - a value it needs is not known yet: not a peer to read from
        return None


def peer(resource: Any, reference: Any) -> Any:
    """The simulated resource of the same stack whose id or name is ``reference``, if any: a created
    one by id or name, one still to be created by the id it will have."""
    if reference in (None, ""):
        return None
    kept = _PEERS.get()
    if kept is None:
        return _index(resource).get(str(reference))
    if not kept:
        kept.update(_index(resource))
    return kept.get(str(reference))


#: the peers of the resource whose attributes are being computed, by id and name: built at the
#: first look-up of that computation (most types look none up), then kept until it ends
_PEERS: ContextVar[dict | None] = ContextVar("simulated_peers", default=None)


def _index(resource: Any) -> dict:
    by_id: dict = {}
    by_name: dict = {}
    for other in list(resource.stack.resources.values()):
        if other is resource or not getattr(other, "simulated", False):
            continue
        if other.resource_id is not None:
            by_id.setdefault(str(other.resource_id), other)
            by_name.setdefault(str((other.properties_data or {}).get("name") or ""), other)
        elif other.id is not None:
            by_id.setdefault(other.physical_id(), other)
    by_name.pop("", None)
    return {**by_name, **by_id}  # an id wins over a name


def _subnets_on(resource: Any, network_ids: set, network_name: str | None) -> Iterator[str]:
    """The ids of the stack's subnets on the network known by ``network_ids``: the created ones, and
    those still to be created whose definition refers to the network's resource ``network_name``
    (only those are worth resolving)."""
    for other in list(resource.stack.resources.values()):
        if getattr(other, "heat_type", "") != "OS::Neutron::Subnet":
            continue
        if other.resource_id is None and network_name not in other.t.dependencies():
            continue
        found = known(other)
        if found is not None and str(found[0].get("network")) in network_ids:
            yield found[1]


def attributes_of(other: Any) -> dict:
    return other.data().get(ATTRIBUTES_KEY) or {}


def _inventory_item(section: str, reference: Any) -> dict | None:
    found = inventory.current()
    return found.find(section, reference) if found is not None else None


# -- networks -------------------------------------------------------------------------------------
def _subnet_cidr(resource: Any, subnet: Any) -> tuple[str, Any]:
    """The CIDR and id of the subnet ``subnet`` names (simulated, in the inventory, or unknown)."""
    other = peer(resource, subnet)
    if other is not None:
        props, physical_id = known(other)
        return str(props.get("cidr") or DEFAULT_CIDR), physical_id
    item = _inventory_item("subnets", subnet)
    if item is not None:
        return str(item.get("cidr") or DEFAULT_CIDR), item.get("id", subnet)
    return DEFAULT_CIDR, subnet


def _subnet_of_network(resource: Any, network: Any) -> Any:
    """A subnet on ``network``: a simulated one of this stack, else one the inventory lists."""
    if network in (None, ""):
        return None
    net = peer(resource, network)
    props, physical_id = known(net) if net is not None else ({}, str(network))
    listed = _inventory_item("networks", network) or {}
    ids = {str(network), physical_id, str(props.get("name") or physical_id),
           *(str(listed[key]) for key in ("name", "id") if key in listed)}
    found = next(_subnets_on(resource, ids, net.name if net is not None else None), None)
    if found is not None:
        return found
    found = inventory.current()
    for item in (found.sections.get("subnets", ()) if found is not None else ()):
        if str(item.get("network")) in ids:
            return item.get("id", item.get("name"))
    return None


def _address(resource: Any, cidr: str, purpose: str) -> str:
    network = ipaddress.ip_network(cidr, strict=False)
    hosts = max(network.num_addresses - 3, 1)  # not the network, its gateway, nor the broadcast
    return str(network.network_address + 2 + digest(resource, purpose) % hosts)


def _network_id(resource: Any, network: Any) -> Any:
    net = peer(resource, network)
    if net is not None:
        return net.resource_id
    item = _inventory_item("networks", network)
    return item.get("id", network) if item is not None else network


def _network_name(resource: Any, network_id: Any) -> str:
    net = peer(resource, network_id)
    if net is not None:
        return str(attributes_of(net).get("name") or network_id)
    item = _inventory_item("networks", network_id)
    return str(item.get("name", network_id)) if item is not None else str(network_id)


def mac_address(resource: Any) -> str:
    number = digest(resource, "mac")
    return "fa:16:3e:" + ":".join(f"{(number >> shift) & 0xFF:02x}" for shift in (16, 8, 0))


def _fixed_ips(resource: Any, props: dict, purpose: str) -> list[dict]:
    """The addresses of a port (or a server's network entry) from its fixed_ips, subnet or network."""
    wanted = props.get("fixed_ips") or [{}]
    result = []
    for index, entry in enumerate(wanted):
        entry = entry or {}
        subnet = entry.get("subnet") or props.get("subnet") \
            or _subnet_of_network(resource, props.get("network"))
        cidr, subnet_id = _subnet_cidr(resource, subnet)
        address = entry.get("ip_address") or _address(resource, cidr, f"{purpose}/{index}")
        result.append({"subnet_id": subnet_id or "", "ip_address": address})
    return result


def _net(resource: Any, props: dict) -> dict:
    names = {str(resource.resource_id), str(props.get("name") or resource.resource_id)}
    subnets = list(_subnets_on(resource, names, resource.name))
    return {"subnets": subnets, "admin_state_up": props.get("admin_state_up", True), "mtu": 1450,
            "port_security_enabled": props.get("port_security_enabled", True)}


def _subnet(resource: Any, props: dict) -> dict:
    network = ipaddress.ip_network(str(props.get("cidr") or DEFAULT_CIDR), strict=False)
    first, last = network.network_address + 1, network.broadcast_address - 1
    gateway = props.get("gateway_ip") or str(first)
    pools = props.get("allocation_pools") or [{"start": str(first + 1), "end": str(last)}]
    return {"cidr": str(network), "gateway_ip": gateway, "allocation_pools": pools,
            "network_id": _network_id(resource, props.get("network")), "ip_version": network.version,
            "enable_dhcp": props.get("enable_dhcp", True)}


def _port(resource: Any, props: dict) -> dict:
    fixed = _fixed_ips(resource, props, "port")
    return {"fixed_ips": fixed, "mac_address": props.get("mac_address") or mac_address(resource),
            "network_id": _network_id(resource, props.get("network")), "admin_state_up": True,
            "device_owner": props.get("device_owner") or "", "device_id": props.get("device_id") or "",
            "subnets": [{"id": f["subnet_id"], "cidr": _subnet_cidr(resource, f["subnet_id"])[0]} for f in fixed]}


def _server(resource: Any, props: dict) -> dict:
    """Addresses from each entry of ``networks``: a port's own, or one picked in the network's subnet."""
    addresses: dict[str, list[dict]] = {}
    networks: dict[str, list[str]] = {}
    for index, entry in enumerate(props.get("networks") or []):
        entry = entry or {}
        port = peer(resource, entry.get("port"))
        if port is not None:
            port_values = attributes_of(port)
            network_id, mac = port_values.get("network_id"), port_values.get("mac_address")
            ips = [f["ip_address"] for f in port_values.get("fixed_ips") or []]
        else:
            network_id = _network_id(resource, entry.get("network"))
            subnet = entry.get("subnet") or _subnet_of_network(resource, entry.get("network"))
            cidr = _subnet_cidr(resource, subnet)[0]
            ips = [entry.get("fixed_ip") or _address(resource, cidr, f"server/{index}")]
            mac = mac_address(resource)
        label = _network_name(resource, network_id)
        networks.setdefault(str(network_id), []).extend(ips)
        if label != str(network_id):
            networks.setdefault(label, []).extend(ips)
        addresses.setdefault(label, []).extend(
            {"addr": ip, "version": ipaddress.ip_address(ip).version, "OS-EXT-IPS:type": "fixed",
             "OS-EXT-IPS-MAC:mac_addr": mac, "port": port.resource_id if port is not None else None} for ip in ips)
    first = next((ips[0] for ips in networks.values() if ips), "")
    return {"networks": networks, "addresses": addresses, "first_address": first,
            "accessIPv4": first if ":" not in first else "", "accessIPv6": first if ":" in first else "",
            "instance_name": f"instance-{digest(resource, 'instance') % 0xFFFFFF:08x}",
            "console_urls": {"novnc": f"http://127.0.0.1:6080/vnc_auto.html?token={resource.resource_id}"}}


def _volume(resource: Any, props: dict) -> dict:
    return {"size": props.get("size") or 1, "bootable": bool(props.get("image")), "attachments": [],
            "attachments_list": [], "display_name": props.get("name") or resource.physical_resource_name(),
            "encrypted": False}


def _floating_ip(resource: Any, props: dict) -> dict:
    """An address in the floating network's subnet, the port's own address as the fixed one."""
    network = props.get("floating_network")
    subnet = props.get("floating_subnet") or _subnet_of_network(resource, network)
    port = peer(resource, props.get("port_id"))
    fixed = (attributes_of(port).get("fixed_ips") or [{}])[0].get("ip_address") if port is not None else None
    return {"floating_ip_address": props.get("floating_ip_address")
            or _address(resource, _subnet_cidr(resource, subnet)[0], "floating"),
            "floating_network_id": _network_id(resource, network),
            "fixed_ip_address": props.get("fixed_ip_address") or fixed}


def public_address(resource: Any) -> str:
    """The public address an elastic IP holds (what Heat's ``AWS::EC2::EIP`` is referred to by)."""
    return _address(resource, PUBLIC_CIDR, "public")


def _elastic_ip(resource: Any, props: dict) -> dict:
    return {"AllocationId": resource.resource_id}


def _keypair(resource: Any, props: dict) -> dict:
    """A made-up key (never a usable one): the given public key, else one named after the stack."""
    made = f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5{digest(resource, 'key'):020d} {props.get('name')}"
    return {"public_key": props.get("public_key") or made,
            "private_key": "(simulated: no private key)" if props.get("save_private_key") else ""}


def _load_balancer(resource: Any, props: dict) -> dict:
    cidr, subnet_id = _subnet_cidr(resource, props.get("vip_subnet"))
    return {"vip_address": props.get("vip_address") or _address(resource, cidr, "vip"),
            "vip_subnet_id": subnet_id, "vip_port_id": _simulated_id(resource, "vip-port"), "pools": []}


def _simulated_id(resource: Any, purpose: str) -> str:
    text = f"{digest(resource, purpose):032x}"[-32:]
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


_SPECIAL: dict[str, Callable[[Any, dict], dict]] = {
    "OS::Neutron::Net": _net,
    "OS::Neutron::Subnet": _subnet,
    "OS::Neutron::Port": _port,
    "OS::Nova::Server": _server,
    "OS::Cinder::Volume": _volume,
    "OS::Neutron::FloatingIP": _floating_ip,
    "AWS::EC2::EIP": _elastic_ip,
    "OS::Nova::KeyPair": _keypair,
    "OS::Octavia::LoadBalancer": _load_balancer,
}
#: the attributes of a type read from other resources at each look (the rest are kept as computed)
_FOLLOWING: dict[str, tuple[str, ...]] = {
    "OS::Nova::Server": ("networks", "addresses", "first_address", "accessIPv4", "accessIPv6"),
}
