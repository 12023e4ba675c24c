"""``/plugins``: Cloudify's plugin routes on Stoker's plugin catalog (the one ``stoker plugin`` and
``plugin:NAME`` imports use), so ``cfy plugins upload/list/get/download/download_yaml/delete/set-global/
set-visibility`` act on what blueprints import.

The catalog is the server's database's (unpacked in ``$STOKER_HOME/plugins``, so workers sharing the
database run the plugins too).  As on Cloudify, a plugin belongs to the tenant it was uploaded to and has
a visibility: ``private`` (its uploader and the tenant's managers), ``tenant`` (the default) or
``global`` (every tenant); a tenant lists, imports and runs its own and the global ones.  A manager
uploads, deletes (in the plugin's own tenant only) and widens a visibility; only the operator
(``Identities.operator``: a manager of ``default_tenant``) makes one global, or hands one to another
owner (``cfy plugins set-owner``), a user Stoker knows.  A plugin's ``installation_state`` is its virtualenv
on this server (``plugin_envs.install_state``: made at its first task, or now by ``cfy plugins install``);
one a blueprint uses is deleted only with ``force`` (else 405 ``plugin_in_use``, as on Cloudify).
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
import zipfile
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path
from typing import Iterator

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body, read_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import projects_listed
from stoker.api.cloudify.identity import Caller, caller, forbidden, requiring
from stoker.api.cloudify.viewers import viewer
from stoker.api.cloudify.routing import bad, router, run
from stoker.api.request_context import reply
from stoker.api.error_bodies import ApiError
from stoker.blueprint import archives
from stoker.blueprint.import_resolver import PLUGIN_VIEWER
from stoker.blueprint.plugin_catalog import Plugin, PluginCatalog, PluginInUse
from stoker.blueprint.state import tenant_of
from stoker.limits import limit
from stoker.store.plugin_packages import PLUGIN_PACKAGES, VISIBILITIES, Owner
from stoker.workflows.plugin_envs import install_soon, install_state

routes = router("plugins")
_PACKAGES = (".wgn", ".whl", ".tar.gz", ".tgz")


def _installation_state(request: Request, plugin: Plugin) -> list[dict]:
    """Cloudify's per manager and agent states: this server (named as ``/managers`` names it) only."""
    state = install_state(plugin)
    if state is None:
        return []
    return [{"manager": request.url.hostname or "127.0.0.1", "agent": None, "state": state[0], "error": state[1]}]


def _view(request: Request, plugin: Plugin, project: str) -> dict:
    owner = plugin.owner
    uploaded = owner.uploaded_at.replace(tzinfo=timezone.utc) if owner and owner.uploaded_at else \
        datetime.fromtimestamp(plugin.folder.stat().st_mtime, timezone.utc)
    visibility = owner.visibility if owner else "global"
    package = plugin.as_dict()["package"]
    return {**views.common(owner.project_id if owner else project), "visibility": visibility,
            "resource_availability": visibility, "private_resource": visibility == "private",
            "created_by": (owner.created_by if owner else None) or "admin",
            "id": plugin.id, "package_name": plugin.name, "package_version": plugin.version,
            "archive_name": package, "package_source": None, "supported_platform": "any", "distribution": None,
            "distribution_version": None, "distribution_release": None, "wheels": [], "excluded_wheels": [],
            "supported_py_versions": [], "uploaded_at": uploaded.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "file_server_path": "", "yaml_url_path": f"plugin:{plugin.name}?version={plugin.version}",
            "title": plugin.name, "installation_state": _installation_state(request, plugin),
            "blueprint_labels": {}, "labels": {}, "resource_tags": {},
            "yaml_files": [p.name for p in plugin.yaml_files]}


def plugin_catalog(request: Request, who: Caller, create: bool = False, project: str | None = None) -> PluginCatalog:
    return PluginCatalog.at_home(create=create, store=request.app.state.stoker.engine.store,
                                 viewer=viewer(request, who, project))


@contextmanager
def plugins_seen_by(request: Request, who: Caller) -> Iterator[None]:
    """While a route parses a blueprint: its ``plugin:NAME`` imports read the plugins ``who`` sees."""
    token = PLUGIN_VIEWER.set(viewer(request, who))
    try:
        yield
    finally:
        PLUGIN_VIEWER.reset(token)


def _found(catalog: PluginCatalog, wanted: str) -> Plugin:
    found = next((p for p in catalog.list() if p.id == wanted), None)
    if found is None:
        raise ApiError(404, f"Requested `Plugin` with ID `{wanted}` was not found", "not_found_error")
    return found


def _own(who: Caller, plugin: Plugin, verb: str) -> None:
    """Changing a plugin is its tenant's (a global one is changed from the tenant it was uploaded to)."""
    if plugin.owner is not None and plugin.owner.project_id != who.project:
        raise forbidden(f"plugin {plugin.name} {plugin.version} belongs to tenant "
                        f"{tenant_of(plugin.owner.project_id)!r}: {verb} it from there")


def _visibility(request: Request, who: Caller, visibility: object) -> str:
    if visibility not in VISIBILITIES:
        raise bad(f"visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    if visibility == "global" and not request.app.state.cloudify.operator(who):
        raise forbidden(f"only the operator (a manager of tenant default_tenant) makes a plugin global; "
                        f"{who.user!r} in {who.tenant!r} may upload it with visibility tenant or private")
    return str(visibility)


@routes.get("/plugins")
def plugin_list(request: Request, who: Caller = Depends(caller)) -> Response:
    """The tenant's and the global plugins (``_all_tenants``: of each tenant listed, a global one once)."""
    listed: dict[str, dict] = {}
    for project in projects_listed(request, who, PLUGIN_PACKAGES):
        for plugin in plugin_catalog(request, who, project=project).list():
            listed.setdefault(plugin.id, _view(request, plugin, project))
    return reply(views.page(request, listed.values(), searched="package_name"))


@routes.get("/plugins/{wanted}")
def plugin_get(wanted: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return reply(_view(request, _found(plugin_catalog(request, who), wanted), who.project))


@routes.get("/plugins/{wanted}/archive")
def plugin_archive(wanted: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """``cfy plugins download``: the wagon (or wheel) as uploaded; ``full_archive``: a zip of it and its YAMLs."""
    full = request.query_params.get("full_archive", "").lower() == "true"
    return _file(*_found(plugin_catalog(request, who), wanted).download("full" if full else "package"))


@routes.get("/plugins/{wanted}/yaml")
def plugin_yaml(wanted: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """``cfy plugins download_yaml`` (and the client's ``get_yaml``): the YAML a blueprint of ``dsl_version``
    imports, chosen as ``plugin:NAME`` chooses it."""
    plugin = _found(plugin_catalog(request, who), wanted)
    return _file(*plugin.download("yaml", request.query_params.get("dsl_version")))


def _file(data: bytes, name: str) -> Response:
    return Response(data, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@routes.delete("/plugins/{wanted}")
async def plugin_delete(wanted: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    """Refused (405 ``plugin_in_use``) while a blueprint uses it (its tenant's; a global one's: any), unless
    ``force`` (``cfy plugins delete --force``): ``PluginCatalog.delete``'s rule."""
    body = await json_body(request) if await request.body() else {}
    force = isinstance(body, dict) and body.get("force") in (True, "true", "True")

    def work(engine):
        catalog = plugin_catalog(request, who)
        found = _found(catalog, wanted)
        _own(who, found, "delete")
        try:
            catalog.delete(found.name, found.version, force=force)
        except PluginInUse as exc:
            raise ApiError(405, str(exc), "plugin_in_use") from None
        return Response(status_code=204)

    return await run(request, who, work)


@routes.patch("/plugins/{wanted}/set-visibility")
async def plugin_set_visibility(wanted: str, request: Request,
                                who: Caller = Depends(requiring("manager"))) -> Response:
    """``cfy plugins set-global`` / ``set-visibility``: a visibility only widens."""
    body = await json_body(request)
    visibility = _visibility(request, who, body.get("visibility") if isinstance(body, dict) else None)

    def work(engine):
        catalog = plugin_catalog(request, who)
        found = _found(catalog, wanted)
        _own(who, found, "change")
        catalog.set_visibility(found, visibility)
        return reply(_view(request, _found(catalog, wanted), who.project))

    return await run(request, who, work)


@routes.post("/plugins/{wanted}")
async def plugin_install(wanted: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    """``cfy plugins install ID``: make the plugin's virtualenv now rather than at its first task; its
    ``installation_state`` on this server (the one manager ``/managers`` names) shows ``installing``, then
    ``installed`` or ``error`` (with why), as cfy waits for it.  Stoker has no agents: naming one is a 404."""
    body = await json_body(request)
    if not isinstance(body, dict) or body.get("action") != "install":
        raise bad("the action on a plugin is install: send {\"action\": \"install\", \"managers\": [HOSTNAME]}")
    managers, agents = body.get("managers") or [], body.get("agents") or []
    if not isinstance(managers, list) or not isinstance(agents, list):
        raise bad("managers and agents are lists of names")
    host = request.url.hostname or "127.0.0.1"
    unknown = [("Agent", a) for a in agents] + [("Manager", m) for m in managers if m != host]
    if unknown:
        raise ApiError(404, f"Requested `{unknown[0][0]}` with ID `{unknown[0][1]}` was not found (Stoker's one "
                            f"manager is {host}, and it runs plugins itself, with no agents)", "not_found_error")

    def work(engine):
        plugin = _found(plugin_catalog(request, who), wanted)
        state = install_state(plugin)
        if state is None or state[0] == "error":
            install_soon(plugin)
        return reply(_view(request, plugin, who.project))

    return await run(request, who, work)


@routes.patch("/plugins/{wanted}")
async def plugin_set_owner(wanted: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """``cfy plugins set-owner ID -s USER``: only the operator (Cloudify's ``set_owner`` is the sys_admin's)
    gives a plugin to another owner, a user Stoker knows (else 400, as Cloudify's ``User X does not exist.``)."""
    body = await json_body(request)
    creator = body.get("creator") if isinstance(body, dict) and set(body) == {"creator"} else None
    if not isinstance(creator, str) or not creator:
        raise bad("only a plugin's owner is changed here: send {\"creator\": USER} (cfy plugins set-owner ID -s USER)")
    cloudify = request.app.state.cloudify
    if not cloudify.operator(who):
        raise forbidden(f"only the operator (a manager of tenant default_tenant) changes a plugin's owner; "
                        f"{who.user!r} in {who.tenant!r} may not")

    def work(engine):
        catalog = plugin_catalog(request, who)
        found = _found(catalog, wanted)
        if not cloudify.users.exists(creator):
            raise bad(f"User {creator} does not exist.")
        catalog.set_owner(found, creator)
        return reply(_view(request, _found(catalog, wanted), who.project))

    return await run(request, who, work)


def _unpacked(data: bytes, into: Path) -> tuple[Path, list[Path]]:
    """(package, plugin YAMLs) from the zip ``cfy plugins upload`` sends: the wagon (or wheel) and its YAMLs."""
    if not zipfile.is_zipfile(BytesIO(data)):
        raise bad("a plugin upload is a zip of the wagon and its plugin YAML, as cfy plugins upload "
                  "PLUGIN.wgn -y plugin.yaml sends it")
    archives.unpack(data, into)
    files = sorted(p for p in into.rglob("*") if p.is_file())
    packages = [p for p in files if p.name.endswith(_PACKAGES)]
    yamls = [p for p in files if p.suffix in (".yaml", ".yml")]
    if len(packages) != 1 or not yamls:
        raise bad(f"the plugin upload holds {len(packages)} packages (.wgn/.whl) and {len(yamls)} "
                  "plugin YAMLs: it needs one package and its YAML (cfy plugins upload PLUGIN.wgn -y "
                  "plugin.yaml)")
    return packages[0], yamls


@routes.post("/plugins", status_code=201)
async def plugin_upload(request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    if request.query_params.get("plugin_archive_url"):
        raise bad("uploading a plugin from a URL is not supported by Stoker: download the wagon and "
                  "upload the file (cfy plugins upload PATH -y plugin.yaml)")
    visibility = _visibility(request, who, request.query_params.get("visibility") or "tenant")
    data = await read_body(request, limit("max_blueprint_size"), "max_blueprint_size", "plugin archive")

    def work(engine):
        with tempfile.TemporaryDirectory(prefix="stoker-plugin-") as folder:
            package, yamls = _unpacked(data, Path(folder))
            catalog = plugin_catalog(request, who, create=True)
            uploaded = catalog.upload(package, yamls, Owner(who.project, visibility, who.user), replace=False)
        return reply(_view(request, uploaded, who.project), 201)

    return await run(request, who, work)
