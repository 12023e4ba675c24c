"""``/tokens``: a user's REST tokens (``cfy tokens create|list|get|delete``), as Cloudify keeps them.

A token is its user's: listed, shown and deleted by that user, or by the operator (Cloudify's
``manage_others_tokens``); anyone else is told it does not exist (404).  ``expiration_date`` is read as Cloudify
reads it: ``+10h``, ``+1d+30min`` (from now) or an absolute time (UTC unless it names an offset); none: 10 hours.
A caller holding a project's own token (a plugin task's) gets another project token, never a user's.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from dateutil import parser as time_parser
from dateutil.relativedelta import relativedelta
from fastapi import Depends, Request
from fastapi.responses import Response

from stoker.api.cloudify import views
from stoker.api.cloudify.identity import Caller, caller
from stoker.api.cloudify.routing import bad, map_body, router
from stoker.api.error_bodies import ApiError
from stoker.api.request_context import reply
from stoker.limits import MAX_TOKEN_DAYS
from stoker.store.api_tables import iso

routes = router("tokens")
#: a user token's life when the request names none (Cloudify's default is 10 hours)
TOKEN_HOURS = 10
#: one ``+N unit`` of a relative expiry, Cloudify's units
DELTA = re.compile(r"\+(\d{1,6}) ?(min(?:ute)?|h(?:our)?|d(?:ay)?|w(?:eek)?|mo(?:nth)?|y(?:ear)?)s? ?")
UNITS = {"min": "minutes", "h": "hours", "d": "days", "w": "weeks", "mo": "months", "y": "years"}


def _expiry(given: object, now: datetime) -> timedelta:
    """How long a token asked to expire at ``given`` lives from ``now`` (naive UTC)."""
    if given is None or given == "":
        return timedelta(hours=TOKEN_HOURS)
    if not isinstance(given, str) or len(given) > 100:
        raise bad("expiration_date is a time: +10h, +1d+30min or 2030-03-09 14:52")
    if given.startswith("+"):
        parts = DELTA.findall(given)
        if not parts or DELTA.sub("", given):
            raise bad(f"{given} is not a legal time delta")
        when = now
        for count, unit in parts:
            when += relativedelta(**{UNITS[_unit(unit)]: int(count)})
    else:
        try:
            when = time_parser.parse(given)
        except (ValueError, OverflowError):
            raise bad(f"{given} is not a legal time format") from None
        if when.tzinfo is not None:
            when = when.astimezone(timezone.utc).replace(tzinfo=None)
    life = when - now
    if not timedelta(0) < life <= timedelta(days=MAX_TOKEN_DAYS):
        raise bad(f"expiration_date {given} is not in the future (within {MAX_TOKEN_DAYS} days)")
    return life


def _unit(word: str) -> str:
    return next(short for short in sorted(UNITS, key=len, reverse=True) if word.startswith(short))


def _view(row: dict, role: str | None, value: str | None = None) -> dict:
    return {"id": row["id"], "value": value, "username": row["user"], "role": role,
            "description": row["description"], "last_used": None,
            "expiration_date": row["expires_at"]}


def _managed(request: Request, who: Caller) -> list[dict]:
    """The live tokens ``who`` manages: its own, or everyone's for the operator."""
    cloudify = request.app.state.cloudify
    everyone = cloudify.operator(who)
    own = None if who.project_token else who.user
    return [r for r in cloudify.tokens.list() if r["live"] and (everyone or (own is not None and r["user"] == own))]


def _one(request: Request, who: Caller, token_id: str) -> dict:
    for row in _managed(request, who):
        if row["id"] == token_id:
            return row
    raise ApiError(404, f"Could not find token {token_id[:100]}", "not_found_error")


@routes.get("/tokens")
def token_list(request: Request, who: Caller = Depends(caller)) -> Response:
    return reply(views.page(request, [_view(r, None) for r in _managed(request, who)], filters=False))


@routes.get("/tokens/{token_id}")
def token_get(token_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    return reply(_view(_one(request, who, token_id), None))


@routes.post("/tokens", status_code=200)
async def token_create(request: Request, who: Caller = Depends(caller)) -> Response:
    body = await map_body(request, "send {\"description\": ..., \"expiration_date\": ...}")
    if request.app.state.stoker.auth_mode == "noauth":
        raise bad("this server runs without authentication (--auth noauth): it issues no tokens")
    description = body.get("description")
    description = description[:1000] if isinstance(description, str) else ""
    life = _expiry(body.get("expiration_date"), datetime.now(timezone.utc).replace(tzinfo=None))
    tokens = request.app.state.cloudify.tokens
    issued = tokens.create(who.project, description, life, user_name=None if who.project_token else who.user)
    row = {"id": issued.id, "user": None if who.project_token else who.user, "description": description,
           "expires_at": iso(issued.expires_at)}
    return reply(_view(row, who.role, issued.token))


@routes.delete("/tokens/{token_id}")
def token_delete(token_id: str, request: Request, who: Caller = Depends(caller)) -> Response:
    _one(request, who, token_id)
    request.app.state.cloudify.tokens.revoke(token_id)
    return Response(status_code=204)
