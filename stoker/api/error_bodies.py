"""Heat-shaped error bodies, and the exception handlers that produce them.

Every error the API returns looks like Heat's (``heat.api.middleware.fault``)::

    {"explanation": "...", "code": 404, "title": "Not Found",
     "error": {"type": "EntityNotFound", "message": "...", "traceback": null}}

python-heatclient prints ``error.message``.  Validation errors also carry
Stoker's ``problems`` (path, file, line, column, code, message), so a client
can point at every mistake at once.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from stoker.errors import Conflict, FunctionError, NotFound, StokerError, ValidationFailed
from stoker.heat_words import heat_worded
from stoker.resources.openstack.inventory import UNAVAILABLE
from stoker.resources.policy import NOT_ALLOWED

LOG = logging.getLogger("stoker.api")

#: status -> (title, explanation), as webob words them
STATUS_TEXT = {
    400: ("Bad Request", "The server could not comply with the request since it is either "
          "malformed or otherwise incorrect."),
    401: ("Unauthorized", "This server could not verify that you are authorized to access the "
          "document you requested."),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this server."),
    415: ("Unsupported Media Type", "The request media type is not supported by this server."),
    500: ("Internal Server Error", "The server has either erred or is incapable of performing "
          "the requested operation."),
    501: ("Not Implemented", "The server has not implemented the requested operation."),
    503: ("Service Unavailable", "The server is currently unavailable. Please try again at a "
          "later time."),
}


class ApiError(Exception):
    """An error with an HTTP status, raised by the routes."""

    def __init__(self, status: int, message: str, error_type: str | None = None,
                 extra: dict | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or _default_type(status)
        self.extra = extra or {}
        self.headers = headers


def _default_type(status: int) -> str:
    title = STATUS_TEXT.get(status, ("Error",))[0]
    return "HTTP" + title.replace(" ", "")


def bad_request(message: str, error_type: str = "HTTPBadRequest") -> ApiError:
    return ApiError(400, message, error_type)


def not_found(message: str, error_type: str = "EntityNotFound") -> ApiError:
    return ApiError(404, message, error_type)


def error_body(status: int, message: str, error_type: str, trace: str | None = None,
               extra: dict | None = None) -> dict:
    title, explanation = STATUS_TEXT.get(status, ("Error", ""))
    error: dict[str, Any] = {"type": error_type, "message": message, "traceback": trace}
    error.update(extra or {})
    return {"explanation": explanation, "code": status, "error": error, "title": title}


def error_response(status: int, message: str, error_type: str, trace: str | None = None,
                   extra: dict | None = None, headers: dict | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, message, error_type, trace, extra), status_code=status,
                        headers=headers)


def from_stoker_error(exc: StokerError) -> ApiError:
    """The status and Heat error type for one of Stoker's errors."""
    if isinstance(exc, ValidationFailed):
        problems = {"problems": [p.as_dict() for p in exc.problems]}
        if exc.problems and all(p.code == NOT_ALLOWED for p in exc.problems):
            return ApiError(403, str(exc), "Forbidden", problems)  # Heat's answer to its type policy
        if exc.problems and all(p.code == UNAVAILABLE for p in exc.problems):
            return ApiError(400, str(exc), "ResourceTypeUnavailable", problems)
        return ApiError(400, heat_worded(exc.problems) or str(exc), "StackValidationFailed", problems)
    if isinstance(exc, FunctionError):
        return ApiError(400, str(exc), "StackValidationFailed", {"problems": [exc.problem().as_dict()]})
    if isinstance(exc, NotFound):
        return ApiError(404, str(exc), "EntityNotFound")
    if isinstance(exc, Conflict):
        text = str(exc)
        kind = "StackExists" if "already exists" in text else "ActionInProgress"
        return ApiError(409, text, kind)
    if type(exc).__name__ == "UnknownResourceType":
        return ApiError(404, str(exc), "ResourceTypeNotFound")
    return ApiError(400, str(exc), type(exc).__name__)


def install_handlers(app: FastAPI, debug: bool = False) -> None:
    """Map every exception to a Heat-shaped body; nothing escapes as a bare 500 page."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return error_response(exc.status, exc.message, exc.error_type, extra=exc.extra,
                              headers=exc.headers)

    @app.exception_handler(StokerError)
    async def _stoker_error(request: Request, exc: StokerError):
        mapped = from_stoker_error(exc)
        return error_response(mapped.status, mapped.message, mapped.error_type, extra=mapped.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        status = exc.status_code
        message = exc.detail if isinstance(exc.detail, str) else STATUS_TEXT.get(status, ("", ""))[1]
        if status == 404 and message == "Not Found":
            message = STATUS_TEXT[404][1]
        if status == 405:
            message = f"The method {request.method} is not allowed for this resource."
        return error_response(status, message, _default_type(status), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("query", "path", "body"))
            parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
        return error_response(400, "; ".join(parts) or "invalid request", "HTTPBadRequest")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        LOG.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        trace = "".join(traceback.format_exception(exc)) if debug else None
        return error_response(500, f"{type(exc).__name__}: {exc}", type(exc).__name__, trace)
