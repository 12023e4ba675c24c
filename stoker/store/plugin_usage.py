"""Which deployments run a plugin version: its name and version in their plans' ``plugins``.

A plugin a deployment runs is not deleted without ``force`` (Cloudify's ``plugin_in_use``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stoker import secretbox
from stoker.store.models import Deployment


def runs(plan: Any, name: str, version: str) -> bool:
    plugins = (secretbox.unseal(plan) or {}).get("plugins") or {}
    return any(isinstance(d, dict) and d.get("package_name") == name and str(d.get("package_version")) == version
               for d in plugins.values())


def deployments_using(store: Any, name: str, version: str, project_ids: list[str] | None) -> list[tuple[str, str]]:
    """(project, deployment id) of the deployments of ``project_ids`` (None: every project) running it."""
    c = Deployment.__table__.c
    query = select(c.project_id, c.id, c.plan).order_by(c.project_id, c.id)
    if project_ids is not None:
        query = query.where(c.project_id.in_(project_ids))
    with store.engine.connect() as conn:
        return [(row.project_id, row.id) for row in conn.execute(query) if runs(row.plan, name, version)]
