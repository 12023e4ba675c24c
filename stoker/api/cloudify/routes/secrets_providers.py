"""``/secrets-providers`` (``cfy secrets providers create|list|get|update|delete|test``): where secrets created
with ``--provider`` read their values (``blueprint/secret_providers.py``).

A provider is its tenant's (``global`` ones serve every tenant).  Only the operator makes, changes, tests and
deletes them: a provider makes the server connect where its parameters say, which on a server many projects
use is the operator's choice, not a project's.  Everyone reads them, and only the operator sees their connection
parameters (Cloudify's ``secrets_provider_credentials``); users name them in their secrets.  ``PUT`` with ``test`` checks one, stored or described, and stores nothing.
"""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routes.tenants import operator
from stoker.api.cloudify.routing import map_body, router, run
from stoker.blueprint.providers import Providers
from stoker.blueprint.secret_providers import parameters_of

routes = router("secrets providers")
#: what a provider's body holds
PROVIDER = "send {\"name\": ..., \"type\": \"vault\"|\"cloudify\"|\"local\", \"connection_parameters\": {...}, " \
           "\"visibility\": ...}"


def _providers(engine, who: Caller) -> Providers:
    return Providers(engine.store, who.project)


def _view(request: Request, who: Caller, row: dict) -> dict:
    shown = request.app.state.cloudify.operator(who)
    return {**views.owned(row, who.project), "id": row["name"], "name": row["name"], "type": row["type"],
            "connection_parameters": parameters_of(row) if shown else None,
            "created_at": row["created_at"], "updated_at": row["updated_at"]}


@routes.put("/secrets-providers")
async def create(request: Request, who: Caller = Depends(operator)) -> Response:
    body = await map_body(request, PROVIDER)
    if body.get("test"):
        return await run(request, who, lambda engine: _providers(engine, who).check(
            body.get("name"), body.get("type"), body.get("connection_parameters")))
    return await run(request, who, lambda engine: _view(request, who, _providers(engine, who).create(
        body.get("name"), body.get("type"), body.get("connection_parameters"), body.get("visibility"), who.user)))


@routes.get("/secrets-providers")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, [
        _view(request, who, row) for row in _providers(engine, who).list()], searched="name"))


@routes.get("/secrets-providers/{name}")
async def get(name: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: _view(request, who, _providers(engine, who).get(name)))


@routes.patch("/secrets-providers/{name}")
async def update(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    body = await map_body(request, PROVIDER)
    return await run(request, who, lambda engine: _view(request, who, _providers(engine, who).update(
        name, body.get("type"), body.get("connection_parameters"), body.get("visibility"))))


@routes.delete("/secrets-providers/{name}")
async def delete(name: str, request: Request, who: Caller = Depends(operator)) -> Response:
    return await run(request, who, lambda engine: _providers(engine, who).delete(name))
