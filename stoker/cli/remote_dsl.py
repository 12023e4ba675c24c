"""``RemoteEngine.executions``, ``.blueprints`` and ``.plugins``: the blueprint half over a server's Cloudify
REST API.

The same calls as ``Engine.executions`` (``workflows/executions.py``), ``Engine.blueprints``
(``blueprint/blueprints.py``) and the plugin catalog (``cli/plugin_cmds.LocalPlugins``) that the
``stoker`` commands make, each through ``/api/v3.1`` of a ``stoker api`` server, so ``stoker --url ...
install``, ``execution ...``, ``deployment update``, ``event list`` and ``plugin ...`` work there as here.
An execution starts in the server (which answers once it is stored) and is followed through its ``Started``
handle; the rows come back in the local shapes.
"""

from __future__ import annotations

import zipfile
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import quote

from stoker.errors import NotFound, StokerError

if TYPE_CHECKING:  # pragma: no cover - concurrent.futures loads with a remote execution only
    from stoker.started import Started

#: the fields of an execution and of an event as the local service gives them
EXECUTION_FIELDS = ("id", "workflow_id", "deployment_id", "status", "status_display", "parameters", "error",
                    "created_at", "started_at", "ended_at", "tenant_name", "is_dry_run")
EVENT_FIELDS = ("timestamp", "type", "event_type", "level", "message", "node_name", "node_instance_id", "operation",
                "execution_id", "workflow_id", "deployment_id", "error_causes")
LINE_FIELDS = ("timestamp", "type", "event_type", "level", "node_instance_id", "operation", "message")
#: the most rows the server gives in one page
PAGE = 1000


def _only(row: dict, fields: tuple) -> dict:
    return {key: row.get(key) for key in fields}


class _OverTheApi:
    """A service of ``remote`` (a ``RemoteEngine``); what it does not serve is refused in one line."""

    def __init__(self, remote: Any):
        self.call: Callable[..., Any] = remote.cloudify
        self.fetch: Callable[..., tuple[bytes, str | None]] = remote.cloudify_file

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise StokerError(f"{name.replace('_', ' ')} is not served over --url yet: run this command without --url")

    def rows(self, path: str, since: int = 0, limit: int | None = None, **query: Any) -> list[dict]:
        """Every item of a listing from the ``since``-th on (at most ``limit``), page after page."""
        found: list[dict] = []
        while limit is None or len(found) < limit:
            size = PAGE if limit is None else min(PAGE, limit - len(found))
            items = self.call("GET", path, _offset=since + len(found), _size=size, **query)["items"]
            found += items
            if len(items) < size:
                break
        return found


class RemoteExecutions(_OverTheApi):
    """``Engine.executions`` over ``/executions`` and ``/events``."""

    def get(self, execution_id: str) -> dict:
        return _only(self.call("GET", f"/executions/{quote(execution_id, safe='')}"), EXECUTION_FIELDS)

    def list(self, deployment_id: str | None = None) -> list[dict]:
        return [_only(e, EXECUTION_FIELDS) for e in self.rows("/executions", deployment_id=deployment_id)]

    def events(self, execution_id: str, include_logs: bool = False, since: int = 0,
               limit: int | None = None) -> list[dict]:
        return [_only(e, EVENT_FIELDS) for e in self.rows("/events", since, limit, execution_id=execution_id,
                                                           type=_types(include_logs))]

    def event_lines(self, execution_id: str, since: int = 0, limit: int | None = None) -> list[dict]:
        return [_only(e, LINE_FIELDS) for e in self.events(execution_id, True, since, limit)]

    def count_events(self, execution_id: str, include_logs: bool = False) -> int:
        found = self.call("GET", "/events", execution_id=execution_id, type=_types(include_logs), _size=0)
        return found["metadata"]["pagination"]["total"]

    def begin(self, verb: str, *args: Any, **kwargs: Any) -> Started:
        """``start`` or ``resume`` under way in the server: the handle once it is stored there."""
        from stoker.started import Started
        from stoker.store.models import ACTIVE_EXECUTION

        return Started(self.get, lambda execution: execution["status"] in ACTIVE_EXECUTION,
                       getattr(self, f"_start_{verb}")(*args, **kwargs)["id"])

    def start(self, workflow_id: str, deployment_id: str, parameters: dict | None = None, force: bool = False,
              allow_custom_parameters: bool = False, queue: bool = False, dry_run: bool = False) -> dict:
        return self.begin("start", workflow_id, deployment_id, parameters, force, allow_custom_parameters,
                          queue, dry_run).wait()

    def _start_start(self, workflow_id: str, deployment_id: str, parameters: dict | None = None,
                     force: bool = False, allow_custom_parameters: bool = False, queue: bool = False,
                     dry_run: bool = False) -> dict:
        return self.call("POST", "/executions", {
            "workflow_id": workflow_id, "deployment_id": deployment_id, "parameters": parameters or {},
            "force": force, "allow_custom_parameters": allow_custom_parameters, "queue": queue, "dry_run": dry_run})

    def schedule(self, workflow_id: str, deployment_id: str, when: str, parameters: dict | None = None,
                 force: bool = False, allow_custom_parameters: bool = False, dry_run: bool = False) -> dict:
        return _only(self.call("POST", "/executions", {
            "workflow_id": workflow_id, "deployment_id": deployment_id, "parameters": parameters or {},
            "force": force, "allow_custom_parameters": allow_custom_parameters, "dry_run": dry_run,
            "scheduled_time": when}), EXECUTION_FIELDS + ("scheduled_for", "schedule_id"))

    def delete_ended(self, keep_last: int | None = None, to_datetime: str | None = None,
                     deployment_id: str | None = None) -> int:
        body = {k: v for k, v in (("keep_last", keep_last), ("to_datetime", to_datetime)) if v is not None}
        query = {"deployment_id": deployment_id} if deployment_id is not None else {}
        return self.call("DELETE", "/executions", body, **query)["items"][0]["count"]

    def resume(self, execution_id: str) -> dict:
        return self.begin("resume", execution_id).wait()

    def _start_resume(self, execution_id: str) -> dict:
        return self._act(execution_id, "resume")

    def cancel(self, execution_id: str, force: bool = False) -> dict:
        return _only(self._act(execution_id, "force-cancel" if force else "cancel"), EXECUTION_FIELDS)

    def _act(self, execution_id: str, action: str) -> dict:
        return self.call("POST", f"/executions/{quote(execution_id, safe='')}", {"action": action})

    @property
    def updates(self) -> RemoteDeploymentUpdates:
        return RemoteDeploymentUpdates(self)


class RemoteDeploymentUpdates:
    """``Executions.updates`` over ``/deployment-updates``: the update runs in the server, its execution is
    followed here."""

    def __init__(self, executions: RemoteExecutions):
        self.executions = executions

    def begin(self, deployment_id: str, blueprint_id: str | None = None, inputs: dict | None = None,
              preview: bool = False, **options: Any) -> tuple[dict, Started | None]:
        from stoker.started import Started
        from stoker.store.models import ACTIVE_EXECUTION

        found = self.executions.call("POST", f"/deployment-updates/{quote(deployment_id, safe='')}/update/initiate",
                                     {"blueprint_id": blueprint_id, "inputs": inputs or {}, "preview": preview,
                                      **options})
        if preview:
            return found, None
        return found, Started(self.executions.get, lambda execution: execution["status"] in ACTIVE_EXECUTION,
                              found["execution_id"])

    def get(self, update_id: str) -> dict:
        return self.executions.call("GET", f"/deployment-updates/{quote(update_id, safe='')}")

    def list(self, deployment_id: str | None = None) -> list[dict]:
        return self.executions.rows("/deployment-updates", deployment_id=deployment_id)


def _types(include_logs: bool) -> list[str]:
    return ["cloudify_event", "cloudify_log"] if include_logs else ["cloudify_event"]


class _Kept(_OverTheApi):
    """Rows the server keeps under ``path``: list, get, delete."""

    path = ""

    def list(self) -> list[dict]:
        return self.rows(self.path)

    def get(self, row_id: str) -> dict:
        return self.call("GET", f"{self.path}/{quote(row_id, safe='')}")

    def delete(self, row_id: str) -> None:
        self.call("DELETE", f"{self.path}/{quote(row_id, safe='')}")


class RemoteBlueprints(_Kept):
    """``Engine.blueprints`` over ``/blueprints``: upload, list, get, delete; ``.deployments``."""

    path = "/blueprints"

    def upload(self, path: str | Path, blueprint_id: str) -> dict:
        """Send blueprint ``path`` with its folder's files, as ``cfy blueprints upload`` does."""
        from stoker.blueprint.archives import pack

        path = Path(path).resolve()
        return self.call("PUT", f"/blueprints/{quote(blueprint_id, safe='')}", raw=pack(path.parent),
                         application_file_name=path.name)

    def plan(self, blueprint_id: str) -> dict:
        return self.get(blueprint_id)["plan"] or {}

    @property
    def deployments(self) -> RemoteDeployments:
        return RemoteDeployments(self)


class RemoteDeployments(_Kept):
    """``Engine.blueprints.deployments`` over ``/deployments``: create, list, get, delete."""

    path = "/deployments"

    def __init__(self, blueprints: RemoteBlueprints):
        self.call = blueprints.call

    def list(self, blueprint_id: str | None = None) -> list[dict]:  # type: ignore[override]
        return self.rows(self.path, blueprint_id=blueprint_id)

    def delete(self, deployment_id: str, force: bool = False, recursive: bool = False) -> None:  # type: ignore[override]
        self.call("DELETE", f"{self.path}/{quote(deployment_id, safe='')}", force=str(force).lower(),
                  recursive=str(recursive).lower())

    def create(self, deployment_id: str, blueprint_id: str, inputs: dict | None = None,
               labels: Iterable[tuple[str, str]] = (), display_name: str | None = None,
               runtime_only_evaluation: bool = False) -> dict:
        return self.call("PUT", f"/deployments/{quote(deployment_id, safe='')}", {
            "blueprint_id": blueprint_id, "inputs": inputs or {}, "labels": [{"key": k, "value": v} for k, v in labels],
            "display_name": display_name, "runtime_only_evaluation": runtime_only_evaluation})


class RemotePlugins(_OverTheApi):
    """The server's plugin catalog over ``/plugins``, in the local catalog's shapes (``Plugin.as_dict``)."""

    def upload(self, package: Path, yamls: list[Path], visibility: str = "tenant") -> dict:
        """Send ``package`` (a wagon or a wheel) and its YAMLs zipped, as ``cfy plugins upload`` does."""
        if package.is_dir():
            raise StokerError(f"{package} is a folder: over --url a plugin is a wagon (.wgn) or a wheel (.whl) with "
                              "its plugin YAML (build one: pip wheel --no-deps FOLDER)")
        if not yamls:
            raise StokerError(f"cannot upload {package}: a plugin needs its plugin YAML (--yaml-path)")
        sent = BytesIO()
        with zipfile.ZipFile(sent, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(package, package.name)
            for path in yamls:
                archive.write(path, path.name)
        return _plugin(self.call("POST", "/plugins", raw=sent.getvalue(), visibility=visibility))

    def list(self) -> list[dict]:
        return [_plugin(p) for p in self._rows()]

    def get(self, name: str, version: str | None = None) -> dict:
        return _plugin(self._find(name, version))

    def delete(self, name: str, version: str | None = None, force: bool = False) -> dict:
        found = self._find(name, version)
        self.call("DELETE", f"/plugins/{quote(found['id'], safe='')}", {"force": force})
        return _plugin(found)

    def set_visibility(self, name: str, version: str | None, visibility: str) -> dict:
        found = self._find(name, version)
        return _plugin(self.call("PATCH", f"/plugins/{quote(found['id'], safe='')}/set-visibility",
                                 {"visibility": visibility}))

    def download(self, name: str, version: str | None, what: str = "package",
                 dsl_version: str | None = None) -> tuple[bytes, str]:
        """As ``LocalPlugins.download``, over ``/plugins/ID/archive`` (``full_archive``) or ``/plugins/ID/yaml``."""
        found = self._find(name, version)
        path = f"/plugins/{quote(found['id'], safe='')}/" + ("yaml" if what == "yaml" else "archive")
        query = {"dsl_version": dsl_version} if what == "yaml" else {"full_archive": "true"} if what == "full" else {}
        data, named = self.fetch(path, **query)
        return data, named or f"{name}-{found['package_version']}"

    def _rows(self) -> list[dict]:
        return self.rows("/plugins")

    def _find(self, name: str, version: str | None) -> dict:
        """The plugin of that name (that version, else the newest)."""
        from stoker.blueprint.plugin_catalog import version_key

        found = [p for p in self._rows() if p["package_name"] == name and version in (None, p["package_version"])]
        if not found:
            raise NotFound(f"plugin {name}{' ' + version if version else ''} is not uploaded")
        return max(found, key=lambda p: version_key(p["package_version"]))


def _plugin(row: dict) -> dict:
    return {"package_name": row["package_name"], "package_version": row["package_version"],
            "yaml_files": row.get("yaml_files") or [], "package": row.get("archive_name"),
            "visibility": row.get("visibility"), "tenant_name": row.get("tenant_name")}
