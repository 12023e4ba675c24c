"""Neutron's networks and subnets, read only (``/cloud/{tenant_id}/network/v2.0/networks``,
``.../subnets``): what a Heat user's tools look up before a stack (which networks there are, by
name), answered from the cloud a stack sees: the inventory's ``networks`` and ``subnets``, and
the simulated ``OS::Neutron::Net`` and ``OS::Neutron::Subnet`` of the project's live stacks.

An inventory item's id is the one ``cloud.yaml`` gives, else its name (list an ``id`` to have a
UUID).  Filters are Neutron's equality filters on any field (``?name=public&name=private``).
"""

from __future__ import annotations

import ipaddress
from typing import Any, Callable

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api.request_context import Ctx, context, reply
from stoker.resources.openstack import inventory
from stoker.resources.openstack.shapes import ATTRIBUTES_KEY, DEFAULT_CIDR

router = APIRouter(prefix="/cloud/{tenant_id}/network", tags=["cloud: network"])


def _listed(section: str) -> list[dict]:
    found = inventory.current()
    return list(found.sections.get(section, ())) if found is not None else []


def _item_id(item: dict) -> str:
    return str(item.get("id", item.get("name")))


def _network_ids() -> dict[str, str]:
    """Every name and id of the inventory's networks -> the id shown."""
    ids: dict[str, str] = {}
    for item in _listed("networks"):
        for key in ("name", "id"):
            if key in item:
                ids[str(item[key])] = _item_id(item)
    return ids


def _inventory_subnets(project: str) -> list[dict]:
    networks = _network_ids()
    subnets = []
    for item in _listed("subnets"):
        cidr = ipaddress.ip_network(str(item.get("cidr") or DEFAULT_CIDR), strict=False)
        first, last = cidr.network_address + 1, cidr.broadcast_address - 1
        network = str(item.get("network", ""))
        subnets.append({"id": _item_id(item), "name": str(item.get("name", "")),
                        "network_id": networks.get(network, network), "cidr": str(cidr),
                        "ip_version": cidr.version, "gateway_ip": str(item.get("gateway_ip", first)),
                        "allocation_pools": [{"start": str(first + 1), "end": str(last)}],
                        "enable_dhcp": bool(item.get("enable_dhcp", True)),
                        "tenant_id": project, "project_id": project})
    return subnets


def _inventory_networks(project: str, subnets: list[dict]) -> list[dict]:
    networks = []
    for item in _listed("networks"):
        net_id = _item_id(item)
        networks.append({"id": net_id, "name": str(item.get("name", net_id)), "status": "ACTIVE",
                         "admin_state_up": True, "shared": bool(item.get("shared", False)),
                         "router:external": bool(item.get("external", False)), "mtu": 1500,
                         "subnets": [s["id"] for s in subnets if s["network_id"] == net_id],
                         "tenant_id": project, "project_id": project})
    return networks


def _simulated(ctx: Ctx, type_name: str, fields: tuple[str, ...]) -> list[dict]:
    """The simulated resources of ``type_name`` in the project's live stacks, as Neutron shows them."""
    shown = []
    for row in ctx.engine.store.live_resources(ctx.project, type_name):
        values = (row.data or {}).get(ATTRIBUTES_KEY)
        if values is None:
            continue  # a real plug-in's resource: its cloud is not this one
        entry = {key: values[key] for key in fields if key in values}
        shown.append({**entry, "id": row.physical_resource_id, "status": values.get("status", "ACTIVE"),
                      "tenant_id": ctx.project, "project_id": ctx.project})
    return shown


_NET_FIELDS = ("name", "admin_state_up", "subnets", "mtu", "port_security_enabled")
_SUBNET_FIELDS = ("name", "network_id", "cidr", "ip_version", "gateway_ip", "allocation_pools", "enable_dhcp")


def _subnets(ctx: Ctx) -> list[dict]:
    return _inventory_subnets(ctx.project) + _simulated(ctx, "OS::Neutron::Subnet", _SUBNET_FIELDS)


def _networks(ctx: Ctx) -> list[dict]:
    return (_inventory_networks(ctx.project, _inventory_subnets(ctx.project))
            + [{"shared": False, "router:external": False, **net}
               for net in _simulated(ctx, "OS::Neutron::Net", _NET_FIELDS)])


def _filtered(ctx: Ctx, items: list[dict]) -> list[dict]:
    """Neutron's filters: each query field keeps the items whose value is one of those given
    (``fields`` only narrows what is shown)."""
    query = ctx.request.query_params
    for key in {k for k in query.keys() if k != "fields"}:
        wanted = set(query.getlist(key))
        items = [item for item in items if _text(item.get(key)) in wanted]
    fields = query.getlist("fields")
    return [{k: v for k, v in item.items() if k in fields} for item in items] if fields else items


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _not_found(kind: str, wanted: str) -> Response:
    return reply({"NeutronError": {"type": f"{kind.capitalize()}NotFound",
                                   "message": f"{kind.capitalize()} {wanted} could not be found.", "detail": ""}},
                 404)


def _one(kind: str, items: Callable[[Ctx], list[dict]]) -> Callable[..., Response]:
    def show(item_id: str, ctx: Ctx = Depends(context)) -> Response:
        found = next((item for item in items(ctx) if str(item["id"]) == item_id), None)
        return reply({kind: found}) if found is not None else _not_found(kind, item_id)
    show.__doc__ = f"One {kind}, as Neutron shows it."
    return show


@router.get("/v2.0/networks", summary="List networks (Neutron)")
def list_networks(ctx: Ctx = Depends(context)) -> Response:
    return reply({"networks": _filtered(ctx, _networks(ctx))})


@router.get("/v2.0/subnets", summary="List subnets (Neutron)")
def list_subnets(ctx: Ctx = Depends(context)) -> Response:
    return reply({"subnets": _filtered(ctx, _subnets(ctx))})


router.add_api_route("/v2.0/networks/{item_id}", _one("network", _networks), methods=["GET"],
                     summary="Show a network (Neutron)")
router.add_api_route("/v2.0/subnets/{item_id}", _one("subnet", _subnets), methods=["GET"],
                     summary="Show a subnet (Neutron)")


@router.api_route("/{path:path}", methods=["GET", "POST", "PUT", "DELETE"], include_in_schema=False)
def not_served(path: str, ctx: Ctx = Depends(context)) -> Response:
    """The rest of Neutron's API, in Neutron's words (neutronclient reads nothing else)."""
    return reply({"NeutronError": {"type": "HTTPNotFound", "detail": "", "message":
                                   f"The network API of a cloud in a box lists networks and subnets only, not /{path}."}},
                 404)
