"""``/blueprints``: upload an archive (as ``cfy blueprints upload`` sends it), list (by saved filter too), get,
download, validate, delete, set or remove the icon (and serve it)."""

from __future__ import annotations

import email.parser
import email.policy
import json
from typing import Any
from urllib.parse import unquote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from stoker.api.body import read_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routes.plugins import plugins_seen_by
from stoker.api.cloudify.viewers import seen, seen_by
from stoker.api.cloudify.routing import (CloudifyRoute, bad, labels_in, map_body, new_owner, router, run,
                                        visibility_given, visibility_sent)
from stoker.errors import NotFound
from stoker.limits import limit
from stoker.store.models import Blueprint

routes = router("blueprints")
#: the blueprints' files a manager's file server serves (``/resources/blueprints/TENANT/ID/...``): their icons
resources = APIRouter(prefix="/resources", route_class=CloudifyRoute, tags=["cloudify: blueprints"])
#: the limit on an icon's bytes
ICON_LIMIT = "max_blueprint_icon_size"


async def _upload(request: Request) -> tuple[bytes, dict]:
    """(archive bytes, parameters) from a multipart form (``params`` + ``blueprint_archive``) or a raw body."""
    body = await read_body(request, limit("max_blueprint_size"), "max_blueprint_size", "blueprint archive")
    params: dict[str, Any] = dict(request.query_params)
    archive = body
    kind = request.headers.get("content-type", "")
    if kind.startswith("multipart/form-data"):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + kind.encode("latin-1") + b"\r\n\r\n" + body)
        archive = b""
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if name == "params":
                try:
                    params.update(json.loads(data))
                except (ValueError, TypeError):
                    raise bad("the form field params is not a JSON object") from None
            elif name == "blueprint_archive":
                archive = data
    if params.get("blueprint_archive_url"):
        raise bad("uploading a blueprint from a URL is not supported by Stoker: download the archive and "
                   "upload the file (cfy blueprints upload PATH)")
    if not archive:
        raise bad("the request has no blueprint archive (a tar or zip file in blueprint_archive)")
    return archive, params


def _file_name(params: dict) -> str:
    name = params.get("application_file_name") or "blueprint.yaml"
    if not isinstance(name, str):
        raise bad("application_file_name must be a file name")
    return unquote(name)


def _view(service: Any, blueprint_id: str, project: str) -> dict:
    return views.blueprint(service.get(blueprint_id), project, service.plan(blueprint_id))


def seen_blueprint(request: Request, who: Caller, engine: Any, blueprint_id: str) -> dict:
    """The blueprint as ``who`` sees it (another's private one: 404)."""
    return seen(request, who, _view(engine.blueprints, blueprint_id, who.project), "Blueprint", blueprint_id)


@routes.put("/blueprints/{blueprint_id}")
async def upload(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    archive, params = await _upload(request)
    name = _file_name(params)
    shown_to = visibility_given(request, who, params.get("visibility"), "blueprint")

    def work(engine):
        service = engine.blueprints
        with plugins_seen_by(request, who):
            service.upload_archive(archive, blueprint_id, name, shown_to, who.user)
        return _view(service, blueprint_id, who.project)

    return await run(request, who, work, 201)


@routes.put("/blueprints/{blueprint_id}/validate")
async def validate(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """Parse the archive's blueprint without storing anything: 204, or 400 with every problem."""
    archive, params = await _upload(request)
    name = _file_name(params)

    def work(engine):
        with plugins_seen_by(request, who):
            engine.blueprints.validate_archive(archive, name)  # its plan is not answered

    return await run(request, who, work)


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The blueprints a list (or a summary) covers: the tenants asked for (each tenant's and the global ones, each
    once, those ``who`` sees), the saved filter asked for (``_filter_id``: ``cfy blueprints list --filter-id``)."""
    found = {(b["project_id"], b["id"]): views.blueprint(b, project)
             for project, acting in engines_listed(request, who, engine, Blueprint.__table__)
             for b in acting.blueprints.list()}
    rows = sorted(filter(seen_by(request, who), found.values()), key=lambda b: (b["created_at"], b["id"]))
    return engine.blueprints.filters("blueprints").applied(request.query_params.get("_filter_id"), rows)


@routes.get("/blueprints")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine)))


@routes.get("/blueprints/{blueprint_id}")
async def get(blueprint_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.one(request, seen_blueprint(request, who, engine,
                                                                                     blueprint_id)))


@routes.get("/blueprints/{blueprint_id}/archive")
async def archive(blueprint_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    def work(engine):
        seen_blueprint(request, who, engine, blueprint_id)
        data = engine.blueprints.archive(blueprint_id)
        return Response(data, media_type="application/octet-stream", headers={
            "Content-Disposition": f'attachment; filename="{blueprint_id}.tar.gz"'})

    return await run(request, who, work)


@routes.patch("/blueprints/{blueprint_id}")
async def update(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """Replace the blueprint's labels (``cfy blueprints labels add|delete`` send the whole new list), or give it
    to another owner (``cfy blueprints set-owner ID -s USER``: ``{"creator": USER}``, the operator's)."""
    body = await map_body(request, "send {\"labels\": [...]} or {\"creator\": USER}")
    creator = new_owner(request, who, body["creator"]) if "creator" in body else None
    wanted = None if creator else labels_in(body, "blueprint")

    def work(engine):
        seen_blueprint(request, who, engine, blueprint_id)
        if creator:
            engine.blueprints.set_owner(blueprint_id, creator)
        else:
            engine.blueprints.set_labels(blueprint_id, wanted)
        return _view(engine.blueprints, blueprint_id, who.project)

    return await run(request, who, work)


@routes.patch("/blueprints/{blueprint_id}/icon")
async def set_icon(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy blueprints set-icon ID -i ICON.png`` (the image is the body), or without ``-i`` (no body): removed."""
    body = await read_body(request, limit(ICON_LIMIT), ICON_LIMIT, "blueprint icon")

    def work(engine):
        seen_blueprint(request, who, engine, blueprint_id)
        engine.blueprints.set_icon(blueprint_id, body or None)
        return _view(engine.blueprints, blueprint_id, who.project)

    return await run(request, who, work)


@resources.get("/blueprints/{tenant}/{blueprint_id}/icon.png")
async def icon(tenant: str, blueprint_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    """The icon where a manager's file server keeps it (Cloudify's console reads it there), to a user of that
    tenant."""
    def work(engine):
        if tenant != who.tenant:
            raise NotFound(f"Blueprint {blueprint_id} not found in tenant {tenant}")
        seen_blueprint(request, who, engine, blueprint_id)
        return Response(engine.blueprints.icon(blueprint_id), media_type="image/png")

    return await run(request, who, work)


@routes.patch("/blueprints/{blueprint_id}/set-visibility")
async def set_visibility(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy blueprints set-visibility ID -l tenant|global`` (and ``set-global``): only widens; global is the
    operator's, and makes the blueprint seen, and deployed, from every tenant."""
    wanted = await visibility_sent(request, who, "blueprint")

    def work(engine):
        seen_blueprint(request, who, engine, blueprint_id)
        return views.blueprint(engine.blueprints.set_visibility(blueprint_id, wanted), who.project,
                               engine.blueprints.plan(blueprint_id))

    return await run(request, who, work)


@routes.delete("/blueprints/{blueprint_id}")
async def delete(blueprint_id: str, request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    return await run(request, who, lambda engine: engine.blueprints.delete(blueprint_id))
