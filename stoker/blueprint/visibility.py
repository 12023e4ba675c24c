"""Who sees a site or a saved filter: Cloudify's visibilities, checked once for both (the plugin catalog's)."""

from __future__ import annotations

from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.store.plugin_packages import VISIBILITIES


def checked(value: Any) -> str:
    if value not in VISIBILITIES:
        raise BlueprintError(f"Invalid visibility: `{str(value)[:30]}`. Valid visibility's values are: "
                             f"{', '.join(VISIBILITIES)}", code="invalid-visibility")
    return value


def widens(old: str, new: str) -> bool:
    """A visibility only widens (private -> tenant -> global), as Cloudify's."""
    return VISIBILITIES.index(new) >= VISIBILITIES.index(old)
