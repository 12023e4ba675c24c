"""The per-request context: who calls (project), the engine acting for them, link building."""

from __future__ import annotations

import functools
import hmac
import json
from dataclasses import dataclass
from typing import Any, Callable

from fastapi import Header, Request
from fastapi.responses import JSONResponse, Response

from stoker.api.errors import ApiError
from stoker.api.views import Links
from stoker.errors import NotFound
from stoker.resources.builtin.wait_condition import HANDLE_TOKEN_KEY
from stoker.store.locks import new_engine_id


@dataclass
class Ctx:
    request: Request
    tenant: str
    project: str
    engine: Any
    links: Links
    state: Any


def context(request: Request, tenant_id: str,
            x_auth_token: str | None = Header(default=None, include_in_schema=False)) -> Ctx:
    state = request.app.state.stoker
    about_stack = "stack_name" in request.path_params
    project = state.auth.project(tenant_id, x_auth_token, about_stack=about_stack)
    return _ctx(request, tenant_id, project)


def signal_context(request: Request, tenant_id: str, stack_id: str, resource_name: str,
                   x_auth_token: str | None = Header(default=None, include_in_schema=False)) -> Ctx:
    """``context`` for signalling a resource; a wait condition handle's own token (its
    ``curl_cli``) also admits a signal to that handle, as Heat's token handles do: the
    script that signals has no token of the project."""
    try:
        return context(request, tenant_id, x_auth_token)
    except ApiError:
        if not x_auth_token or not _handle_token(request, tenant_id, stack_id, resource_name, x_auth_token):
            raise
    return _ctx(request, tenant_id, tenant_id)


def _handle_token(request: Request, project: str, stack_id: str, resource_name: str, token: str) -> bool:
    engine = request.app.state.stoker.engine.for_project(project)
    try:
        record = engine.get_record(stack_id)
    except NotFound:
        return False
    rows = [r for r in engine.store.get_resources(record.id) if r.name == resource_name and r.replaced_by is None]
    stored = (rows[-1].data or {}).get(HANDLE_TOKEN_KEY) if rows else None
    return isinstance(stored, str) and hmac.compare_digest(stored.encode(), token.encode())


def _ctx(request: Request, tenant_id: str, project: str) -> Ctx:
    state = request.app.state.stoker
    engine = state.engine.for_project(project)
    # an engine id per request: two requests never share a stack lock by accident
    engine.engine_id = new_engine_id()
    engine.api_url = str(request.base_url).rstrip("/")  # where wait condition handles are signalled
    return Ctx(request, tenant_id, project, engine, Links(request, tenant_id), state)


def in_project_pool(route: Callable[..., Response]) -> Callable[..., Any]:
    """Run a heavy route (parsing, validating, starting actions) in its project's bounded pool.

    The request then holds no server thread while it waits, and a project
    sending many heavy requests queues behind itself, not in front of others.
    FastAPI reads the parameters of ``route`` (``functools.wraps``).
    """
    @functools.wraps(route)
    async def offloaded(*args: Any, ctx: Ctx, **kwargs: Any) -> Response:
        return await ctx.state.runner.call(ctx.project, lambda: route(*args, ctx=ctx, **kwargs))

    return offloaded


class _Encoder(json.JSONEncoder):
    def default(self, o: Any) -> Any:
        if hasattr(o, "isoformat"):
            return o.isoformat()
        if isinstance(o, (set, frozenset, tuple)):
            return list(o)
        return str(o)


def reply(data: Any, status: int = 200, headers: dict | None = None) -> Response:
    """JSON straight from plain data (no per-field validation on the way out)."""
    body = json.dumps(data, cls=_Encoder, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def empty(status: int) -> Response:
    return Response(status_code=status)


__all__ = ["Ctx", "context", "in_project_pool", "reply", "empty", "JSONResponse"]
