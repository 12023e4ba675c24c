"""Uploaded plugins kept in the database (``plugin_package``), so every host sharing it can run them.

One row per plugin version: the plugin's folder as uploaded (its YAMLs and its
package: a wagon, a wheel or source files) packed as one tar.gz, and its
sha256, which tells a host whether the copy it unpacked is still the one stored;
and, as on Cloudify, the tenant (project) it was uploaded to, who uploaded it
and its visibility: ``private`` (its uploader and the tenant's managers),
``tenant`` (the tenant's users) or ``global`` (every tenant).  A name and
version is one row per tenant (two tenants may each hold their own).

``viewer_of`` and ``Viewer.sees`` are the one rule of who may use a plugin: the
API's routes, blueprint parsing (``plugin:NAME``) and a task's plugin lookup (as
the deployment's creator) all ask them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Column, DateTime, LargeBinary, PrimaryKeyConstraint, String, Table, delete, select, update

from stoker.store.api_tables import USERS
from stoker.store.models import metadata

#: narrowest first: a plugin's visibility may only widen
VISIBILITIES = ("private", "tenant", "global")

PLUGIN_PACKAGES = Table(
    "plugin_package", metadata,
    Column("name", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("archive", LargeBinary, nullable=False),
    Column("uploaded_at", DateTime, nullable=False),
    Column("project_id", String(255), nullable=False, server_default="default"),
    Column("visibility", String(16), nullable=False, server_default="global"),
    Column("created_by", String(255), nullable=True),
    PrimaryKeyConstraint("project_id", "name", "version", name="pk_plugin_package"),
)


@dataclass(frozen=True)
class Owner:
    """Whose a stored plugin is (and, read back, when it was stored and its archive's sha256)."""

    project_id: str
    visibility: str
    created_by: str | None
    uploaded_at: datetime | None = None
    sha256: str | None = None


#: a plugin stored without saying whose (before tenants had plugins): the default project's, global
DEFAULT_OWNER = Owner("default", "global", None)


@dataclass(frozen=True)
class Viewer:
    """Who looks at the catalog: a project, and (over the API) a user and whether the tenant's manager.
    Without a user (a command of the host, an execution's task) the tenant's private plugins are seen too."""

    project_id: str
    user: str | None = None
    manager: bool = True

    def sees(self, owner: Owner) -> bool:
        if owner.visibility == "global":
            return True
        if owner.project_id != self.project_id:
            return False
        return owner.visibility == "tenant" or self.manager or self.user is None or owner.created_by == self.user


#: a deployment's creator when no user made it (the host's commands, a project's token, ``--auth noauth``):
#: Cloudify's bootstrap admin, who sees every plugin, unless a user of that name exists
HOST_USER = "admin"
#: the tenant whose managers act for the whole server (``Identities.operator``)
OPERATOR_TENANT = "default_tenant"


def viewer_of(engine: Any, project_id: str, tenant: str, user: str | None) -> Viewer:
    """How ``user`` sees the plugins of ``project_id`` (tenant ``tenant``): every one of the tenant's
    when None (the host's user, a project's token) or ``HOST_USER`` of no user row; else the
    tenant's ``tenant`` and global ones, its own private ones, and all private ones as the tenant's
    manager or the operator (a manager of ``default_tenant``, as Cloudify's sys_admin)."""
    if user is None:
        return Viewer(project_id)
    with engine.connect() as conn:
        roles = dict(conn.execute(select(USERS.c.tenant, USERS.c.role).where(USERS.c.name == user)).all())
    if not roles and user == HOST_USER:
        return Viewer(project_id)
    return Viewer(project_id, user, manager="manager" in (roles.get(tenant), roles.get(OPERATOR_TENANT)))


class PluginPackages:
    """The rows, over one store."""

    def __init__(self, store: Any):
        self.engine = store.engine
        self._writer = store.engine.execution_options(stoker_write=True)

    def put(self, name: str, version: str, sha256: str, archive: bytes, owner: Owner = DEFAULT_OWNER) -> None:
        """Store a plugin version for ``owner``'s project (the same name and version there again replaces it)."""
        with self._writer.begin() as conn:
            conn.execute(delete(PLUGIN_PACKAGES).where(self._row(owner.project_id, name, version)))
            conn.execute(PLUGIN_PACKAGES.insert().values(
                name=name, version=version, sha256=sha256, archive=archive,
                uploaded_at=datetime.now(timezone.utc).replace(tzinfo=None), project_id=owner.project_id,
                visibility=owner.visibility, created_by=owner.created_by))

    def owners(self) -> dict[tuple[str, str, str], Owner]:
        """(project, name, version) -> whose it is and its digest, of every stored plugin (no archive is read)."""
        c = PLUGIN_PACKAGES.c
        query = select(c.name, c.version, c.project_id, c.visibility, c.created_by, c.uploaded_at, c.sha256)
        with self.engine.connect() as conn:
            return {(row.project_id, row.name, row.version): Owner(row.project_id, row.visibility, row.created_by,
                                                                   row.uploaded_at, row.sha256)
                    for row in conn.execute(query)}

    def archive(self, project_id: str, name: str, version: str) -> bytes:
        query = select(PLUGIN_PACKAGES.c.archive).where(self._row(project_id, name, version))
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()

    def change(self, project_id: str, name: str, version: str, **values: str) -> None:
        """Set a stored plugin's ``visibility`` or ``created_by`` (its owner)."""
        with self._writer.begin() as conn:
            conn.execute(update(PLUGIN_PACKAGES).where(self._row(project_id, name, version)).values(**values))

    def remove(self, project_id: str, name: str, version: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(PLUGIN_PACKAGES).where(self._row(project_id, name, version)))

    @staticmethod
    def _row(project_id: str, name: str, version: str) -> Any:
        c = PLUGIN_PACKAGES.c
        return (c.project_id == project_id) & (c.name == name) & (c.version == version)
