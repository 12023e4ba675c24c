"""Who calls Cloudify's routes, in which tenant, with which role.

Credentials, as ``cfy`` and cloudify-rest-client send them: HTTP basic auth
with a user's password, an ``Authentication-Token`` (a user's, from
``cfy tokens get``, or a project token from ``stoker token create``, which
acts as the project's manager), or Stoker's ``X-Auth-Token``; the ``Tenant``
header names the tenant (default ``default_tenant``).  With ``noauth`` (on
loopback) every caller is the manager of ``default_tenant``.
"""

from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass
from typing import Any, Callable

from fastapi import Request

from stoker.api.auth import digest
from stoker.api.cloudify.passwords import check_password
from stoker.api.cloudify.users import UserStore, may, project_of
from stoker.api.error_bodies import ApiError
from stoker.blueprint.state import DEFAULT_TENANT, tenant_of

#: seconds a checked password or token is remembered (a revoked token stops within this; roles, memberships
#: and deactivation are read on every request)
CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Caller:
    user: str
    tenant: str
    role: str
    #: by a project's own token (``stoker token create``, a plugin task's): that tenant's manager, no user
    project_token: bool = False

    @property
    def project(self) -> str:
        return project_of(self.tenant)


def unauthorized(message: str) -> ApiError:
    return ApiError(401, message, "unauthorized_error")


def forbidden(message: str) -> ApiError:
    return ApiError(403, message, "forbidden_error")


class Identities:
    """Resolves a request's credentials to a ``Caller`` (with a short cache of successful checks)."""

    def __init__(self, mode: str, tokens: Any, users: UserStore):
        self.mode, self.tokens, self.users = mode, tokens, users
        self._cache: dict[str, tuple[Any, float]] = {}

    def caller(self, headers: Any) -> Caller:
        tenant = headers.get("tenant") or DEFAULT_TENANT
        if self.mode == "noauth":
            if tenant != DEFAULT_TENANT:
                raise forbidden(f"this server runs without authentication (--auth noauth) and serves only "
                                f"{DEFAULT_TENANT}, not {tenant!r}")
            return Caller("admin", tenant, "manager")
        token = headers.get("authentication-token") or headers.get("x-auth-token")
        if token:
            return self._by_token(token, headers.get("tenant"))
        basic = headers.get("authorization", "")
        if basic[:6].lower() == "basic ":
            name, password = _basic(basic[6:])
            stored = self.users.password_hash(name)  # read each time: a deactivated user is refused at once
            if not stored or not self._remembered(("password", name, password, stored),
                                                  lambda: check_password(password, stored)):
                raise unauthorized("Authentication failed for user " + repr(name))
            return self._member(name, tenant)
        raise unauthorized("Authentication required: send a user's credentials (cfy profiles use ... -u USER "
                           "-p PASSWORD) or an Authentication-Token")

    def _by_token(self, token: str, tenant: str | None) -> Caller:
        holder = self._remembered(("token", token), lambda: self.tokens.holder_of(token))
        if not holder:
            raise unauthorized("Authentication failed: the token is unknown, revoked or expired")
        project, user = holder
        if user is None:  # a project's own token: its manager, in its tenant only
            own = tenant_of(project)
            if tenant not in (None, own):
                raise forbidden(f"the token is not valid for tenant {tenant!r}")
            return Caller("admin", own, "manager", project_token=True)
        if not self.users.active(user):
            raise unauthorized(f"Authentication failed: user {user!r} is deactivated or removed")
        return self._member(user, tenant or tenant_of(project))

    def operator(self, who: Caller) -> bool:
        """Whether ``who`` acts for the whole server (makes a resource global, as Cloudify's admin): a
        user who is the manager of ``default_tenant``, the operator's own, or anyone without
        authentication (``noauth``, on loopback).  A project's token never does: a plugin's task holds one."""
        if self.mode == "noauth":
            return True
        if who.project_token:
            return False
        return self._role(who.user, DEFAULT_TENANT) == "manager"

    def role_in(self, who: Caller, tenant: str) -> str | None:
        """``who``'s role in ``tenant`` (the operator's: manager of any tenant Stoker knows), None where it may
        not act: no member, a project's token or ``noauth`` outside their one tenant."""
        if tenant == who.tenant:
            return who.role
        if self.mode == "noauth" or who.project_token:
            return None
        try:
            return self._member(who.user, tenant).role
        except ApiError:
            return None

    def _member(self, user: str, tenant: str) -> Caller:
        """``user`` in ``tenant`` with its role there; the operator, as Cloudify's sys_admin, acts as the
        manager of any tenant Stoker knows it is no member of."""
        role = self._role(user, tenant)
        if role is None and self._role(user, DEFAULT_TENANT) == "manager" and self.users.has_tenant(tenant):
            role = "manager"
        if role is None:
            raise forbidden(f"User {user!r} is not a member of tenant {tenant!r}")
        return Caller(user, tenant, role)

    def _role(self, user: str, tenant: str) -> str | None:
        """The highest of ``user``'s own and its groups' roles in ``tenant``, read on every request (a few indexed
        rows), never remembered: a removal (from the tenant or a group) or a role change holds at once."""
        return self.users.role(user, tenant)

    def _remembered(self, key: tuple, check: Callable[[], Any]) -> Any:
        """``check()``, remembered for a few seconds when it succeeds (a password check costs ~50 ms; its key holds
        the stored hash, so a new password ends the old one's at once)."""
        name = digest(repr(key))  # a password is never kept, only this hash of it
        now = time.monotonic()
        found = self._cache.get(name)
        if found is not None and found[1] > now:
            return found[0]
        value = check()
        if value:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[name] = (value, now + CACHE_SECONDS)
        return value


def _basic(encoded: str) -> tuple[str, str]:
    try:
        name, _, password = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise unauthorized("the Authorization header is not valid basic authentication") from None
    return name, password


def caller(request: Request) -> Caller:
    """The dependency every Cloudify route takes (kept on the request: the audit log names who changed what)."""
    found = request.state.caller = request.app.state.cloudify.caller(request.headers)
    return found


def requiring(role: str) -> Callable[[Request], Caller]:
    """A dependency refusing (403) callers whose role does not include ``role``."""
    def check(request: Request) -> Caller:
        found = caller(request)
        if not may(found.role, role):
            raise forbidden(f"User {found.user!r} is a {found.role} in tenant {found.tenant!r}: this needs "
                            f"the role {role} or above")
        return found

    check.needs = role  # type: ignore[attr-defined]  # read by routes/permissions.py
    return check
