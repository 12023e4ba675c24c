"""Regions: other orchestration endpoints (another ``stoker api``, or a Heat) that an
``OS::Heat::Stack`` names in ``context.region_name``, as Heat's remote stacks reach another
region's Heat through the catalog.  ``$STOKER_HOME/stoker.conf``::

    [regions]
    local = RegionOne                              # this engine's own region (the default)
    RegionTwo = http://10.0.0.2:8004/v1/PROJECT    # Heat v1 endpoint, with the project
    RegionTwo.token = T                            # sent as X-Auth-Token (optional)

``HeatEndpoint`` is the little of the Heat v1 API a remote stack needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from stoker.errors import StokerError
from stoker.heat_words import REGION_CODE
from stoker.home import config

LOCAL_REGION = "RegionOne"
#: seconds a request to another region may take
TIMEOUT = 30.0
#: bytes an answer from another region may hold
MAX_ANSWER = 16 * 1024 * 1024


class RegionError(StokerError):
    code = REGION_CODE


@dataclass(frozen=True)
class Region:
    name: str
    endpoint: str
    token: str | None = None


def local_region() -> str:
    parser = config()
    return parser.get("regions", "local", fallback=LOCAL_REGION) if parser.has_section("regions") else LOCAL_REGION


def region(name: Any) -> Region:
    """The configured region ``name``; Heat's words when there is none."""
    name = str(name)
    parser = config()
    endpoint = parser.get("regions", name, fallback=None) if parser.has_section("regions") else None
    if not endpoint or name == "local" or "." in name:
        raise RegionError(f'Cannot establish connection to Heat endpoint at region "{name}" due to '
                          f'"public endpoint for orchestration service in {name} region not found"')
    return Region(name, endpoint.rstrip("/"), parser.get("regions", f"{name}.token", fallback=None))


class HeatEndpoint:
    """Stacks of one region, over its Heat v1 API."""

    def __init__(self, where: Region):
        self.region = where

    def request(self, method: str, path: str, body: Any = None) -> Any:
        import urllib.error  # here: a local create never loads the HTTP client
        import urllib.request

        headers = {"Accept": "application/json", "Content-Type": "application/json", "User-Agent": "stoker"}
        if self.region.token:
            headers["X-Auth-Token"] = self.region.token
        data = json.dumps(body).encode() if body is not None else None
        try:
            request = urllib.request.Request(self.region.endpoint + path, data=data, method=method, headers=headers)
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                raw = response.read(MAX_ANSWER + 1)
            if len(raw) > MAX_ANSWER:
                raise ValueError(f"an answer of more than {MAX_ANSWER} bytes")
            return json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            raise RegionError(_heat_message(exc)) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:  # unreachable, a bad URL, not JSON
            raise RegionError(f'Cannot establish connection to Heat endpoint at region "{self.region.name}" '
                              f'due to "{getattr(exc, "reason", exc)}"') from None

    def validate(self, template: str, files: dict) -> None:
        try:
            self.request("POST", "/validate", {"template": template, "files": files})
        except RegionError as exc:
            raise RegionError(f'Failed validating stack template using Heat endpoint at region '
                              f'"{self.region.name}" due to "ERROR: {exc}"') from None

    def create(self, name: str, template: str, files: dict, parameters: dict, timeout: Any) -> str:
        """Start the create; returns the stack's path (``/stacks/NAME/ID``) the other calls take."""
        body = {"stack_name": name, "template": template, "files": files, "parameters": parameters,
                "disable_rollback": True}
        if timeout:
            body["timeout_mins"] = timeout
        made = self.request("POST", "/stacks", body)
        try:
            return f"/stacks/{quote(name, safe='')}/{made['stack']['id']}"
        except (KeyError, TypeError):
            raise RegionError(f'Heat endpoint at region "{self.region.name}" gave no stack id') from None

    def update(self, path: str, template: str, files: dict, parameters: dict) -> None:
        self.request("PUT", path, {"template": template, "files": files, "parameters": parameters})

    def action(self, path: str, action: str) -> None:
        self.request("POST", f"{path}/actions", {action.lower(): None})

    def delete(self, path: str) -> None:
        try:
            self.request("DELETE", path)
        except RegionError as exc:
            if "could not be found" not in str(exc):
                raise

    def show(self, path: str) -> dict | None:
        """The stack (None once it is gone)."""
        try:
            return self.request("GET", path)["stack"]
        except RegionError as exc:
            if "could not be found" in str(exc):
                return None
            raise


def _heat_message(exc: Any) -> str:
    """The message of a Heat error answer (an ``HTTPError``), else its status."""
    try:
        body = json.loads(exc.read(MAX_ANSWER))
        return str(body["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code}"
