"""``stoker plugin ...``: the plugin catalog that ``plugin:NAME`` imports read (as ``cfy plugins``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import current_settings

if TYPE_CHECKING:  # pragma: no cover - archives and packaging load with a plugin command only
    from stoker.blueprint.plugin_catalog import PluginCatalog

PLUGIN_COLUMNS = ["package_name", "package_version", "yaml_files", "package"]


def catalog() -> PluginCatalog:
    """The catalog of the command's database (workers sharing it run the plugins), unpacked in $STOKER_HOME."""
    from stoker.blueprint.plugin_catalog import PluginCatalog

    settings = current_settings()
    return PluginCatalog.at_home(create=True, store=None if settings.remote else settings.engine().store)


@click.group()
def plugin() -> None:
    """Upload Cloudify plugins (wagons, wheels, source folders) for plugin: imports."""


@plugin.command("upload")
@click.argument("package", type=click.Path(exists=True, path_type=Path))
@click.option("-y", "--yaml-path", "yamls", multiple=True, type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="A plugin YAML (plugin.yaml, plugin_1_4.yaml, plugin_1_5.yaml); repeat for "
              "several. A source folder's own plugin*.yaml are taken when none is given.")
@format_option()
def upload(package, yamls, fmt):
    """Upload PACKAGE: a wagon (.wgn), a wheel (.whl) or a plugin's source folder."""
    show_record(catalog().upload(package, list(yamls)).as_dict(), fmt)


@plugin.command("list")
@format_option()
def list_(fmt):
    show_list([p.as_dict() for p in catalog().list()], PLUGIN_COLUMNS, fmt)


@plugin.command("delete")
@click.argument("name")
@click.option("--version", default=None, help="The version to delete (default: the newest).")
@format_option()
def delete(name, version, fmt):
    show_record(catalog().delete(name, version).as_dict(), fmt)
