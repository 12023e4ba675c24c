"""Cloudify-shaped errors for every route under ``/api``: ``{"message", "error_code", "server_traceback"}``.

cloudify-rest-client raises the exception class named by ``error_code`` and
``cfy`` prints ``message``; Heat's routes keep their own shape.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from stoker.api.body import json_body
from stoker.api.cloudify import audit
from stoker.api.cloudify.identity import Caller
from stoker.api.request_context import reply
from stoker.api.error_bodies import ApiError, from_stoker_error
from stoker.blueprint import visibility
from stoker.errors import Conflict, NotFound, StaleWrite, StokerError
from stoker.store.locks import new_engine_id

LOG = logging.getLogger("stoker.api")

#: Heat's error types -> Cloudify's error codes, where cloudify-rest-client knows one
CODES = {400: "bad_parameters_error", 401: "unauthorized_error", 403: "forbidden_error", 404: "not_found_error",
         409: "conflict_error", 413: "payload_too_large_error", 500: "internal_server_error"}


def error_response(status: int, message: str, code: str | None = None) -> JSONResponse:
    return JSONResponse({"message": message, "error_code": code or CODES.get(status, "bad_parameters_error"),
                         "server_traceback": None}, status_code=status)


def _mapped(exc: Exception) -> JSONResponse:
    if isinstance(exc, ApiError):
        code = exc.error_type if exc.error_type.islower() else None  # a Cloudify code, not a Heat type
        return error_response(exc.status, exc.message, code)
    if isinstance(exc, StaleWrite):
        return error_response(409, str(exc), "conflict_error")
    code = getattr(exc, "cloudify_code", None)  # one of Stoker's errors Cloudify answers with a code of its own
    if isinstance(exc, (NotFound, Conflict)):
        return error_response(404 if isinstance(exc, NotFound) else 409, str(exc), code)
    if code:
        return error_response(400, str(exc), code)
    if isinstance(exc, StokerError):
        mapped = from_stoker_error(exc)
        return error_response(mapped.status, mapped.message)
    if isinstance(exc, RequestValidationError):
        parts = [".".join(str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body")) + ": "
                 + str(e.get("msg")) for e in exc.errors()]
        return error_response(400, "; ".join(parts) or "invalid request")
    raise exc


class CloudifyRoute(APIRoute):
    """A route whose errors come out in Cloudify's shape."""

    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                response = await handler(request)
            except (ApiError, StokerError, RequestValidationError) as exc:
                return _mapped(exc)
            if request.method in audit.CHANGES and response.status_code < 300:
                await audit.record(request, response)
            return response

        return handle


#: where every Cloudify route lives (``/api/version`` is the one outside it, as on a manager)
PREFIX = "/api/v3.1"


def router(tag: str) -> APIRouter:
    return APIRouter(prefix=PREFIX, route_class=CloudifyRoute, tags=[f"cloudify: {tag}"])


def bad(message: str) -> ApiError:
    """A 400 the rest client raises as its ``CloudifyClientError`` with ``message``."""
    return ApiError(400, message, "bad_parameters_error")


def engine_for(request: Request, caller: Caller) -> Any:
    """The engine acting for the caller's tenant, with an engine id of its own (as a Heat request's)."""
    engine = request.app.state.stoker.engine.for_project(caller.project)
    engine.engine_id = new_engine_id()
    return engine


async def run(request: Request, caller: Caller, work: Callable[[Any], Any], status: int = 200) -> Response:
    """``work(engine)`` in the tenant's bounded request pool, its result as JSON (None: 204, no content)."""
    engine = engine_for(request, caller)
    result = await request.app.state.stoker.runner.call(caller.project, lambda: work(engine))
    if result is None:
        return Response(status_code=204)
    return result if isinstance(result, Response) else reply(result, status)


def label_list(raw: Any) -> list[tuple[str, str]]:
    """Labels as the client sends them: ``[{"key": k, "value": v}]`` or ``[{k: v}]``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad("labels must be a list of {key: value} entries")
    pairs = []
    for entry in raw:
        if isinstance(entry, dict) and set(entry) == {"key", "value"}:
            pairs.append((entry["key"], entry["value"]))
        elif isinstance(entry, dict) and len(entry) == 1:
            pairs.extend((k, v) for k, v in entry.items())
        else:
            raise bad(f"a label is {{key: value}}, not {entry!r}")
    return pairs


async def map_body(request: Request, hint: str) -> dict:
    """The request's JSON map (an empty body: ``{}``); anything else 400 with ``hint``."""
    body = await json_body(request) or {}
    if not isinstance(body, dict):
        raise bad(hint)
    return body


def global_refused(request: Request, who: Caller, what: str) -> str | None:
    """Why ``who`` may not make ``what`` global, in Cloudify's words (None: it is the operator, Cloudify's admin)."""
    if request.app.state.cloudify.operator(who):
        return None
    return (f"User `{who.user}` is not permitted to set or create a global resource (only the operator, a manager "
            f"of tenant default_tenant, makes a {what} global)")


def global_for_operator(request: Request, who: Caller, visibility: Any, what: str) -> None:
    """Only the operator makes ``what`` global (as Cloudify's admin): 403 for anyone else."""
    if visibility == "global" and (refused := global_refused(request, who, what)):
        raise ApiError(403, refused, "forbidden_error")


def visibility_given(request: Request, who: Caller, given: Any, what: str,
                     allowed: tuple[str, ...] = visibility.VISIBILITIES) -> str:
    """A visibility asked for (none: ``tenant``), checked as Cloudify checks it: 400 for a value not
    ``allowed``, 403 for global from anyone but the operator."""
    wanted = valid_visibility("tenant" if given is None else given, allowed)
    global_for_operator(request, who, wanted, what)
    return wanted


def valid_visibility(given: Any, allowed: tuple[str, ...] = visibility.VISIBILITIES) -> str:
    """``given``, one of ``allowed`` (400 in Cloudify's words otherwise)."""
    try:
        return visibility.checked(given, allowed)
    except StokerError as exc:
        raise bad(str(exc)) from None


async def visibility_sent(request: Request, who: Caller, what: str) -> str:
    """The visibility a ``set-visibility`` PATCH asks for (``{"visibility": "tenant"|"global"}``)."""
    body = await map_body(request, "send {\"visibility\": \"tenant\" or \"global\"}")
    if "visibility" not in body:
        raise bad("Missing visibility in json request body")
    return visibility_given(request, who, body["visibility"], what, visibility.WIDER)


def labels_in(body: dict, what: str) -> list[tuple[str, str]]:
    if "labels" not in body:
        raise bad(_labels_hint(what))
    return label_list(body["labels"])


def _labels_hint(what: str) -> str:
    return f"only a {what}'s labels can be changed here: send {{\"labels\": [...]}}"


def new_owner(request: Request, who: Caller, creator: Any) -> str:
    """``creator`` as a resource's new owner (``cfy ... set-owner -s USER``): the operator's to give (Cloudify's
    ``set_owner`` is the sys_admin's), to a user Stoker knows (else Cloudify's 400)."""
    cloudify = request.app.state.cloudify
    if not cloudify.operator(who):
        raise ApiError(403, f"User `{who.user}` is not permitted to perform the action set_owner in the tenant "
                            f"`{who.tenant}` (only the operator, a manager of tenant default_tenant, does)",
                       "forbidden_error")
    if not isinstance(creator, str) or not cloudify.users.exists(creator):
        raise bad(f"User {str(creator)[:100]} does not exist.")
    return creator
