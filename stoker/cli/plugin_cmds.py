"""``stoker plugin ...``: the plugin catalog that ``plugin:NAME`` imports read (as ``cfy plugins``).

Here, the catalog of the command's database, as its project sees it; with ``--url``, the server's, over its
Cloudify REST API (``cli.remote_dsl.RemotePlugins``), in the tenant of the URL's project.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from stoker.blueprint.plugin_catalog import Plugin, PluginCatalog
from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import current_settings
from stoker.errors import NotFound
from stoker.store.plugin_packages import VISIBILITIES, Owner, Viewer

PLUGIN_COLUMNS = ["package_name", "package_version", "yaml_files", "package", "visibility", "tenant_name"]


class LocalPlugins:
    """The calls ``RemotePlugins`` makes over the API, on the command's own database: the host's user
    acts as the operator (any visibility, global too)."""

    def __init__(self, engine: Any):
        self.project_id = engine.project_id
        self.catalog = PluginCatalog.at_home(create=True, store=engine.store, viewer=Viewer(self.project_id))

    def upload(self, package: Path, yamls: list[Path], visibility: str = "tenant") -> dict:
        uploaded = self.catalog.upload(package, yamls, Owner(self.project_id, visibility, None))
        return self._found(uploaded.name, uploaded.version).as_dict()

    def list(self) -> list[dict]:
        return [p.as_dict() for p in self.catalog.list()]

    def get(self, name: str, version: str | None = None) -> dict:
        return self._found(name, version).as_dict()

    def delete(self, name: str, version: str | None = None, force: bool = False) -> dict:
        return self.catalog.delete(name, version, force).as_dict()

    def set_visibility(self, name: str, version: str | None, visibility: str) -> dict:
        found = self._found(name, version)
        self.catalog.set_visibility(found, visibility)
        return self._found(found.name, found.version).as_dict()

    def download(self, name: str, version: str | None, what: str = "package",
                 dsl_version: str | None = None) -> tuple[bytes, str]:
        """(bytes, file name): the package, ``full`` (it and its YAMLs zipped) or its ``yaml`` for ``dsl_version``."""
        return self._found(name, version).download(what, dsl_version)

    def _found(self, name: str, version: str | None) -> Plugin:
        found = self.catalog.find(name, version)
        if found is None:
            raise NotFound(f"plugin {name}{' ' + version if version else ''} is not uploaded")
        return found


def plugins() -> Any:
    """The catalog the command acts on: the server's with ``--url``, else the command's database's (workers
    sharing it run the plugins), unpacked in $STOKER_HOME."""
    settings = current_settings()
    return settings.remote.plugins if settings.remote is not None else LocalPlugins(settings.engine())


def _version_option():
    return click.option("--version", default=None, help="The plugin's version (default: the newest).")


@click.group()
def plugin() -> None:
    """Upload Cloudify plugins (wagons, wheels, source folders) for plugin: imports."""


@plugin.command("upload")
@click.argument("package", type=click.Path(exists=True, path_type=Path))
@click.option("-y", "--yaml-path", "yamls", multiple=True, type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="A plugin YAML (plugin.yaml, plugin_1_4.yaml, plugin_1_5.yaml); repeat for "
              "several. A source folder's own plugin*.yaml are taken when none is given.")
@click.option("-l", "--visibility", type=click.Choice(VISIBILITIES), default="tenant", show_default=True,
              help="Who sees it: its uploader and the tenant's managers, the tenant, or every tenant (global: "
              "the operator's).")
@format_option()
def upload(package, yamls, visibility, fmt):
    """Upload PACKAGE: a wagon (.wgn), a wheel (.whl) or a plugin's source folder (not over --url)."""
    show_record(plugins().upload(package, list(yamls), visibility), fmt)


@plugin.command("list")
@format_option()
def list_(fmt):
    """The project's own plugins and the global ones."""
    show_list(plugins().list(), PLUGIN_COLUMNS, fmt)


@plugin.command("show")
@click.argument("name")
@_version_option()
@format_option()
def show(name, version, fmt):
    show_record(plugins().get(name, version), fmt)


@plugin.command("download")
@click.argument("name")
@_version_option()
@click.option("-o", "--output-path", type=click.Path(path_type=Path), default=None,
              help="Where to write it (default: the name the catalog gives it, here).")
@click.option("--full-archive", is_flag=True, help="A zip of the package and its plugin YAMLs (an upload takes it).")
@click.option("--yaml", "yaml_", is_flag=True, help="The plugin YAML instead (as cfy plugins download_yaml).")
@click.option("--dsl-version", default=None, help="With --yaml: the one a blueprint of this DSL version imports "
              "(1_4, cloudify_dsl_1_5).")
def download(name, version, output_path, full_archive, yaml_, dsl_version):
    """Write the plugin's package as uploaded (a source folder as a tar.gz), or its YAML, to a file."""
    what = "yaml" if yaml_ else "full" if full_archive else "package"
    data, named = plugins().download(name, version, what, dsl_version)
    target = output_path or Path(named)
    target = target / named if target.is_dir() else target
    target.write_bytes(data)
    click.echo(str(target))


@plugin.command("delete")
@click.argument("name")
@_version_option()
@click.option("--force", is_flag=True, help="Delete it even while a blueprint uses it (as cfy plugins delete --force).")
@format_option()
def delete(name, version, force, fmt):
    """Delete a plugin version; one a blueprint uses only with --force (Cloudify's plugin_in_use)."""
    show_record(plugins().delete(name, version, force), fmt)


@plugin.command("set-visibility")
@click.argument("name")
@click.argument("visibility", type=click.Choice(VISIBILITIES[1:]))
@_version_option()
@format_option()
def set_visibility(name, visibility, version, fmt):
    """Widen the plugin's visibility (tenant or global; as cfy plugins set-visibility / set-global)."""
    show_record(plugins().set_visibility(name, version, visibility), fmt)
