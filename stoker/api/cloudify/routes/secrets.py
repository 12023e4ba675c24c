"""``/secrets``: a tenant's secrets; a hidden value is never shown (masked) to anyone reading it back.

As on Cloudify a secret has a visibility (``private``, ``tenant``, ``global``: read, and ``get_secret``, from every
tenant; the operator's to give), widened by ``set-visibility``; ``/secrets/share/export`` and ``/share/import``
move secrets in ``cfy secrets export|import``'s file (``blueprint/secret_files.py``), values in clear or encrypted
with a passphrase as Cloudify encrypts them.  An export holds a hidden value only where the caller is a manager
(or made the secret); an import writes only tenants where the caller is a manager, all entries or none.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed, projects_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import (bad, global_refused, new_owner, router, run, valid_visibility,
                                        visibility_given, visibility_sent)
from stoker.api.cloudify.users import project_of
from stoker.api.cloudify.viewers import seen, seen_by
from stoker.blueprint import visibility
from stoker.blueprint.secret_files import Importer, NotWritable
from stoker.blueprint.state import tenant_of
from stoker.store.models import Secret

routes = router("secrets")


async def _body(request: Request) -> dict:
    """The request's fields (a value is a string, or any JSON value of a typed secret: ``secret_schemas``)."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send a JSON object: {\"value\": ..., \"is_hidden_value\": ..., \"schema\": ...}")
    return body


def _hidden(body: dict) -> bool | None:
    hidden = body.get("is_hidden_value")
    return None if hidden is None else bool(hidden)


@routes.put("/secrets/{key}")
async def create(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    body = await _body(request)
    shown_to = visibility_given(request, who, body.get("visibility"), "secret")
    return await run(request, who, lambda engine: views.secret(engine.blueprints.secrets.create(
        key, body.get("value"), bool(body.get("update_if_exists")), bool(_hidden(body)), shown_to, who.user,
        body.get("provider_name") or None, body.get("provider_options"), body.get("schema")), who.project))


@routes.patch("/secrets/{key}")
async def update(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    """``cfy secrets update`` (a value, hidden or not, a wider ``visibility``) and ``set-owner`` (``creator``:
    the operator's, to a user Stoker knows)."""
    body = await _body(request)
    shown_to = body.get("visibility")
    if shown_to is not None:
        shown_to = visibility_given(request, who, shown_to, "secret")
    creator = None if body.get("creator") is None else new_owner(request, who, body["creator"])

    def work(engine):
        secrets = engine.blueprints.secrets
        _seen(request, who, secrets, key)
        if shown_to is not None:
            secrets.set_visibility(key, shown_to, visibility.VISIBILITIES)
        if creator is not None:
            secrets.set_owner(key, creator)
        return views.secret(secrets.update(key, body.get("value"), _hidden(body),
                                           body.get("provider_name") or None, body.get("provider_options")),
                            who.project)

    return await run(request, who, work)


@routes.patch("/secrets/{key}/set-visibility")
async def set_visibility(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    """``cfy secrets set-visibility KEY -l tenant|global`` (and ``set-global``): only widens."""
    wanted = await visibility_sent(request, who, "secret")

    def work(engine):
        _seen(request, who, engine.blueprints.secrets, key)
        return views.secret(engine.blueprints.secrets.set_visibility(key, wanted), who.project)

    return await run(request, who, work)


def _seen(request: Request, who: Caller, secrets, key: str) -> dict:
    """The secret as ``who`` sees it (another's private one: 404)."""
    return seen(request, who, views.secret(secrets.get(key), who.project), "Secret", key)


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The secrets a list (or a search) covers: the tenants asked for (each tenant's and the global ones, each
    once, those ``who`` sees)."""
    return list(filter(seen_by(request, who), {
        (s["tenant_name"], s["key"]): views.secret(s, project)
        for project, acting in engines_listed(request, who, engine, Secret.__table__)
        for s in acting.blueprints.secrets.list()}.values()))


@routes.get("/secrets")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine), searched="key"))


@routes.get("/secrets/share/export")
async def export(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy secrets export [-p PASSPHRASE] [-l VISIBILITY] [--filter-by TEXT] [--all-tenants]``: the file's
    entries.  A hidden value only where ``who`` manages the tenant or made the secret, as Cloudify's."""
    query = request.query_params
    shown_to = valid_visibility(query["visibility"]) if query.get("visibility") else None
    cloudify = request.app.state.cloudify
    sees = seen_by(request, who)

    def permitted(row: dict) -> bool:
        """Whether ``who`` sees the secret, and its value when hidden."""
        shown = {"tenant_name": tenant_of(row["project_id"]), "visibility": row["visibility"],
                 "created_by": row["created_by"]}
        return sees(shown) and (not row["hidden"] or row["created_by"] == who.user
                                or cloudify.role_in(who, shown["tenant_name"]) == "manager")

    def work(engine):
        return engine.blueprints.secrets.export(projects_listed(request, who, Secret.__table__),
                                                query.get("_passphrase") or None, shown_to,
                                                query.get("_search") or None, permitted)

    return await run(request, who, work)


@routes.post("/secrets/share/import")
async def import_(request: Request, who: Caller = Depends(requiring("user"))) -> Response:
    """``cfy secrets import -i FILE [-p PASSPHRASE] [-m TENANT_MAP] [--override-collisions]``: every entry is
    checked first and none is stored when one is wrong (400 naming each); the keys a tenant held already are
    answered (replaced with ``override_collisions``)."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send {\"secrets_list\": [...], \"override_collisions\": false, \"passphrase\": ..., "
                  "\"tenant_map\": {...}}")
    for name in ("secrets_list", "override_collisions"):
        if name not in body:
            raise bad(f"Missing {name} in json request body")
    if not isinstance(body["override_collisions"], bool):
        raise bad(f"override_collisions parameter is expected to be of type bool but is of type "
                  f"{type(body['override_collisions']).__name__}")
    cloudify = request.app.state.cloudify
    tenant_map = body.get("tenant_map")
    if isinstance(tenant_map, dict):
        missing = sorted(str(t) for t in set(tenant_map.values()) if not _known(request, who, t))
        if missing:
            raise bad(f"The following destination tenants do not exist on the Manager: {missing}")

    def project(tenant: str) -> str:
        if not _known(request, who, tenant):
            raise NotWritable(f"The tenant `{tenant}` was not found")
        if cloudify.role_in(who, tenant) != "manager":
            raise NotWritable(f"User `{who.user}` is not permitted to perform the action secret_create in the tenant "
                              f"`{tenant}` (this needs the role manager)")
        return project_of(tenant)

    def owner_refused(creator: str) -> str | None:
        if not cloudify.operator(who):
            return f"User `{who.user}` is not permitted to perform the action set_owner"
        return None if cloudify.users.exists(creator) else f"User {creator} does not exist."

    importer = Importer(project, global_refused(request, who, "secret"), owner_refused, who.user)
    return await run(request, who, lambda engine: engine.blueprints.secrets.import_(
        importer, body["secrets_list"], body.get("passphrase"), tenant_map, body["override_collisions"]))


def _known(request: Request, who: Caller, tenant: object) -> bool:
    """Whether Stoker knows ``tenant``: the caller's, or one a user belongs to."""
    return isinstance(tenant, str) and (tenant == who.tenant or request.app.state.cloudify.users.has_tenant(tenant))


@routes.get("/secrets/{key}")
async def get(key: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: _seen(request, who, engine.blueprints.secrets, key))


@routes.delete("/secrets/{key}")
async def delete(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    def work(engine):
        _seen(request, who, engine.blueprints.secrets, key)
        engine.blueprints.secrets.delete(key)

    return await run(request, who, work)
