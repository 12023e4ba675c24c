"""``OS::Heat::InstanceGroup`` and ``AWS::AutoScaling::AutoScalingGroup``: groups of
``AWS::EC2::Instance`` members built from an ``AWS::AutoScaling::LaunchConfiguration``.

They are ``OS::Heat::AutoScalingGroup`` under CloudFormation's names: the member
definition is not given but made, as Heat makes it, from the launch
configuration the group names (the properties it gives, the group's ``Tags``
plus a ``metering.`` tag, the configuration's metadata), and the member type is
whatever ``AWS::EC2::Instance`` maps to in the environment (simulated without a
mapping).  A new launch configuration (it is replaced when its properties
change, so its reference changes) replaces the members in batches when the
update policy (``RollingUpdate`` / ``AutoScalingRollingUpdate``) says so; without
one only new members get it, as in Heat.  ``LoadBalancerNames`` is accepted
and, with no load balancer to tell, ignored.
"""

from __future__ import annotations

import re
from typing import Any

from stoker.constraints import CustomConstraint, Range
from stoker.errors import ResourcePending, ValidationFailed
from stoker.resources import attributes, properties
from stoker.resources.builtin._common import given
from stoker.resources.builtin.autoscaling_group import AutoScalingGroup
from stoker.resources.openstack import servers
from stoker.resources.support import SupportStatus

S = properties.Schema
#: the member type, as Heat's (the environment may map it to a provider template)
MEMBER_TYPE = "AWS::EC2::Instance"
LAUNCH_CONFIGURATION_TYPE = "AWS::AutoScaling::LaunchConfiguration"
_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?")
_TAGS = S(S.LIST, "Key/Value tags given to every member.",
          schema={"*": S(S.MAP, schema={"Key": S(S.STRING, required=True), "Value": S(S.STRING, required=True)})})
_ROLLING = {
    "MinInstancesInService": S(S.INTEGER, "Members kept in service during a rolling replace.", default=0,
                               constraints=[Range(min=0)]),
    "MaxBatchSize": S(S.INTEGER, "Members replaced at once.", default=1, constraints=[Range(min=1)]),
    "PauseTime": S(S.STRING, "The pause between two batches, an ISO 8601 duration PT#H#M#S.", default="PT0S"),
}


def duration_seconds(text: str, place: str) -> int:
    """``PT#H#M#S`` in seconds (the only ISO 8601 durations Heat takes)."""
    found = _DURATION.fullmatch(text or "")
    if not found or text == "PT":
        raise ValueError(f"{place}: Only ISO 8601 duration format of the form PT#H#M#S is supported.")
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    return hours * 3600 + minutes * 60 + seconds


class InstanceGroup(AutoScalingGroup):
    """``Size`` members made from ``LaunchConfigurationName``.  Attribute ``InstanceList``: the
    members' ``PublicIp``, comma separated (``0.0.0.0`` for one that has none)."""

    support_status = SupportStatus(version="2014.1")
    MIN_SIZE = MAX_SIZE = DESIRED = "Size"
    COOLDOWN = None
    DEFINITION = "LaunchConfigurationName"
    #: the update policy key of the rolling replace
    ROLLING_UPDATE = "RollingUpdate"
    #: Heat makes these members without comparing their provider template with the
    #: ``AWS::EC2::Instance`` facade (its functional tests' member templates lack the facade's
    #: attributes, and a failing one must fail its members' create, not the group's validation)
    checks_member_facade = False

    properties_schema = {
        "AvailabilityZones": S(S.LIST, "Not used (the members' zone comes from the launch configuration).",
                               required=True),
        "LaunchConfigurationName": S(S.STRING, "The launch configuration (its reference) members are made from.",
                                     required=True, update_allowed=True),
        "Size": S(S.INTEGER, "The number of members.", required=True, update_allowed=True,
                  constraints=[Range(min=0)]),
        "LoadBalancerNames": S(S.LIST, "Load balancers to register members with (ignored: none here)."),
        "Tags": _TAGS,
    }
    attributes_schema = {
        "InstanceList": attributes.Schema("The members' public IP addresses, comma separated.",
                                          type=attributes.Schema.STRING),
    }
    update_policy_schema = {ROLLING_UPDATE: S(S.MAP, "How members are replaced when the launch "
                                              "configuration changes.", schema=_ROLLING)}

    @classmethod
    def has_attribute(cls, name: str) -> bool:
        return name in cls.attribute_schemata()

    def validate(self) -> None:
        super().validate()
        policy = self._update_policy()
        if policy is not None:
            duration_seconds(policy["PauseTime"], f"resources.{self.name}.update_policy.{self.ROLLING_UPDATE}")

    def member_definition(self) -> dict:
        """As Heat: the launch configuration's given properties, the tags, its metadata."""
        conf = self._launch_configuration()
        props = {name: conf.properties[name] for name in conf.properties_schema if given(conf, name) is not None}
        instance = props.pop("InstanceId", None)
        if instance:  # a configuration made from an existing instance: what it leaves out comes from there
            props = {**servers.launch_properties(self, instance, ("resources", conf.name, "properties", "InstanceId")),
                     **props}
        props["Tags"] = self._tags()
        props.update(self._extra_member_properties())
        definition: dict = {"type": MEMBER_TYPE, "properties": props}
        metadata = conf._resolve(conf.t.metadata) if conf.t.metadata else None
        if metadata:
            definition["metadata"] = metadata
        return definition

    def _extra_member_properties(self) -> dict:
        return {}

    def _launch_configuration(self) -> Any:
        """The resource ``LaunchConfigurationName`` refers to; pending while it is not made."""
        reference = self.properties["LaunchConfigurationName"]
        for resource in self.stack.resources.values():
            if resource.type() == LAUNCH_CONFIGURATION_TYPE and resource.FnGetRefId() == reference:
                return resource
        if any(r.type() == LAUNCH_CONFIGURATION_TYPE and r.resource_id is None for r in self.stack.resources.values()):
            raise ResourcePending(reference)
        raise ValidationFailed.single(("resources", self.name, "properties", "LaunchConfigurationName"),
                                      "not-found", f'no launch configuration named "{reference}" in the stack')

    def _tags(self) -> list:
        tags = list(self.properties["Tags"] or [])
        if any(str(tag.get("Key", "")).startswith("metering.") for tag in tags):
            return tags
        return tags + [{"Key": "metering.groupname", "Value": self.physical_resource_name()}]

    def get_reference_id(self) -> Any:
        return self.physical_resource_name() if self.resource_id is not None else self.name

    def plan_update(self, definition: Any, new_props: Any) -> Any:
        """As Heat: a change to a property that cannot be updated (``AvailabilityZones``, ``Tags``...)
        replaces the group; the others update its nested stack."""
        plan = super().plan_update(definition, new_props)
        plan.forcing = [key for key in plan.prop_diff if not self._update_allowed(key)]
        return plan

    def _update_policy(self) -> dict | None:
        raw = (self._resolve(self.t.update_policy) or {}).get(self.ROLLING_UPDATE)
        if raw is None:
            return None
        policy = properties.Properties(_ROLLING, raw,
                                       path=("resources", self.name, "update_policy", self.ROLLING_UPDATE))
        return {name: policy[name] for name in _ROLLING}

    def rolling_policy(self) -> dict | None:
        policy = self._update_policy()
        if policy is None:
            return None
        return {"min_in_service": policy["MinInstancesInService"], "max_batch_size": policy["MaxBatchSize"],
                "pause_time": duration_seconds(policy["PauseTime"], self.name)}

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name
        if key != "InstanceList":
            return super().FnGetAtt(key, *path)
        if self.action == self.INIT or (self.action == self.CREATE and self.resource_id is None):
            return None
        addresses = [member.FnGetAtt("PublicIp") or "0.0.0.0" for member in self.live_members()]
        return ",".join(addresses) or None


class AWSAutoScalingGroup(InstanceGroup):
    """``MinSize``..``MaxSize`` members (``DesiredCapacity`` at create and update), resized by
    ``AWS::AutoScaling::ScalingPolicy`` signals, with ``Cooldown``."""

    MIN_SIZE, MAX_SIZE, DESIRED, COOLDOWN = "MinSize", "MaxSize", "DesiredCapacity", "Cooldown"
    ROLLING_UPDATE = "AutoScalingRollingUpdate"
    #: the tag Heat adds so that metering can name the group
    METERING_TAG = "metering.AutoScalingGroupName"

    properties_schema = {
        "AvailabilityZones": InstanceGroup.properties_schema["AvailabilityZones"],
        "LaunchConfigurationName": S(S.STRING, "The launch configuration (its reference) members are made from "
                                     "(or InstanceId).", update_allowed=True),
        "InstanceId": S(S.STRING, "An existing server whose image, flavor, key and security groups the members "
                        "get (or LaunchConfigurationName).", constraints=[CustomConstraint("nova.server")]),
        # the OS::Heat group's bounds under CloudFormation's names
        "MaxSize": AutoScalingGroup.properties_schema["max_size"],
        "MinSize": AutoScalingGroup.properties_schema["min_size"],
        "DesiredCapacity": AutoScalingGroup.properties_schema["desired_capacity"],
        "Cooldown": AutoScalingGroup.properties_schema["cooldown"],
        "LoadBalancerNames": InstanceGroup.properties_schema["LoadBalancerNames"],
        "VPCZoneIdentifier": S(S.LIST, "Subnets; the first is given to members as SubnetId.",
                               schema={"*": S(S.STRING)}),
        "Tags": _TAGS,
    }
    update_policy_schema = {ROLLING_UPDATE: S(S.MAP, "How members are replaced when the launch "
                                              "configuration changes.", schema=_ROLLING)}

    def validate(self) -> None:
        """As Heat: the members come from a launch configuration or an instance, one of the two."""
        if bool(given(self, "InstanceId")) == bool(given(self, "LaunchConfigurationName")):
            raise ValidationFailed.single(("resources", self.name, "properties"), "invalid-property-value",
                                          "Either 'InstanceId' or 'LaunchConfigurationName' must be provided.")
        super().validate()

    def member_definition(self) -> dict:
        """From the launch configuration, or (``InstanceId``) as Heat: the instance's image, flavor,
        key and security groups, the tags and the subnet."""
        instance = self.properties["InstanceId"]
        if not instance:
            return super().member_definition()
        launched = servers.launch_properties(self, instance, ("resources", self.name, "properties", "InstanceId"))
        props = {**launched, "Tags": self._tags(), **self._extra_member_properties()}
        return {"type": MEMBER_TYPE, "properties": props}

    def _tags(self) -> list:
        """As Heat: the instance group's tags, and the group's name for metering always."""
        return super()._tags() + [{"Key": self.METERING_TAG, "Value": self.physical_resource_name()}]

    def _extra_member_properties(self) -> dict:
        zones = self.properties["VPCZoneIdentifier"]
        return {"SubnetId": zones[0]} if zones else {}


def resource_mapping() -> dict:
    return {"OS::Heat::InstanceGroup": InstanceGroup, "AWS::AutoScaling::AutoScalingGroup": AWSAutoScalingGroup}
