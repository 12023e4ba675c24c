"""Which newer plugin versions a blueprint's plan may move to (``cfy plugins update``), as Cloudify picks them.

Each plugin of the plan (named by its ``package_name``) goes to the newest version of the catalog, or, asked
``to_minor``, the newest of the same major version; ``plugin_names`` narrows the update to those.
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

    def minor(self, name: str) -> bool:
        return name in self.to_minor or (self.all_to_minor and name not in self.to_latest)


def _major(version: str) -> tuple:
    return version_key(version)[:1]


def changes(plan: dict, held: Iterable[tuple[str, str]], wanted: Wanted) -> dict[str, list[str]]:
    """package name -> [its version in ``plan``, the version to run], for each plugin that moves; ``held``:
    (name, version) of every plugin the caller's catalog holds."""
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

    return Wanted(names("plugin_names"), names("to_latest"), names("to_minor"), bool(body.get("all_to_minor")))
