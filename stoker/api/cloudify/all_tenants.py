"""``_all_tenants=true`` on a list (``cfy ... list --all-tenants``): which tenants' resources it reads.

As on Cloudify: a user's list covers every tenant the user is a member of, itself or through a group (each as
the user sees it there), the operator's (Stoker's sys_admin, ``Identities.operator``: a manager of
``default_tenant``, or anyone under ``noauth``) every tenant holding such resources (it acts in each as its
manager: ``Identities._member``).  Without the flag, or by a project's token, the request's tenant only; a tenant a
user who is not the operator is no member of is never read for it.
"""

from __future__ import annotations

from typing import Any, Iterator

from fastapi import Request
from sqlalchemy import Table, select

from stoker.api.cloudify.identity import Caller
from stoker.api.cloudify.users import project_of


def asked(request: Request) -> bool:
    return request.query_params.get("_all_tenants", "").lower() == "true"


def projects_listed(request: Request, who: Caller, table: Table) -> list[str]:
    """The projects whose rows of ``table`` (it has a ``project_id``) the caller's list reads, its own first."""
    if not asked(request) or who.project_token:
        return [who.project]
    cloudify = request.app.state.cloudify
    projects = {project_of(tenant) for tenant in cloudify.users.tenant_roles(who.user)}
    if cloudify.operator(who):
        with request.app.state.stoker.engine.store.engine.connect() as conn:
            projects.update(conn.execute(select(table.c.project_id).distinct()).scalars())
    return [who.project, *sorted(projects - {who.project})]


def engines_listed(request: Request, who: Caller, engine: Any, table: Table) -> Iterator[tuple[str, Any]]:
    """(project, an engine acting for it) of each project the list reads (``engine`` is the caller's)."""
    for project in projects_listed(request, who, table):
        yield project, engine if project == who.project else engine.for_project(project)
