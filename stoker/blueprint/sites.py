"""A project's sites (``cfy sites create|get|update|list|delete``) and the site of each deployment
(``cfy deployments set-site``), checked as Cloudify's manager checks them."""

from __future__ import annotations

from typing import Any

from stoker.blueprint import visibility
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.errors import NotFound
from stoker.store.blueprint_records import BlueprintRecords
from stoker.store.site_records import SiteRecords

LONGEST_NAME = 255


def _location(text: Any) -> tuple[float | None, float | None]:
    """``"latitude,longitude"`` as two numbers in range; ``""`` clears it."""
    if text == "":
        return None, None
    if not isinstance(text, str) or "," not in text:
        raise BlueprintError(f'Invalid location `{str(text)[:100]}`, the format is expected to be "latitude,longitude" '
                             'such as "32.071072,34.787274"', code="invalid-site")
    latitude, _, longitude = text.partition(",")
    try:
        found = float(latitude), float(longitude)
    except ValueError:
        raise BlueprintError(f"Invalid location `{text[:100]}`, the latitude and longitude are expected to be of "
                             "type float", code="invalid-site") from None
    if not (-90.0 <= found[0] <= 90.0 and -180.0 <= found[1] <= 180.0):
        raise BlueprintError(f"Invalid location `{text[:100]}`. The latitude must be a number between -90 and 90 and "
                             "the longitude between -180 and 180", code="invalid-site")
    return found


def _name(name: Any, what: str = "name") -> str:
    if not isinstance(name, str) or not name or len(name) > LONGEST_NAME or any(c in name for c in "/\\\0"):
        raise BlueprintError(f"The `{what}` argument is 1 to {LONGEST_NAME} characters, none of / \\ or NUL",
                             code="invalid-site")
    return name


class Sites:
    def __init__(self, store: Any, project_id: str):
        self.records = SiteRecords(store)
        self.deployments = BlueprintRecords(store)
        self.project_id = project_id

    def create(self, name: str, location: Any = None, shown_to: Any = None, created_by: str = "admin") -> dict:
        latitude, longitude = _location(location) if location is not None else (None, None)
        self.records.add({"project_id": self.project_id, "name": _name(name), "latitude": latitude,
                          "longitude": longitude, "visibility": visibility.checked(shown_to or "tenant"),
                          "created_by": created_by})
        return self.get(name)

    def get(self, name: str) -> dict:
        return self.records.find(self.project_id, name)

    def _own(self, name: str) -> dict:
        found = self.get(name)
        if found["project_id"] != self.project_id:  # another tenant's global site: seen, not changed here
            raise NotFound(f"Requested `Site` with ID `{name}` was not found")
        return found

    def list(self) -> list[dict]:
        return self.records.list([self.project_id])

    def update(self, name: str, location: Any = None, shown_to: Any = None, new_name: Any = None) -> dict:
        """Change what is given; a visibility only widens (private -> tenant -> global), as Cloudify's."""
        site = self._own(name)
        fields: dict[str, Any] = {}
        if location is not None:
            fields["latitude"], fields["longitude"] = _location(location)
        if shown_to:
            fields["visibility"] = visibility.widened(name, site["visibility"], visibility.checked(shown_to))
        if new_name and new_name != name:
            fields["name"] = _name(new_name, "new_name")
        if fields:
            self.records.change(site["pk"], **fields)
        return self.get(fields.get("name", name))

    def delete(self, name: str) -> None:
        self.records.delete(self._own(name)["pk"])

    def set_site(self, deployment_id: str, site_name: str | None) -> None:
        """The deployment's site (``None``: detached)."""
        deployment = self.deployments.get_deployment(self.project_id, deployment_id)
        self.records.set_deployment_site(deployment["pk"], self.get(site_name)["pk"] if site_name else None)

    def site_of(self, deployment_id: str) -> str | None:
        return self.records.site_of(self.project_id, deployment_id)
