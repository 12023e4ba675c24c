"""The per-request context: who calls (project), the engine acting for them, link building."""

from __future__ import annotations

import functools
import hmac
import json
from dataclasses import dataclass
from typing import Any, Callable

from fastapi import Header, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from stoker.api.error_bodies import ApiError
from stoker.api.views import Links
from stoker.errors import NotFound
from stoker.resources.builtin.scaling_policy import signature_matches
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


async def context(request: Request, tenant_id: str) -> Ctx:
    """The caller and its engine.  Without authentication nothing here waits, so it runs on the
    event loop (a plain-function dependency would cost every request a hop to a thread and back);
    a token is looked up in the database, in a thread.  The token header is read here, not declared
    (it is not in the schema either): FastAPI inspects a declared header's type on every request."""
    x_auth_token = request.headers.get("x-auth-token")
    if request.app.state.stoker.auth_mode == "noauth":
        return _authorised(request, tenant_id, x_auth_token)
    return await run_in_threadpool(_authorised, request, tenant_id, x_auth_token)


def _authorised(request: Request, tenant_id: str, x_auth_token: str | None) -> Ctx:
    state = request.app.state.stoker
    about_stack = "stack_name" in request.path_params
    project = state.auth.project(tenant_id, x_auth_token, about_stack=about_stack)
    return _ctx(request, tenant_id, project)


def signal_context(request: Request, tenant_id: str, stack_id: str, resource_name: str,
                   x_auth_token: str | None = Header(default=None, include_in_schema=False),
                   signature: str | None = Query(default=None, include_in_schema=False)) -> Ctx:
    """``context`` for signalling a resource.  Two credentials of the resource itself also
    admit a signal to it, for the scripts and alarms that have no token of the project: a
    wait condition handle's own token (its ``curl_cli``), as Heat's token handles, and the
    ``signature`` of a scaling policy's ``alarm_url``."""
    try:
        return _authorised(request, tenant_id, x_auth_token)
    except ApiError:
        if not (x_auth_token or signature):
            raise
        found = _stored_row(request, tenant_id, stack_id, resource_name)
        if found is None or not _admits(found, tenant_id, resource_name, x_auth_token, signature):
            raise
    return _ctx(request, tenant_id, tenant_id)


def _stored_row(request: Request, project: str, stack_id: str, resource_name: str) -> tuple[str, dict] | None:
    """(stack id, the resource's stored data), or None when there is no such resource."""
    engine = request.app.state.stoker.engine.for_project(project)
    try:
        record = engine.get_record(stack_id)
    except NotFound:
        return None
    rows = [r for r in engine.store.get_resources(record.id) if r.name == resource_name and r.replaced_by is None]
    return (record.id, rows[-1].data or {}) if rows else None


def _admits(found: tuple[str, dict], project: str, resource_name: str, token: str | None,
            signature: str | None) -> bool:
    stack_id, data = found
    if signature and signature_matches(data, project, stack_id, resource_name, signature):
        return True
    stored = data.get(HANDLE_TOKEN_KEY)
    return bool(token) and isinstance(stored, str) and hmac.compare_digest(stored.encode(), token.encode())


def _ctx(request: Request, tenant_id: str, project: str) -> Ctx:
    state = request.app.state.stoker
    engine = state.engine.for_project(project)
    # an engine id per request: two requests never share a stack lock by accident
    engine.engine_id = new_engine_id()
    links = Links(request, tenant_id)
    engine.api_url = links.root  # where wait condition handles are signalled
    return Ctx(request, tenant_id, project, engine, links, state)


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
