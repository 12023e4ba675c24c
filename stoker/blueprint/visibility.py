"""Cloudify's visibilities (private -> tenant -> global), checked once for sites, saved filters, blueprints,
deployments and secrets (the plugin catalog's values): who may see a row, and how it changes."""

from __future__ import annotations

from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.state import tenant_of
from stoker.errors import IllegalAction
from stoker.store.plugin_packages import VISIBILITIES

#: what ``set-visibility`` takes: private is given at creation only, as Cloudify's
WIDER = ("tenant", "global")


def checked(value: Any, allowed: tuple[str, ...] = VISIBILITIES) -> str:
    if value not in allowed:
        raise BlueprintError(f"Invalid visibility: `{str(value)[:30]}`. Valid visibility's values are: "
                             f"{list(allowed)}", code="invalid-visibility")
    return value


def widens(old: str, new: str) -> bool:
    """A visibility only widens (private -> tenant -> global), as Cloudify's."""
    return VISIBILITIES.index(new) >= VISIBILITIES.index(old)


def widened(name: str, old: str, new: str) -> str:
    """``new``, when it widens ``old``: else Cloudify's refusal (400 ``illegal_action_error``)."""
    if not widens(old, new):
        raise IllegalAction(f"Can't set the visibility of `{name}` to {new} because it already has wider visibility")
    return new


def owned(row: dict, project_id: str, name: str) -> dict:
    """``row``, when ``project_id`` may change it: another tenant's global one is changed from there only."""
    if row["project_id"] != project_id:
        raise IllegalAction(f"Can't modify the global resource `{name}` from outside its tenant "
                            f"`{tenant_of(row['project_id'])}`")
    return row


def within(deployment_id: str, blueprint_id: str, blueprint_visibility: str, new: str) -> str:
    """``new``, when a deployment of that blueprint may have it: never wider than its blueprint's."""
    if not widens(new, blueprint_visibility):
        raise IllegalAction(f"The visibility of deployment `{deployment_id}` can't be wider than the visibility of "
                            f"its blueprint `{blueprint_id}`. Current blueprint visibility is {blueprint_visibility}")
    return new
