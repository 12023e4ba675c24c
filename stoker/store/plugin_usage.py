"""Which blueprints use a plugin version: its name and version in their plans' ``plugins``.

Cloudify's rule (``plugin_in_use``): a plugin a blueprint uses is deleted only with force.  A deployment runs
its blueprint's plugins (a plugins update moves both), so a plugin no blueprint uses no deployment runs.
``PluginCatalog.delete`` applies it, for ``cfy plugins delete`` and ``stoker plugin delete`` alike.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stoker import secretbox
from stoker.store.models import Blueprint


def runs(plan: Any, name: str, version: str) -> bool:
    plugins = (secretbox.unseal(plan) or {}).get("plugins") or {}
    return any(isinstance(d, dict) and d.get("package_name") == name and str(d.get("package_version")) == version
               for d in plugins.values())


def blueprints_using(engine: Any, name: str, version: str, project_ids: list[str] | None) -> list[tuple[str, str]]:
    """(project, blueprint id) of the blueprints of ``project_ids`` (None: every project) using it."""
    c = Blueprint.__table__.c
    query = select(c.project_id, c.id, c.plan).order_by(c.project_id, c.id)
    if project_ids is not None:
        query = query.where(c.project_id.in_(project_ids))
    with engine.connect() as conn:
        return [(row.project_id, row.id) for row in conn.execute(query) if runs(row.plan, name, version)]
