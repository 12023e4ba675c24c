"""Which newer plugin versions a blueprint's plan may move to (``cfy plugins update``), as Cloudify picks them.

Each plugin of the plan (named by its ``package_name``) goes to the newest version of the catalog, or, asked
``to_minor``, the newest of the same major version; ``plugin_names`` narrows the update to those.  The
``mapping`` of the rest client's ``update_plugins`` (``{"updates": [{IMPORT_LINE: {"plugin_name": NAME,
"suggested_version": VERSION}}]}``) pins a plugin to exactly that version, older or newer, as Cloudify's
resolver does; its import line is not compared (Stoker's plans do not keep them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from stoker.blueprint.plugin_catalog import version_key


@dataclass(frozen=True)
class Wanted:
    """The update's choices, as the rest client's ``update_plugins`` sends them."""

    plugin_names: tuple[str, ...] = ()
    to_latest: tuple[str, ...] = ()
    to_minor: tuple[str, ...] = ()
    all_to_minor: bool = False
    #: (package name, version) pairs of the ``mapping``
    pinned: tuple[tuple[str, str], ...] = ()

    def minor(self, name: str) -> bool:
        return name in self.to_minor or (self.all_to_minor and name not in self.to_latest)


def _major(version: str) -> tuple:
    return version_key(version)[:1]


def changes(plan: dict, held: Iterable[tuple[str, str]], wanted: Wanted) -> dict[str, list[str]]:
    """package name -> [its version in ``plan``, the version to run], for each plugin that moves; ``held``:
    (name, version) of every plugin the caller's catalog holds (``ValueError``: a pinned version it lacks)."""
    pinned = dict(wanted.pinned)
    versions: dict[str, list[str]] = {}
    for name, version in held:
        versions.setdefault(name, []).append(version)
    moved = {}
    for definition in (plan.get("plugins") or {}).values():
        if not isinstance(definition, dict) or not definition.get("package_name"):
            continue
        name, current = str(definition["package_name"]), str(definition.get("package_version") or "")
        if not current or (wanted.plugin_names and name not in wanted.plugin_names):
            continue
        if name in pinned:
            if pinned[name] not in versions.get(name, ()):
                raise ValueError(f"No matching version was found for plugin {name} and version(s) =={pinned[name]}")
            if pinned[name] != current:
                moved[name] = [current, pinned[name]]
            continue
        newer = [v for v in versions.get(name, ()) if version_key(v) > version_key(current)
                 and (not wanted.minor(name) or _major(v) == _major(current))]
        if newer:
            moved[name] = [current, max(newer, key=version_key)]
    return moved


def wanted_from(body: Any) -> Wanted:
    """The choices of the initiate request's body (``ValueError``: one is not what the client sends)."""
    body = body if isinstance(body, dict) else {}

    def names(key: str) -> tuple[str, ...]:
        value = body.get(key) or ()
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} is a list of plugin names")
        return tuple(value)

    return Wanted(names("plugin_names"), names("to_latest"), names("to_minor"), bool(body.get("all_to_minor")),
                  _pinned(body.get("mapping")))


def _pinned(mapping: Any) -> tuple[tuple[str, str], ...]:
    """(name, version) of each of the mapping's updates (``ValueError``: not the shape the client sends)."""
    shape = 'mapping is {"updates": [{IMPORT_LINE: {"plugin_name": NAME, "suggested_version": VERSION}}]}'
    if mapping and not isinstance(mapping, dict):
        raise ValueError(shape)
    pinned = []
    for update in (mapping or {}).get("updates") or []:
        for line in update.values() if isinstance(update, dict) else [None]:
            if not (isinstance(line, dict) and isinstance(line.get("plugin_name"), str)
                    and isinstance(line.get("suggested_version"), str)):
                raise ValueError(shape)
            pinned.append((line["plugin_name"], line["suggested_version"]))
    return tuple(pinned)
