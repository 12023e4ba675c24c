"""``OS::Heat::ScalingPolicy`` (and ``AWS::AutoScaling::ScalingPolicy``): a signal to it
resizes an ``OS::Heat::AutoScalingGroup``.

Signals come through ``POST .../resources/<policy>/signal`` (``signal_url``,
with a token of the project) or ``stoker stack resource signal``.  For
alarms, which carry no token, ``alarm_url`` is that same URL with
``?signature=...`` added: an HMAC-SHA256, under a secret of the policy's own
(stored sealed, made at create), of the project, stack id and policy name.
The API takes a signal carrying a matching signature as from the project
(Heat's alarm_url is an EC2-signed URL instead, for its CFN API).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from stoker.constraints import AllowedValues, Range
from stoker.resources import attributes, properties
from stoker.resources.builtin import scaling
from stoker.resources.builtin._common import given, signal_url, unless_pending
from stoker.resources.exceptions import NotFound, NotSupported, ResourcePropertyValueDependency
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus
from stoker.secretbox import unseal

S = properties.Schema
#: resource data key of the secret that signs ``alarm_url`` (sealed)
SECRET_KEY = "alarm_secret"


def alarm_signature(secret: str, project: str, stack_id: str, resource_name: str) -> str:
    message = f"{project}\n{stack_id}\n{resource_name}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_matches(stored_data: dict, project: str, stack_id: str, resource_name: str,
                      signature: str) -> bool:
    """Is ``signature`` the one of this policy's ``alarm_url``?  (``stored_data``: its row's data.)"""
    secret = unseal((stored_data or {}).get(SECRET_KEY))
    if not isinstance(secret, str):
        return False
    expected = alarm_signature(secret, project, stack_id, resource_name)
    return hmac.compare_digest(expected.encode(), signature.encode())


class ScalingPolicy(Resource):
    """Adjusts a scaling group when signalled, within its bounds and cooldown.

    ``adjustment_type``: ``change_in_capacity`` adds ``scaling_adjustment``
    members (negative: removes), ``exact_capacity`` sets the size,
    ``percent_change_in_capacity`` adds that percentage (at least
    ``min_adjustment_step`` members).  A signal in the cooldown, or one that
    would not change the size, does nothing and records no event, as in Heat.
    """

    support_status = SupportStatus(version="2014.1")
    run_in_thread = False
    acts_outside = False

    #: the property names (the AWS type has its own)
    GROUP, ADJUSTMENT, ADJUSTMENT_TYPE, COOLDOWN, MIN_STEP = (
        "auto_scaling_group_id", "scaling_adjustment", "adjustment_type", "cooldown", "min_adjustment_step")
    #: adjustment type as the template writes it -> as ``scaling`` knows it
    TYPES = {name: name for name in scaling.ADJUSTMENT_TYPES}

    properties_schema = {
        "auto_scaling_group_id": S(S.STRING, "The scaling group to adjust (its reference).", required=True),
        "scaling_adjustment": S(S.NUMBER, "The size of the adjustment.", required=True, update_allowed=True),
        "adjustment_type": S(S.STRING, "What the adjustment is: a change, a size, or a percentage.",
                             required=True, update_allowed=True,
                             constraints=[AllowedValues(list(scaling.ADJUSTMENT_TYPES))]),
        "cooldown": S(S.NUMBER, "Cooldown in seconds (default: the group's).", update_allowed=True),
        "min_adjustment_step": S(S.INTEGER, "The least number of members a percent_change_in_capacity "
                                 "adds or removes.", update_allowed=True, constraints=[Range(min=0)]),
    }
    attributes_schema = {
        "alarm_url": attributes.Schema("A URL that signals this policy without a token (signed).",
                                       type=attributes.Schema.STRING,
                                       cache_mode=attributes.Schema.CACHE_NONE),
        "signal_url": attributes.Schema("The API URL that signals this policy (with a token).",
                                        type=attributes.Schema.STRING),
    }

    @unless_pending
    def validate(self) -> None:
        kind = self.TYPES.get(self.properties[self.ADJUSTMENT_TYPE])
        if given(self, self.MIN_STEP) is not None and kind != scaling.PERCENT_CHANGE_IN_CAPACITY:
            percent = next(name for name, kind in self.TYPES.items() if kind == scaling.PERCENT_CHANGE_IN_CAPACITY)
            raise ResourcePropertyValueDependency(self.MIN_STEP, self.ADJUSTMENT_TYPE, percent)

    def _given(self, name: str) -> Any:
        """A property's value, or None when the template leaves it out."""
        return self.properties[name] if given(self, name) is not None else None

    def handle_create(self) -> None:
        self.data_set(SECRET_KEY, secrets.token_urlsafe(32), redact=True)
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        """Every property but the group's is read at the next signal: nothing to do now."""

    async def handle_signal(self, details: Any = None) -> Any:
        """Here the group is resized to its end; on a worker its resize starts there, and the id
        ``check_signal_complete`` polls is returned."""
        if self.action in (self.SUSPEND, self.DELETE) or self.resource_id is None:
            raise NotSupported(f"Signal resource during {self.action}")
        return await self._group().adjust(self.properties[self.ADJUSTMENT],
                                          self.TYPES[self.properties[self.ADJUSTMENT_TYPE]],
                                          self._given(self.MIN_STEP), self._given(self.COOLDOWN))

    async def check_signal_complete(self, token: Any) -> bool:
        """Resized here (no token): done; on the workers, when the group's resize has ended."""
        return token is None or await self._group().scaling_ended(token)

    def _group(self) -> Any:
        """The group this policy scales, acting for the same signal (its polls are that signal's)."""
        reference = self.properties[self.GROUP]
        for resource in self.stack.resources.values():
            if (resource is not self and resource.resource_id is not None and hasattr(resource, "adjust")
                    and resource.FnGetRefId() == reference):
                resource.signal_id = self.signal_id
                return resource
        raise NotFound(f'Alarm {self.name} could not find scaling group named "{reference}"')

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        return signal_url(self) if name == "signal_url" else self.alarm_url()

    def alarm_url(self) -> str:
        secret = self.data().get(SECRET_KEY)
        signature = alarm_signature(secret, self.stack.project_id, self.stack.id, self.name)
        return f"{signal_url(self)}?signature={signature}"


class AWSScalingPolicy(ScalingPolicy):
    """``AWS::AutoScaling::ScalingPolicy``: the same policy under CloudFormation's names
    (``ChangeInCapacity``, ``ExactCapacity``, ``PercentChangeInCapacity``); its
    reference, like its ``AlarmUrl``, is the signed alarm URL, as in Heat."""

    GROUP, ADJUSTMENT, ADJUSTMENT_TYPE, COOLDOWN, MIN_STEP = (
        "AutoScalingGroupName", "ScalingAdjustment", "AdjustmentType", "Cooldown", "MinAdjustmentStep")
    TYPES = {"ChangeInCapacity": scaling.CHANGE_IN_CAPACITY, "ExactCapacity": scaling.EXACT_CAPACITY,
             "PercentChangeInCapacity": scaling.PERCENT_CHANGE_IN_CAPACITY}

    properties_schema = {
        "AutoScalingGroupName": S(S.STRING, "The scaling group to adjust (its reference).", required=True),
        "ScalingAdjustment": S(S.INTEGER, "The size of the adjustment.", required=True, update_allowed=True),
        "AdjustmentType": S(S.STRING, "What the adjustment is: a change, a size, or a percentage.",
                            required=True, update_allowed=True, constraints=[AllowedValues(list(TYPES))]),
        "Cooldown": S(S.INTEGER, "Cooldown in seconds (default: the group's).", update_allowed=True),
        "MinAdjustmentStep": S(S.INTEGER, "The least number of members a PercentChangeInCapacity "
                               "adds or removes.", update_allowed=True, constraints=[Range(min=0)]),
    }
    attributes_schema = {
        "AlarmUrl": attributes.Schema("A URL that signals this policy without a token (signed).",
                                      type=attributes.Schema.STRING, cache_mode=attributes.Schema.CACHE_NONE),
    }

    def get_reference_id(self) -> Any:
        return self.alarm_url() if self.resource_id is not None else self.name


def resource_mapping() -> dict:
    return {"OS::Heat::ScalingPolicy": ScalingPolicy, "AWS::AutoScaling::ScalingPolicy": AWSScalingPolicy}
