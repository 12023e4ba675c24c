"""The ``stoker`` CLI against a remote Stoker: ``--url URL --token T`` (or STOKER_URL / STOKER_TOKEN).

``RemoteEngine`` is a ``stoker.client.StackClient`` as ``stoker.Engine`` is: it does each call
through the Heat-compatible REST API of a ``stoker api`` server (executions and blueprints
through its Cloudify API, ``remote_dsl``), so a team can share one server (and its database)
while every command keeps its local behaviour: the verbs return when the action has ended,
``begin`` once the server has started it (``Started``), ``--wait`` prints events.

URL: the orchestration endpoint, ``http://host:8004/v1/PROJECT``; a URL
without ``/v1/...`` gets ``/v1/$STOKER_PROJECT`` (default ``default``).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable
from urllib.parse import quote, unquote, urlencode, urlparse

import click

from stoker.cli.remote_dsl import RemoteBlueprints, RemoteExecutions, RemotePlugins
from stoker.errors import Conflict, NotFound, Problem, StokerError, ValidationFailed
from stoker.started import Started, stack_running

@functools.cache
def _no_redirect_handler() -> type:
    """urllib.request (with http.client, email, ssl) loads only when a server is used."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return NoRedirect


def endpoint_of(url: str, project: str | None = None) -> str:
    url = url.rstrip("/")
    path = urlparse(url).path
    if "/v1/" in path + "/" and path.rstrip("/").split("/")[-1] != "v1":
        return url
    base = url[: -len("/v1")] if url.endswith("/v1") else url
    return f"{base}/v1/{quote(project or os.environ.get('STOKER_PROJECT') or 'default', safe='')}"


class RemoteEngine:
    """Engine-like access to a ``stoker api`` server."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0):
        self.endpoint = endpoint_of(url)
        self.token = token
        self.timeout = timeout
        import urllib.request

        self._opener = urllib.request.build_opener(_no_redirect_handler())

    # -- HTTP ---------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, query: dict | None = None,
                follow: bool = True, raw: bytes | None = None, headers: dict | None = None,
                binary: bool = False) -> tuple[int, dict, Any]:
        """``body`` sent as JSON, or ``raw`` bytes as they are (an archive); ``binary``: the answer's bytes."""
        import urllib.error
        import urllib.request

        url = path if path.startswith("http") else self.endpoint + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        given = headers
        for _ in range(5):
            data = json.dumps(body).encode("utf-8") if body is not None else raw
            headers = {"Accept": "application/json", "User-Agent": "stoker-cli", **(given or {})}
            if data is not None:
                headers["Content-Type"] = "application/json" if raw is None else "application/octet-stream"
            if self.token:
                headers["X-Auth-Token"] = self.token
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with self._opener.open(req, timeout=self.timeout) as response:
                    raw = response.read()
                    return response.status, dict(response.headers), raw if binary else _decode(raw)
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                if exc.code in (301, 302, 303, 307) and follow and exc.headers.get("Location"):
                    url = exc.headers["Location"]
                    continue
                if exc.code in (301, 302, 303, 307):
                    return exc.code, dict(exc.headers), _decode(raw)
                raise _error(exc.code, _decode(raw)) from None
            except urllib.error.URLError as exc:
                raise StokerError(f"cannot reach the Stoker API at {self.endpoint}: {exc.reason}") from None
        raise StokerError(f"too many redirects from {self.endpoint}")

    def _get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query or None)[2]

    def cloudify(self, method: str, path: str, body: Any = None, raw: bytes | None = None, **query: Any) -> Any:
        """A call to the server's Cloudify REST API (``/api/v3.1``), in the endpoint's project's tenant."""
        return self._cloudify(method, path, body, raw, query)[2]

    def cloudify_file(self, path: str, **query: Any) -> tuple[bytes, str | None]:
        """A file the Cloudify REST API sends (a plugin's archive, its YAML), with the name it gives it."""
        _, headers, data = self._cloudify("GET", path, None, None, query, binary=True)
        disposition = next((v for k, v in headers.items() if k.lower() == "content-disposition"), "")
        named = re.search(r'filename="?([^";]+)"?', disposition)
        return data, Path(named[1]).name if named else None

    def _cloudify(self, method: str, path: str, body: Any, raw: bytes | None, query: dict,
                  binary: bool = False) -> tuple[int, dict, Any]:
        from stoker.blueprint.state import tenant_of

        base, _, project = self.endpoint.rpartition("/v1/")
        return self.request(method, f"{base}/api/v3.1{path}", body, query or None, raw=raw,
                            headers={"Tenant": tenant_of(unquote(project))}, binary=binary)

    @property
    def executions(self) -> RemoteExecutions:
        """Workflow executions over the server's Cloudify REST API (``Engine.executions``)."""
        return RemoteExecutions(self)

    @property
    def blueprints(self) -> RemoteBlueprints:
        """Blueprints and their deployments over the server's Cloudify REST API (``Engine.blueprints``)."""
        return RemoteBlueprints(self)

    @property
    def plugins(self) -> RemotePlugins:
        """The server's plugin catalog over its Cloudify REST API (``stoker plugin``)."""
        return RemotePlugins(self)

    def _stack_path(self, name_or_id: str, show_deleted: bool = False) -> str:
        record = self.get_record(name_or_id, show_deleted)
        return f"/stacks/{quote(record.name, safe='')}/{record.id}"

    def _resource_path(self, name_or_id: str, resource_name: str, show_deleted: bool = False) -> str:
        return self._stack_path(name_or_id, show_deleted) + f"/resources/{quote(resource_name, safe='')}"

    # -- reading ----------------------------------------------------------------------------
    def get_record(self, name_or_id: str, show_deleted: bool = False) -> SimpleNamespace:
        status, headers, _ = self.request("GET", f"/stacks/{quote(name_or_id, safe='')}", follow=False)
        location = headers.get("Location") or headers.get("location")
        if status not in (301, 302) or not location:
            raise StokerError(f"the server did not redirect the lookup of stack {name_or_id}")
        name, stack_id = urlparse(location).path.split("/stacks/", 1)[1].split("/")[:2]
        return SimpleNamespace(id=stack_id, name=unquote(name))

    def list_stacks(self, show_deleted: bool = False, tags: Iterable[str] | None = None, **_: Any) -> list[dict]:
        query: dict[str, Any] = {}
        if show_deleted:
            query["show_deleted"] = "true"
        if tags:
            query["tags"] = ",".join(tags)
        return [_plain(s) for s in self.request("GET", "/stacks", query=query or None)[2]["stacks"]]

    def show_stack(self, name_or_id: str, resolve_outputs: bool = True) -> dict:
        query = None if resolve_outputs else {"resolve_outputs": "false"}
        body = self.request("GET", self._stack_path(name_or_id, True), query=query)[2]
        return _plain(body["stack"])

    def outputs(self, name_or_id: str) -> list[dict]:
        return self.show_stack(name_or_id).get("outputs") or []

    def resources(self, name_or_id: str, nested_depth: int = 0, filters: dict | None = None) -> list[dict]:
        query = {**(filters or {}), **({"nested_depth": nested_depth} if nested_depth else {})}
        rows = self.request("GET", self._stack_path(name_or_id) + "/resources", query=query or None)[2]["resources"]
        return [_plain(r) for r in rows]

    def failures(self, name_or_id: str) -> list[dict]:
        rows = self.resources(name_or_id, nested_depth=10)
        failed = [r for r in rows if str(r.get("resource_status", "")).endswith("FAILED")]
        parents = {r.get("parent_resource") for r in failed}
        return [r for r in failed if r["resource_name"] not in parents]

    def resource(self, name_or_id: str, resource_name: str, with_attr: Iterable[str] = ()) -> dict:
        path = self._resource_path(name_or_id, resource_name)
        return _plain(self._get(path, **({"with_attr": list(with_attr)} if with_attr else {}))["resource"])

    def events(self, name_or_id: str, resource_name: str | None = None, nested_depth: int = 0,
               **paging: Any) -> list[dict]:
        path = self._resource_path(name_or_id, resource_name, True) if resource_name else self._stack_path(
            name_or_id, True)
        query = {k: v for k, v in paging.items() if v is not None}
        if nested_depth:
            query["nested_depth"] = nested_depth
        try:
            rows = self.request("GET", path + "/events", query=query or None)[2]["events"]
        except NotFound:
            if resource_name:
                return []
            raise
        return [_plain(e) for e in rows]

    def template(self, name_or_id: str) -> dict:
        return self._get(self._stack_path(name_or_id) + "/template")

    def environment(self, name_or_id: str) -> dict:
        return self._get(self._stack_path(name_or_id) + "/environment")

    # -- actions: ``begin`` asks the server to start one (``_start_<verb>`` gives the stack's id) -----
    def begin(self, verb: str, name: str, *args: Any, **kwargs: Any) -> Started:
        """``<verb>_stack(name, ...)`` under way in the server: the handle once it shows there."""
        if verb in ("suspend", "resume", "check"):
            return Started(self._look, stack_running, self._start_action(name, verb))
        return Started(self._look, stack_running, getattr(self, f"_start_{verb}")(name, *args, **kwargs))

    def _look(self, stack_id: str) -> dict:
        """The stack as the server has it now; its outputs too once its action has ended."""
        try:
            info = _plain(self._get(f"/stacks/{stack_id}", resolve_outputs="false")["stack"])
        except NotFound:  # deleted: gone from the server's list
            return {"id": stack_id, "stack_status": "DELETE_COMPLETE", "stack_status_reason": ""}
        if stack_running(info) or str(info.get("stack_status")) == "DELETE_COMPLETE":
            return info
        return _plain(self._get(f"/stacks/{stack_id}")["stack"])

    def create_stack(self, name: str, template: Any, environment: Any = None, parameters: dict | None = None,
                     timeout_mins: int | None = None, disable_rollback: bool = True,
                     tags: Iterable[str] = (), dry_run: bool = False) -> dict:
        if not dry_run:
            return self.begin("create", name, template, environment, parameters, timeout_mins, disable_rollback,
                              tags).wait()
        body = _create_body(name, template, environment, parameters, timeout_mins, disable_rollback, tags)
        stack = self.request("POST", "/stacks/preview", body)[2]["stack"]
        return {"stack_name": name, "resources": [
            {"resource_name": r["resource_name"], "resource_type": r["resource_type"], "action": "CREATE"}
            for r in stack.get("resources", [])]}

    def _start_create(self, name: str, *args: Any, **kwargs: Any) -> str:
        return self.request("POST", "/stacks", _create_body(name, *args, **kwargs))[2]["stack"]["id"]

    def update_stack(self, name_or_id: str, template: Any = None, environment: Any = None,
                     parameters: dict | None = None, existing: bool = False,
                     disable_rollback: bool | None = None, timeout_mins: int | None = None,
                     dry_run: bool = False, show_nested: bool = False,
                     clear_parameters: Iterable[str] = (), tags: Iterable[str] | None = None,
                     converge: bool = False) -> dict:
        given = (template, environment, parameters, existing, disable_rollback, timeout_mins, clear_parameters, tags,
                 converge)
        if not dry_run:
            return self.begin("update", name_or_id, *given).wait()
        method, path, body = self._update_request(name_or_id, *given)
        query = {"show_nested": "true"} if show_nested else None
        changes = self.request(method, path + "/preview", body, query=query)[2]["resource_changes"]
        return {kind: [{"resource_name": e["resource_name"], "resource_type": e.get("resource_type"),
                        "reason": e.get("resource_status_reason", "")} for e in entries]
                for kind, entries in changes.items()}

    def _start_update(self, name_or_id: str, *args: Any, **kwargs: Any) -> str:
        method, path, body = self._update_request(name_or_id, *args, **kwargs)
        return self._act(method, path, body)

    def _act(self, method: str, path: str, body: Any = None, under: str = "") -> str:
        """``method`` on stack ``path`` (or below it, ``under``): the stack's id, to follow it by."""
        self.request(method, path + under, body)
        return path.rsplit("/", 1)[1]

    def _update_request(self, name_or_id: str, template: Any = None, environment: Any = None,
                        parameters: dict | None = None, existing: bool = False, disable_rollback: bool | None = None,
                        timeout_mins: int | None = None, clear_parameters: Iterable[str] = (),
                        tags: Iterable[str] | None = None, converge: bool = False) -> tuple[str, str, dict]:
        """(method, stack path, body) of an update: PATCH keeps what is not given (``existing``), PUT not."""
        if template is None and not existing:
            raise ValidationFailed.single((), "missing-template",
                                          "give a new template, or --existing to keep the current one")
        body = _instantiation(template, environment, parameters)
        optional = {"converge": converge or None, "clear_parameters": list(clear_parameters) or None,
                    "tags": None if tags is None else ",".join(tags), "disable_rollback": disable_rollback,
                    "timeout_mins": timeout_mins or None}
        body.update({key: value for key, value in optional.items() if value is not None})
        return "PATCH" if existing else "PUT", self._stack_path(name_or_id), body

    def delete_stack(self, name_or_id: str) -> dict:
        return self.begin("delete", name_or_id).wait()

    def _start_delete(self, name_or_id: str) -> str:
        return self._act("DELETE", self._stack_path(name_or_id))

    def _start_action(self, name_or_id: str, action: str) -> str:
        return self._act("POST", self._stack_path(name_or_id), {action: None}, "/actions")

    def suspend_stack(self, name_or_id: str) -> dict:
        return self.begin("suspend", name_or_id).wait()

    def resume_stack(self, name_or_id: str) -> dict:
        return self.begin("resume", name_or_id).wait()

    def check_stack(self, name_or_id: str) -> dict:
        return self.begin("check", name_or_id).wait()

    def cancel_stack(self, name_or_id: str, rollback: bool = True) -> None:
        path = self._stack_path(name_or_id)
        status = self._get(path)["stack"]["stack_status"]
        action = "cancel_update" if status.startswith("UPDATE") and rollback else "cancel_without_rollback"
        try:
            self.request("POST", path + "/actions", {action: None})
        except StokerError as exc:
            raise Conflict(str(exc)) from None

    def mark_unhealthy(self, name_or_id: str, resource_name: str, unhealthy: bool = True,
                       reason: str = "") -> None:
        self.request("PATCH", self._resource_path(name_or_id, resource_name),
                     {"mark_unhealthy": unhealthy, "resource_status_reason": reason})

    def signal(self, name_or_id: str, resource_name: str, details: Any = None) -> None:
        self.request("POST", self._resource_path(name_or_id, resource_name) + "/signal", details)

    def clear_hook(self, name_or_id: str, resource_name: str, hook: str | None = None) -> str:
        self.signal(name_or_id, resource_name, {"unset_hook": hook})
        return hook or "(any)"

    def export_stack(self, name_or_id: str) -> dict:
        return self._get(self._stack_path(name_or_id) + "/export")

    def abandon_stack(self, name_or_id: str) -> dict:
        return self.request("DELETE", self._stack_path(name_or_id) + "/abandon")[2]

    def adopt_stack(self, name: str, data: Any, environment: Any = None, parameters: dict | None = None,
                    timeout_mins: int | None = None) -> dict:
        return self.begin("adopt", name, data, environment, parameters, timeout_mins).wait()

    def _start_adopt(self, name: str, data: Any, environment: Any = None, parameters: dict | None = None,
                     timeout_mins: int | None = None) -> str:
        body = {**_instantiation(None, environment, parameters), "stack_name": name, "adopt_stack_data": data}
        if timeout_mins:
            body["timeout_mins"] = timeout_mins
        return self.request("POST", "/stacks", body)[2]["stack"]["id"]

    @property
    def snapshots(self) -> "RemoteSnapshots":
        return RemoteSnapshots(self)

    def close(self) -> None:
        pass


class RemoteSnapshots:
    """``Engine.snapshots`` over the API; each action polled to its end, as the engine's are."""

    def __init__(self, remote: RemoteEngine):
        self.remote = remote

    def _path(self, name_or_id: str, snapshot_id: str | None = None) -> str:
        path = self.remote._stack_path(name_or_id) + "/snapshots"
        return path if snapshot_id is None else f"{path}/{quote(snapshot_id, safe='')}"

    def create(self, name_or_id: str, name: str | None = None) -> dict:
        path = self._path(name_or_id)
        snapshot_id = self.remote.request("POST", path, {"name": name})[2]["id"]
        return Started(lambda taken: self.remote._get(f"{path}/{taken}")["snapshot"],
                       lambda snapshot: snapshot["status"] == "IN_PROGRESS", snapshot_id).wait()

    def list(self, name_or_id: str) -> list[dict]:
        return self.remote._get(self._path(name_or_id))["snapshots"]

    def show(self, name_or_id: str, snapshot_id: str) -> dict:
        return self.remote._get(self._path(name_or_id, snapshot_id))["snapshot"]

    def restore(self, name_or_id: str, snapshot_id: str) -> dict:
        path = self.remote._stack_path(name_or_id)
        stack_id = self.remote._act("POST", path, {}, f"/snapshots/{quote(snapshot_id, safe='')}/restore")
        return Started(self.remote._look, stack_running, stack_id).wait()

    def delete(self, name_or_id: str, snapshot_id: str) -> None:
        self.remote.request("DELETE", self._path(name_or_id, snapshot_id))


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _error(status: int, body: Any) -> StokerError:
    error = body.get("error", {}) if isinstance(body, dict) else {}
    message = error.get("message") or (body if isinstance(body, str) else f"HTTP {status}")
    if isinstance(body, dict) and isinstance(body.get("message"), str):  # the Cloudify API's shape
        message = body["message"]
    if status == 404:
        return NotFound(message)
    if status == 409:
        return Conflict(message)
    if status == 400 and error.get("problems"):
        return ValidationFailed([Problem(tuple(p["path"].split(".")) if p.get("path") else (), p.get("code", "error"),
                                         p.get("message", ""), p.get("file"), p.get("line"), p.get("column"))
                                 for p in error["problems"]])
    if status == 401:
        return StokerError(f"{message} (give a token with --token or STOKER_TOKEN)")
    return StokerError(message)


#: keys the REST API adds that local output does not have
_API_ONLY = ("links", "capabilities", "notification_topics", "template_description", "stack_user_project_id",
             "logical_resource_id")


def _plain(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in _API_ONLY}


def _create_body(name: str, template: Any, environment: Any = None, parameters: dict | None = None,
                 timeout_mins: int | None = None, disable_rollback: bool = True, tags: Iterable[str] = ()) -> dict:
    body = {**_instantiation(template, environment, parameters), "stack_name": name,
            "disable_rollback": disable_rollback}
    if timeout_mins:
        body["timeout_mins"] = timeout_mins
    if tags:
        body["tags"] = ",".join(tags)
    return body


def _instantiation(template: Any, environment: Any, parameters: dict | None) -> dict:
    body: dict[str, Any] = {"parameters": dict(parameters or {})}
    if template is not None:
        if hasattr(template, "data"):
            body["template"] = template.data
            body["files"] = dict(getattr(template, "files", {}) or {})
        elif isinstance(template, dict):
            body["template"] = template
        else:
            from stoker.template.template import Template

            loaded = Template.from_file(template)
            body["template"] = loaded.data
    if environment is not None:
        body["environment"] = environment.as_dict() if hasattr(environment, "as_dict") else environment
    return body


def install_remote(group: click.Group) -> click.Group:
    """Give the root ``stoker`` group ``--url`` and ``--token``: with a URL, every
    ``stoker stack ...`` command goes to that server instead of the local database.
    Installing twice changes nothing."""
    if any(p.name == "url" for p in group.params):
        return group
    group.params.extend([
        click.Option(["--url"], envvar="STOKER_URL", default=None,
                     help="A `stoker api` server's endpoint (http://HOST:8004/v1/PROJECT): "
                          "work there instead of on the local database."),
        click.Option(["--token"], envvar="STOKER_TOKEN", default=None,
                     help="Token for --url (from `stoker token create`)."),
    ])
    original = group.callback

    @functools.wraps(original)
    def callback(*args: Any, url: str | None = None, token: str | None = None, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if url:
            click.get_current_context().obj.remote = RemoteEngine(url, token)
        return result

    group.callback = callback
    return group
