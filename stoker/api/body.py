"""Request bodies and query parameters: size cap, JSON parsing, Heat's value parsing.

A body over ``max_json_body_size`` (Heat's default, 1 MiB) is a 413 and is
never read whole; a body that is not JSON (or not a JSON object where one is
needed) is a 400, never a 500.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from fastapi import Request

from stoker.api.error_bodies import ApiError, bad_request
from stoker.errors import ValidationFailed
from stoker.limits import limit
from stoker.template.loader import check_nesting

#: Heat's ``max_json_body_size``
MAX_JSON_BODY_SIZE = 1024 * 1024


def _limit(request: Request) -> int:
    return getattr(request.app.state, "max_body_size", MAX_JSON_BODY_SIZE)


def _too_large(limit: int, setting: str = "max_json_body_size", what: str = "JSON body") -> ApiError:
    return ApiError(413, f"Request limit exceeded: {what} size exceeds the maximum allowed "
                    f"size of {limit} bytes ({setting})", "RequestLimitExceeded")


async def read_body(request: Request, limit: int | None = None, setting: str = "max_json_body_size",
                    what: str = "JSON body") -> bytes:
    """The raw body, refusing (413) anything over the limit (``setting``'s) before reading it all."""
    limit = _limit(request) if limit is None else limit
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise _too_large(limit, setting, what)
        except ValueError:
            raise bad_request("Content-Length is not a number") from None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, setting, what)
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request) -> Any:
    """The body as JSON; an empty body reads as ``None``."""
    raw = await read_body(request)
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise bad_request("The request body is not UTF-8 text") from None
    except ValueError as exc:
        raise bad_request(f"The request body is not valid JSON: {exc}", "MalformedRequestBody") from None
    except RecursionError:
        raise bad_request("The request body is nested too deeply", "MalformedRequestBody") from None
    check_depth(data)
    return data


def check_depth(data: Any, what: str = "The request body") -> None:
    """Refuse data nested more than ``max_nesting`` levels (a 400, before anything recurses into it)."""
    try:
        check_nesting(data, what)
    except ValidationFailed:
        raise bad_request(f"{what} is nested more than {limit('max_nesting')} levels deep (max_nesting)",
                          "MalformedRequestBody") from None


async def json_object(request: Request) -> dict:
    """The body as a JSON object (a map); anything else is a 400."""
    data = await json_body(request)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise bad_request(f"The request body must be a JSON object, not {type(data).__name__}",
                          "MalformedRequestBody")
    return data


# -- Heat's parameter parsing (heat.common.param_utils) ----------------------------------
def extract_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "t", "true", "on", "y", "yes"):
        return True
    if text in ("0", "f", "false", "off", "n", "no"):
        return False
    raise bad_request(f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.')


def extract_int(name: str, value: Any, allow_zero: bool = True, allow_negative: bool = False) -> int | None:
    if value is None:
        return None
    try:
        number = int(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None:
        raise bad_request(f"Invalid value '{value}' specified for '{name}': must be an integer")
    if number < 0 and not allow_negative:
        raise bad_request(f"Invalid value '{value}' specified for '{name}': must not be negative")
    if number == 0 and not allow_zero:
        raise bad_request(f"Invalid value '{value}' specified for '{name}': must not be zero")
    return number


def extract_tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        tags = [t.strip() for t in value.split(",")]
    elif isinstance(value, list) and all(isinstance(t, str) for t in value):
        tags = [t.strip() for t in value]
    else:
        raise bad_request("tags must be a comma-separated string or a list of strings")
    for tag in tags:
        if len(tag) > 80:
            raise bad_request(f"Invalid tag, \"{tag}\" is longer than 80 characters")
    return [t for t in tags if t]


def query_mixed(request: Request, names: Iterable[str]) -> dict[str, Any]:
    """Heat's "mixed" parameters: one value, or a list when given several times."""
    found: dict[str, Any] = {}
    for name in names:
        values = [v for v in request.query_params.getlist(name) if v != ""]
        if values:
            found[name] = values[0] if len(values) == 1 else values
    return found
