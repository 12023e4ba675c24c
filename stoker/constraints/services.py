"""The custom constraints Heat registers for other OpenStack services.

Checking ``nova.flavor`` or ``glance.image`` needs that service, which
Stoker does not have: a template naming one is valid, its value is
accepted unchecked (``template validate`` says so), and a plug-in that
registers a check of the same name replaces this one.
"""

from __future__ import annotations

from typing import Any

#: every service constraint name in Heat's ``heat.constraints`` entry points
SERVICE_CONSTRAINTS = (
    "barbican.container", "barbican.secret", "blazar.reservation",
    "cinder.backup", "cinder.qos_specs", "cinder.snapshot", "cinder.volume", "cinder.vtype",
    "designate.zone", "glance.image",
    "ironic.node", "ironic.portgroup",
    "keystone.domain", "keystone.group", "keystone.project", "keystone.region", "keystone.role",
    "keystone.service", "keystone.user",
    "magnum.cluster_template",
    "manila.share_network", "manila.share_snapshot", "manila.share_type",
    "mistral.workflow",
    "neutron.address_scope", "neutron.flow_classifier", "neutron.lbaas.listener",
    "neutron.lbaas.loadbalancer", "neutron.lbaas.pool", "neutron.lbaas.provider", "neutron.network",
    "neutron.port", "neutron.port_pair", "neutron.port_pair_group", "neutron.qos_policy",
    "neutron.router", "neutron.security_group", "neutron.segment", "neutron.subnet",
    "neutron.subnetpool", "neutron.taas.tap_flow", "neutron.taas.tap_service",
    "nova.flavor", "nova.host", "nova.keypair", "nova.network", "nova.server",
    "octavia.availabilityzone", "octavia.availabilityzoneprofile", "octavia.flavor",
    "octavia.flavorprofile", "octavia.l7policy", "octavia.listener", "octavia.loadbalancer",
    "octavia.pool",
    "trove.flavor", "zaqar.queue",
)


class Unchecked:
    """Accepts every value: the service that could check it is not there."""

    unchecked = True

    def __init__(self, name: str):
        self.message = f"The value must be a valid {name} (not checked: Stoker has no {name.split('.')[0]})."

    def __call__(self, value: Any) -> bool:
        return True
