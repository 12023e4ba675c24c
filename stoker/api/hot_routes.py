"""A short way to the routes a stack's create and its polls take.

FastAPI checks routes one by one in registration order, and twice through an included router
(the app's scan asks the router whether it matches, then the router scans again to choose):
``GET /v1/{tenant_id}/stacks/{stack_name}/{stack_id}`` was found after ~74 checks, each with its
own bookkeeping, a third of a poll's CPU.  ``HotRoutes`` goes first in the app's routes and takes
a request only when one of ``HOT`` matches it fully and no route registered before that one
matches it fully too (plain regular expressions and method sets, no bookkeeping; an earlier route
of the same path but another method only matters when nothing matches fully); the route is then run as
FastAPI's own included router runs it.  Anything else (a shadowing literal path such as
``/stacks/{name}/resources``, another method, a FastAPI without the included-router internals
this relies on) goes the usual way, so every route answers what it answered before.
"""

from __future__ import annotations

from typing import Any

from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match

try:  # FastAPI's included routers (0.16x); without them there is no short way
    from fastapi import routing as _fr
    from fastapi.telemetry._api import _route_selected

    _INTERNALS = all(hasattr(_fr, name) for name in (
        "_IncludedRouter", "_EffectiveRouteContext", "_apply_router_form_limits", "_get_fastapi_scope",
        "_update_scope", "_FASTAPI_INCLUDED_ROUTER_KEY", "_FASTAPI_EFFECTIVE_ROUTE_CONTEXT_KEY"))
except ImportError:
    _INTERNALS = False

#: (method, path) of the routes a create and its polls take: the create, heatclient's lookup
#: (answered with a 302), the show
HOT = (("POST", "/v1/{tenant_id}/stacks"), ("GET", "/v1/{tenant_id}/stacks/{stack_name}"),
       ("GET", "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}"))
#: the scope key that carries the chosen route from ``matches`` to ``handle``
CHOSEN = "stoker.hot_route"


def _pattern(route: Any) -> tuple | None:
    """(path regex, methods or None for all) of a plain route; None if it is something else."""
    if isinstance(route, _fr._IncludedRouter) or getattr(route, "path_regex", None) is None or (
            isinstance(route, _fr._EffectiveRouteContext) and not isinstance(route.original_route, _fr.APIRoute)):
        return None
    methods = getattr(route, "methods", None)
    return route.path_regex, (frozenset(methods) if methods else None)


class _Hot:
    """One hot route: its included router, its effective context, the routes before it."""

    def __init__(self, included: Any, context: Any, earlier: list) -> None:
        self.included, self.context, self.earlier = included, context, earlier


class HotRoutes(BaseRoute):
    """The hot routes, each with the path patterns of every route registered before it."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        self.by_method: dict[str, list[_Hot]] = {}
        earlier: list = []
        for route in routes:
            if isinstance(route, _fr._IncludedRouter):
                for candidate in route.effective_candidates():
                    self._consider(route, candidate, earlier)
                    earlier.append(_pattern(candidate))
            else:
                earlier.append(_pattern(route))

    def _consider(self, included: Any, candidate: Any, earlier: list) -> None:
        if not (isinstance(candidate, _fr._EffectiveRouteContext)
                and isinstance(candidate.original_route, _fr.APIRoute)):
            return
        for method, path in HOT:
            # a route before it whose path cannot be told (a mount, a nested router): no short way
            if candidate.path_format == path and method in (candidate.methods or ()) and None not in earlier:
                self.by_method.setdefault(method, []).append(_Hot(included, candidate, list(earlier)))

    def matches(self, scope: Any) -> tuple[Match, dict]:
        if scope["type"] != "http":
            return Match.NONE, {}
        hot = self.by_method.get(scope["method"])
        if not hot:
            return Match.NONE, {}
        path, method = get_route_path(scope), scope["method"]
        for one in hot:
            if one.context.path_regex.match(path) and not any(
                    regex.match(path) and (methods is None or method in methods) for regex, methods in one.earlier):
                return Match.FULL, {CHOSEN: one}
        return Match.NONE, {}

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        """What the included router's handle does once it has chosen this route."""
        one: _Hot = scope.pop(CHOSEN)
        included, context = one.included, one.context
        _fr._apply_router_form_limits(scope, included.include_context.form_limits)
        fastapi_scope = _fr._get_fastapi_scope(scope)
        fastapi_scope[_fr._FASTAPI_INCLUDED_ROUTER_KEY] = included
        fastapi_scope[_fr._FASTAPI_EFFECTIVE_ROUTE_CONTEXT_KEY] = context
        match, child_scope = context.original_route.matches(scope)
        _fr._update_scope(scope, child_scope)
        _route_selected(scope=scope, path=getattr(context.starlette_route, "path_format", None) or context.path_format)
        scope["route"] = context.original_route
        await context.original_route.handle(scope, receive, send)


def install(app: Any) -> None:
    """Put the hot routes first in ``app`` (after every router is included)."""
    if not _INTERNALS:
        return
    hot = HotRoutes(app.router.routes)
    if hot.by_method:
        app.router.routes.insert(0, hot)
