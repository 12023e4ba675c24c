"""``/secrets``: a tenant's secrets; a hidden value is never shown (masked) to anyone reading it back."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.body import json_body
from stoker.api.cloudify import views
from stoker.api.cloudify.all_tenants import engines_listed
from stoker.api.cloudify.identity import Caller, caller, requiring
from stoker.api.cloudify.routing import bad, router, run
from stoker.store.models import Secret

routes = router("secrets")


async def _body(request: Request) -> dict:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad("send a JSON object: {\"value\": ..., \"is_hidden_value\": ...}")
    if "value" in body and not isinstance(body["value"], str):
        raise bad("a secret's value is a string")
    return body


def _hidden(body: dict) -> bool | None:
    hidden = body.get("is_hidden_value")
    return None if hidden is None else bool(hidden)


@routes.put("/secrets/{key}")
async def create(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    body = await _body(request)
    if "value" not in body:
        raise bad("a secret needs a value")
    return await run(request, who, lambda engine: views.secret(engine.blueprints.secrets.create(
        key, body["value"], bool(body.get("update_if_exists")), bool(_hidden(body))), who.project))


@routes.patch("/secrets/{key}")
async def update(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    body = await _body(request)
    return await run(request, who, lambda engine: views.secret(engine.blueprints.secrets.update(
        key, body.get("value"), _hidden(body)), who.project))


def listed(request: Request, who: Caller, engine: Any) -> list[dict]:
    """The secrets a list (or a search) covers: the tenants asked for."""
    return [views.secret(s, project) for project, acting in engines_listed(request, who, engine, Secret.__table__)
            for s in acting.blueprints.secrets.list()]


@routes.get("/secrets")
async def list_(request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.page(request, listed(request, who, engine)))


@routes.get("/secrets/{key}")
async def get(key: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return await run(request, who, lambda engine: views.secret(engine.blueprints.secrets.get(key), who.project))


@routes.delete("/secrets/{key}")
async def delete(key: str, request: Request, who: Caller = Depends(requiring("manager"))) -> Response:
    return await run(request, who, lambda engine: engine.blueprints.secrets.delete(key))
