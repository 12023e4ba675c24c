"""A stack of simulated OpenStack types created and deleted by real ``stoker worker`` processes:
the attributes computed on one worker are read by resources another worker creates."""

from __future__ import annotations

import ipaddress
from pathlib import Path

NETWORK = Path(__file__).resolve().parent.parent / "templates" / "openstack" / "network.yaml"


def test_a_simulated_network_stack_on_two_workers(cluster, monkeypatch):
    monkeypatch.setenv("STOKER_INVENTORY", "")
    cluster.start_worker()
    cluster.start_worker()
    started = cluster.engine.create_stack("sim", NETWORK)
    done = cluster.settle(started["id"])
    assert done["stack_status"] == "CREATE_COMPLETE", done["stack_status_reason"]
    values = {o["output_key"]: o["output_value"] for o in cluster.engine.outputs("sim")}
    assert ipaddress.ip_address(values["first_address"]) in ipaddress.ip_network("192.168.10.0/24")
    assert values["fixed_ips"][0]["ip_address"] == values["first_address"]
    assert all(row.get("simulated") for row in cluster.engine.resources("sim"))

    cluster.engine.delete_stack("sim")
    gone = cluster.settle(started["id"])
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
