"""Uploaded plugins kept in the database (``plugin_package``), so every host sharing it can run them.

One row per plugin version: the plugin's folder as uploaded (its YAMLs and its
package: a wagon, a wheel or source files) packed as one tar.gz, and its
sha256, which tells a host whether the copy it unpacked is still the one stored.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Column, DateTime, LargeBinary, PrimaryKeyConstraint, String, Table, delete, select

from stoker.store.models import metadata

PLUGIN_PACKAGES = Table(
    "plugin_package", metadata,
    Column("name", String(128), nullable=False),
    Column("version", String(128), nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("archive", LargeBinary, nullable=False),
    Column("uploaded_at", DateTime, nullable=False),
    PrimaryKeyConstraint("name", "version", name="pk_plugin_package"),
)


class PluginPackages:
    """The rows, over one store."""

    def __init__(self, store: Any):
        self.engine = store.engine
        self._writer = store.engine.execution_options(stoker_write=True)

    def put(self, name: str, version: str, sha256: str, archive: bytes) -> None:
        """Store a plugin version (the same name and version again replaces it)."""
        where = (PLUGIN_PACKAGES.c.name == name) & (PLUGIN_PACKAGES.c.version == version)
        with self._writer.begin() as conn:
            conn.execute(delete(PLUGIN_PACKAGES).where(where))
            conn.execute(PLUGIN_PACKAGES.insert().values(
                name=name, version=version, sha256=sha256, archive=archive,
                uploaded_at=datetime.now(timezone.utc).replace(tzinfo=None)))

    def digests(self) -> dict[tuple[str, str], str]:
        """(name, version) -> sha256 of every stored plugin (no archive is read)."""
        query = select(PLUGIN_PACKAGES.c.name, PLUGIN_PACKAGES.c.version, PLUGIN_PACKAGES.c.sha256)
        with self.engine.connect() as conn:
            return {(row.name, row.version): row.sha256 for row in conn.execute(query)}

    def archive(self, name: str, version: str) -> bytes:
        query = select(PLUGIN_PACKAGES.c.archive).where(PLUGIN_PACKAGES.c.name == name,
                                                        PLUGIN_PACKAGES.c.version == version)
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()

    def remove(self, name: str, version: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(PLUGIN_PACKAGES).where(PLUGIN_PACKAGES.c.name == name,
                                                       PLUGIN_PACKAGES.c.version == version))
