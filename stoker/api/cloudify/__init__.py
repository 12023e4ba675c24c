"""Cloudify's REST API v3.1 under ``/api/v3.1``, in the same app as Heat's ``/v1``: ``cfy`` and
cloudify-rest-client drive Stoker's blueprints, deployments and executions unchanged."""

from __future__ import annotations

from typing import Any

from stoker.api.auth import TokenStore
from stoker.api.cloudify.identity import Identities
from stoker.api.cloudify.users import UserStore


def install(app: Any, auth_mode: str, tokens: TokenStore) -> None:
    """Add the routes to ``app``; callers are resolved by ``app.state.cloudify``."""
    from stoker.api.cloudify.routes import routers

    app.state.cloudify = Identities(auth_mode, tokens, UserStore(tokens.engine))
    served = routers()
    for router in served:
        app.include_router(router)
    app.state.cloudify_routes = [route for router in served for route in router.routes]  # cfy permissions list
