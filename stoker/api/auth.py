"""Who is calling: tokens Stoker issues, or no authentication at all for local use.

``token`` mode: every request carries ``X-Auth-Token``; its sha256 is looked
up in ``api_token`` and names the caller's project, which must be the
``{tenant_id}`` of the URL.  ``noauth`` mode (the default when the server
listens on a loopback address only): the URL's ``{tenant_id}`` is the project.

Either way a project only ever sees its own stacks: the engine is always
acting "for_project" the caller's project, so another project's stack is
simply not found (404), never a 403 that would tell it exists.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Engine as SAEngine

from stoker.api.error_bodies import ApiError
from stoker.limits import MAX_TOKEN_DAYS
from stoker.store.api_tables import TOKENS, iso, utcnow

AUTH_MODES = ("auto", "token", "noauth")
TOKEN_PREFIX = "stk_"
#: refused tokens remembered (and so never looked up again) before the memory starts afresh
MAX_REMEMBERED_REFUSALS = 10_000


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_mode(mode: str, host: str) -> str:
    """``auto`` means noauth on a loopback address, tokens anywhere else."""
    if mode not in AUTH_MODES:
        raise ValueError(f"auth mode must be one of {', '.join(AUTH_MODES)}, not {mode!r}")
    if mode == "auto":
        return "noauth" if is_loopback(host) else "token"
    return mode


@dataclass
class IssuedToken:
    id: str
    token: str
    project_id: str
    expires_at: datetime | None


class TokenStore:
    """Issue, check, list and revoke tokens (kept hashed)."""

    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    def create(self, project_id: str, description: str = "", expires_in: timedelta | None = None,
               user_name: str | None = None) -> IssuedToken:
        """A token for the project (or, given ``user_name``, for that Cloudify user, issued in that project)."""
        if not project_id or len(project_id) > 255:
            raise ValueError("a project id is 1 to 255 characters")
        if expires_in is not None and not timedelta(0) < expires_in <= timedelta(days=MAX_TOKEN_DAYS):
            raise ValueError(f"a token's lifetime is more than 0 and at most {MAX_TOKEN_DAYS} days")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token_id = str(uuid.uuid4())
        expires = utcnow() + expires_in if expires_in else None
        with self._writer.begin() as conn:
            conn.execute(TOKENS.insert().values(id=token_id, token_hash=digest(token), project_id=project_id,
                                                description=description, created_at=utcnow(),
                                                expires_at=expires, user_name=user_name))
        return IssuedToken(token_id, token, project_id, expires)

    def project_of(self, token: str) -> str | None:
        """The project a valid project token belongs to; None for unknown, revoked or expired ones, and
        for a Cloudify user's token (its role, which may be viewer, means nothing to Heat's routes)."""
        found = self.holder_of(token)
        return found[0] if found and found[1] is None else None

    def holder_of(self, token: str) -> tuple[str, str | None] | None:
        """(project, user name or None) of a valid token; None for unknown, revoked or expired ones."""
        query = select(TOKENS.c.project_id, TOKENS.c.user_name, TOKENS.c.expires_at, TOKENS.c.revoked_at).where(
            TOKENS.c.token_hash == digest(token))
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        if row is None or row.revoked_at is not None:
            return None
        if row.expires_at is not None and row.expires_at <= utcnow():
            return None
        return row.project_id, row.user_name

    def list(self, project_id: str | None = None) -> list[dict[str, Any]]:
        query = select(TOKENS).order_by(TOKENS.c.created_at)
        if project_id is not None:
            query = query.where(TOKENS.c.project_id == project_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        now = utcnow()
        return [{"id": r.id, "project": r.project_id, "user": r.user_name, "description": r.description,
                 "created_at": iso(r.created_at), "expires_at": iso(r.expires_at),
                 "revoked": r.revoked_at is not None,
                 "live": r.revoked_at is None and (r.expires_at is None or r.expires_at > now)} for r in rows]

    def revoke(self, token_id: str) -> bool:
        with self._writer.begin() as conn:
            done = conn.execute(update(TOKENS).where(TOKENS.c.id == token_id, TOKENS.c.revoked_at.is_(None))
                                .values(revoked_at=utcnow())).rowcount
        return bool(done)


class Authenticator:
    """Decides the project of a request, or refuses it."""

    def __init__(self, mode: str, tokens: TokenStore | None = None):
        if mode not in ("token", "noauth"):
            raise ValueError(f"resolved auth mode must be token or noauth, not {mode!r}")
        if mode == "token" and tokens is None:
            raise ValueError("token mode needs a token store")
        self.mode = mode
        self.tokens = tokens
        #: digests of tokens refused (unknown, revoked or expired: none of them comes back)
        self._refused: set[str] = set()

    def project(self, tenant_id: str, token: str | None, about_stack: bool = False) -> str:
        """The caller's project for a URL under ``/v1/{tenant_id}``."""
        if self.mode == "noauth":
            return tenant_id
        if not token:
            raise ApiError(401, "Authentication required: send a token in X-Auth-Token "
                           "(create one with `stoker token create --project P`)", "NotAuthenticated")
        project = self._lookup(token)
        if project is None:
            raise ApiError(401, "Authentication failed: the token is unknown, revoked or expired",
                           "NotAuthenticated")
        if project != tenant_id:
            if about_stack:
                # another project's stack: not found, as if it did not exist
                raise ApiError(404, "The Stack could not be found.", "EntityNotFound")
            raise ApiError(403, f"The token is not valid for project {tenant_id}", "Forbidden")
        return project

    def _lookup(self, token: str) -> str | None:
        """Looked up on every request, so a revoked token is refused at once; only refusals are
        remembered (a token unknown now never becomes valid), so a flood of bad ones stays cheap."""
        key = digest(token)
        if key in self._refused:
            return None
        project = self.tokens.project_of(token)
        if project is None:
            if len(self._refused) >= MAX_REMEMBERED_REFUSALS:
                self._refused.clear()
            self._refused.add(key)
        return project
