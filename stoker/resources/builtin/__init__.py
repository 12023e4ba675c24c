"""The resource types Stoker ships: Heat's generic ``OS::Heat::*`` types that
need no cloud, and ``Stoker::Local::*`` types acting on the local machine."""

from __future__ import annotations

from stoker.resources.builtin import (
    autoscaling_group,
    instance_group,
    local_command,
    local_file,
    none,
    random_string,
    resource_chain,
    resource_group,
    scaling_policy,
    software_component,
    software_config,
    software_deployment,
    stack,
    test_resource,
    value,
    wait_condition,
)

MODULES = (none, value, random_string, test_resource, local_file, local_command, stack, resource_group,
           resource_chain, autoscaling_group, instance_group, scaling_policy, wait_condition, software_config,
           software_component, software_deployment)


def resource_mapping() -> dict:
    """Type name -> plug-in class, for every built-in type."""
    mapping: dict = {}
    for module in MODULES:
        mapping.update(module.resource_mapping())
    return mapping
