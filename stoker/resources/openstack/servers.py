"""What an existing server gives a launch configuration: Heat builds an AWS group's members (or
fills a launch configuration) from an instance's image, flavor, key and security groups when
``InstanceId`` names one.  Here the instance is a simulated server of the stack, or a server
the cloud inventory lists (``servers: [{name, id, image, flavor, key_name, security_groups}]``)."""

from __future__ import annotations

from typing import Any

from stoker.errors import ValidationFailed
from stoker.resources.openstack import inventory, shapes

#: a launch configuration's property -> the property (or inventory key) of each kind of server
_FROM = {
    "AWS::EC2::Instance": {"ImageId": "ImageId", "InstanceType": "InstanceType", "KeyName": "KeyName",
                           "SecurityGroups": "SecurityGroups"},
    "OS::Nova::Server": {"ImageId": "image", "InstanceType": "flavor", "KeyName": "key_name",
                         "SecurityGroups": "security_groups"},
}


def launch_properties(resource: Any, reference: Any, place: tuple) -> dict:
    """The launch configuration properties of the server ``reference`` names (those it has);
    ``ValidationFailed`` at ``place`` (where the reference is given) when there is no such server."""
    other = shapes.peer(resource, reference)
    found = shapes.known(other) if other is not None and other.heat_type in _FROM else None
    if found is not None:
        props, names = found[0], _FROM[other.heat_type]
    else:
        props, names = _listed(reference, place), _FROM["OS::Nova::Server"]
    taken = {key: props.get(name) for key, name in names.items()}
    taken["SecurityGroups"] = [group["name"] if isinstance(group, dict) else group
                               for group in taken["SecurityGroups"] or ()]
    return {key: value for key, value in taken.items() if value not in (None, [])}


def _listed(reference: Any, place: tuple) -> dict:
    found = inventory.current()
    item = found.find("servers", reference) if found is not None else None
    if item is None:
        raise ValidationFailed.single(place, "not-found", f"The server ({reference}) could not be found.")
    return item
