"""Who sees which private resource, as on Cloudify: a ``private`` plugin, blueprint, deployment or secret is
seen by its creator, the tenant's managers and the operator only (``store/plugin_packages.Viewer``, the rule
plugin lookups follow too); a ``tenant`` one by the tenant's members, a ``global`` one from every tenant."""

from __future__ import annotations

from typing import Callable

from fastapi import Request

from stoker.api.cloudify.identity import Caller
from stoker.api.cloudify.users import project_of
from stoker.blueprint.state import tenant_of
from stoker.errors import NotFound
from stoker.store.plugin_packages import Owner, Viewer, viewer_of


def viewer(request: Request, who: Caller, project: str | None = None) -> Viewer:
    """How ``who`` sees ``project`` (its own by default; another one for a list of all tenants).  No user (a
    project's token, noauth): every resource of the project."""
    user = None if who.project_token or request.app.state.cloudify.mode == "noauth" else who.user
    project = project or who.project
    return viewer_of(request.app.state.stoker.engine.store.engine, project, tenant_of(project), user)


def seen_by(request: Request, who: Caller) -> Callable[[dict], bool]:
    """Whether ``who`` sees a resource as the API shows it (its ``tenant_name``, ``visibility``, ``created_by``)."""
    viewers: dict[str, Viewer] = {}

    def sees(shown: dict) -> bool:
        project = project_of(shown["tenant_name"])
        if project not in viewers:
            viewers[project] = viewer(request, who, project)
        return viewers[project].sees(Owner(project, shown["visibility"], shown["created_by"]))

    return sees


def seen(request: Request, who: Caller, shown: dict, what: str, name: str) -> dict:
    """``shown``, when ``who`` sees it: else the 404 of a resource that is not there."""
    if not seen_by(request, who)(shown):
        raise NotFound(f"Requested `{what}` with ID `{name}` was not found")
    return shown
