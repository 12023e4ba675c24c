"""Where an import that is not a relative path comes from: never the network.

``plugin:NAME`` and ``plugin:NAME?version=V`` are the uploaded plugin's YAML for
the blueprint's DSL version; a plugin's published URL (``getcloudify.org/spec/
X-plugin/...``, a GitHub release or raw file of ``cloudify-X-plugin``) is the
uploaded plugin of that name; ``[imports] rules`` in ``stoker.conf`` map other
URL prefixes to local folders, one ``PREFIX FOLDER`` a line; ``blueprint:ID`` is the
main file of blueprint ID as uploaded to the project (``UPLOADED_BLUEPRINTS``, set by
whoever parses for a project: the loader knows no store).
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from stoker.blueprint.plugin_catalog import PluginCatalog
from stoker.home import config

BLUEPRINT_PREFIX = "blueprint:"
#: blueprint id -> the uploaded blueprint's main file (its files on disk), or None when there is none
UPLOADED_BLUEPRINTS: ContextVar[Callable[[str], Path | None] | None] = ContextVar("uploaded_blueprints",
                                                                                 default=None)

#: the store whose plugin catalog ``plugin:NAME`` reads (set with ``UPLOADED_BLUEPRINTS``); None: the home's only
PLUGIN_STORE: ContextVar[Any] = ContextVar("plugin_store", default=None)
#: who reads it (``store.plugin_packages.Viewer``: the project parsing, which sees its own plugins and global ones)
PLUGIN_VIEWER: ContextVar[Any] = ContextVar("plugin_viewer", default=None)
#: plugin name -> the version its imports read whatever version they name (a plugins update parsing again)
PLUGIN_VERSIONS: ContextVar[dict[str, str]] = ContextVar("plugin_versions", default={})

_PLUGIN_URLS = (re.compile(r"getcloudify\.org/spec/(?P<short>[A-Za-z0-9_]+)-plugin/(?P<version>[^/]+)/"),
                re.compile(r"/(?P<name>cloudify-[A-Za-z0-9_-]+-plugin)/(releases/download/)?(?P<version>[^/]+)/"))


@dataclass
class ImportResolver:
    catalog: PluginCatalog
    #: (URL prefix, local folder), longest prefix first
    rules: list[tuple[str, Path]] = field(default_factory=list)

    @classmethod
    def from_home(cls) -> "ImportResolver":
        """The catalog in ``$STOKER_HOME/plugins`` and the rules of ``stoker.conf``."""
        rules = []
        for line in config().get("imports", "rules", fallback="").splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2:
                rules.append((parts[0], Path(parts[1]).expanduser()))
        catalog = PluginCatalog.at_home(store=PLUGIN_STORE.get(), viewer=PLUGIN_VIEWER.get())
        return cls(catalog, sorted(rules, key=lambda r: -len(r[0])))

    def resolve(self, url: str, dsl_version: tuple[int, int] | None) -> tuple[Path | None, str]:
        """``(local file, "")`` or ``(None, why not)``."""
        if url.startswith("plugin:"):
            return self._plugin(url, dsl_version)
        if url.startswith(BLUEPRINT_PREFIX):
            return self._blueprint(url[len(BLUEPRINT_PREFIX):].strip())
        for prefix, folder in self.rules:
            if url.startswith(prefix):
                path = folder / url[len(prefix):].lstrip("/")
                return (path, "") if path.is_file() else (None, f"the rule for {prefix} gives {path}, "
                                                                 "which does not exist")
        for pattern in _PLUGIN_URLS:
            found = pattern.search(url)
            if found:
                name = found.groupdict().get("name") or f"cloudify-{found['short']}-plugin"
                plugin = self.catalog.find(name, PLUGIN_VERSIONS.get().get(name, found["version"])) \
                    or self.catalog.find(name)
                if plugin is None:
                    return None, f"plugin {name} is not uploaded (stoker plugin upload)"
                return plugin.yaml_for(dsl_version, url.rsplit("/", 1)[-1]), ""
        return None, "imports over the network are not fetched (use a relative path, the standard types URL, " \
                     "plugin:NAME of an uploaded plugin, or an [imports] rule)"

    @staticmethod
    def _blueprint(blueprint_id: str) -> tuple[Path | None, str]:
        find = UPLOADED_BLUEPRINTS.get()
        main = find(blueprint_id) if find is not None and blueprint_id else None
        if main is None:
            return None, (f"Requested blueprint import `{blueprint_id}` was not found, please first upload the "
                          "blueprint with that id" + ("" if find else " (blueprint: imports need a blueprint "
                                                                      "upload, not a validation of a file)"))
        return main, ""

    def _plugin(self, url: str, dsl_version: tuple[int, int] | None) -> tuple[Path | None, str]:
        parts = urlsplit(url[len("plugin:"):])
        name, version = parts.path, (parse_qs(parts.query).get("version") or [None])[0]
        version = PLUGIN_VERSIONS.get().get(name, version)
        plugin = self.catalog.find(name, version)
        if plugin is None:
            which = f"{name} {version}" if version else name
            return None, f"plugin {which} is not uploaded (stoker plugin upload)"
        found = plugin.yaml_for(dsl_version)
        return (found, "") if found else (None, f"plugin {name} has no plugin YAML")
