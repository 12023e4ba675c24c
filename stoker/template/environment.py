"""Environment files: parameters, parameter_defaults, resource_registry, ...

Several environments merge in order, later ones winning, as with Heat's
``-e a.yaml -e b.yaml``.  ``parameter_merge_strategies`` says how one
parameter's values combine (``overwrite``, ``merge`` for lists/maps/strings,
``deep_merge`` for maps).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stoker.errors import Problems, ValidationFailed
from stoker.template.loader import Source, load, read_file

SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "encrypted_param_names",
    "parameter_merge_strategies",
)
MERGE_STRATEGIES = ("overwrite", "merge", "deep_merge")
#: Stoker's own settings a user may try in an environment, where Heat (which refuses unknown
#: sections) would refuse the file: where they go instead
_ELSEWHERE = {"faults": " (injected faults go in the cloud inventory: --inventory FILE)"}


@dataclass
class Environment:
    parameters: dict = field(default_factory=dict)
    parameter_defaults: dict = field(default_factory=dict)
    resource_registry: dict = field(default_factory=dict)
    encrypted_param_names: list = field(default_factory=list)
    parameter_merge_strategies: dict = field(default_factory=dict)
    event_sinks: list = field(default_factory=list)
    #: where each environment came from, for error messages
    sources: list[Source] = field(default_factory=list)
    warnings: list = field(default_factory=list)
    #: problems found while loading environment files (reported with the template's)
    errors: list = field(default_factory=list)

    def parameter_values(self, declared: set[str]) -> dict:
        """Values for a template's parameters: its parameter_defaults, then parameters."""
        values = {k: v for k, v in self.parameter_defaults.items() if k in declared}
        values.update(self.parameters)
        return values

    def as_dict(self) -> dict:
        return {
            "parameters": self.parameters,
            "parameter_defaults": self.parameter_defaults,
            "resource_registry": self.resource_registry,
            "encrypted_param_names": self.encrypted_param_names,
            "parameter_merge_strategies": self.parameter_merge_strategies,
            "event_sinks": self.event_sinks,
        }

    @classmethod
    def from_dict(cls, data: dict | None) -> "Environment":
        env = cls()
        if data:
            env.merge(data, Problems())
        return env

    def merge(self, data: Any, problems: Problems, name: str = "<environment>") -> None:
        """Merge one environment's data into this one, reporting bad sections."""
        if data is None:
            return
        if not isinstance(data, dict):
            problems.add((), "invalid-environment", f"{name}: an environment must be a map of sections")
            return
        for section, value in data.items():
            if section not in SECTIONS:
                problems.add((section,), "unknown-section",
                             f'"{section}" is not a valid environment section; valid: {", ".join(SECTIONS)}'
                             + _ELSEWHERE.get(section, ""))
                continue
            if value is None:
                continue
            expected = list if section in ("encrypted_param_names", "event_sinks") else dict
            if not isinstance(value, expected):
                problems.add((section,), "invalid-section",
                             f'environment section "{section}" must be a {"list" if expected is list else "map"}')
                continue
            if section == "event_sinks":
                problems.warn((section,), "ignored-section",
                              "event_sinks are not supported by Stoker and are ignored")
                self.event_sinks.extend(value)
            elif section == "parameter_merge_strategies":
                for key, strategy in value.items():
                    if strategy not in MERGE_STRATEGIES:
                        problems.add((section, key), "invalid-merge-strategy",
                                     f'"{strategy}" is not a merge strategy; use one of {", ".join(MERGE_STRATEGIES)}')
                self.parameter_merge_strategies.update(value)
            elif section == "encrypted_param_names":
                self.encrypted_param_names.extend(v for v in value if v not in self.encrypted_param_names)
            elif section == "resource_registry":
                _merge_registry(self.resource_registry, value)
            else:
                target = getattr(self, section)
                strategies = data.get("parameter_merge_strategies") or self.parameter_merge_strategies
                for key, new in value.items():
                    if key in target:
                        target[key] = merge_value(target[key], new, _strategy(strategies, key))
                    else:
                        target[key] = copy.deepcopy(new)


TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")


def is_template_type(type_name: str) -> bool:
    """Heat's rule: a type naming a .yaml/.template file is a provider template."""
    return type_name.endswith(TEMPLATE_SUFFIXES)


class RegistryLoop(Exception):
    pass


def resolve_type(registry: dict, resource_name: str, type_name: str, inside: str | None = None) -> str:
    """Follow ``resource_registry`` mappings for one resource to the type that runs it.

    Per-resource mappings (``resources: {name: {Type: Other}}``) come first,
    then exact global mappings, then wildcards (``"My::*": "Other::*"``, the
    longest prefix wins); a mapping's result is mapped again until it maps
    no further.  The result is a plug-in type name or a template (path/URL).
    A mapping to ``inside``, the provider template the resource is in, is
    skipped, as in Heat: a template overriding a type may use that type.
    """
    if not registry:  # the usual case: nothing is mapped
        return type_name
    seen = []
    current = type_name
    while True:
        mapped = _mapped_once(registry, resource_name, current)
        if mapped is None or mapped == current or (inside is not None and mapped == inside):
            return current
        if mapped in seen:
            raise RegistryLoop(" -> ".join([*seen, current, mapped]))
        seen.append(current)
        current = mapped


def _mapped_once(registry: dict, resource_name: str, type_name: str) -> str | None:
    per_resource = (registry.get("resources") or {}).get(resource_name) or {}
    for table in (per_resource, registry):
        target = table.get(type_name)
        if isinstance(target, str):
            return target
        best = None
        for pattern, target in table.items():
            if (isinstance(pattern, str) and pattern.endswith("*") and isinstance(target, str)
                    and type_name.startswith(pattern[:-1])
                    and (best is None or len(pattern) > len(best[0]))):
                best = (pattern, target)
        if best is not None:
            pattern, target = best
            suffix = type_name[len(pattern) - 1:]
            return target[:-1] + suffix if target.endswith("*") else target
    return None


def _per_resource(registry: dict, resource_name: str, key: str) -> set[str]:
    """The union of ``key`` (a name or a list) over ``resources: {name-or-glob: {key: ...}}``."""
    import fnmatch

    found: set[str] = set()
    for pattern, entry in (registry.get("resources") or {}).items():
        if isinstance(entry, dict) and fnmatch.fnmatchcase(resource_name, str(pattern)):
            values = entry.get(key) or []
            found.update([values] if isinstance(values, str) else values)
    return found


def child_registry(registry: dict, resource_name: str) -> dict:
    """The registry a nested stack made by resource ``resource_name`` sees, as Heat's
    ``remove_resources_except``: its ``resources`` are the entries for that resource
    (wildcards matching it, then its own), so ``resources: {nested: {inner: {hooks: ...}}}``
    sets hooks on ``inner`` inside ``nested``."""
    import fnmatch

    entries = registry.get("resources") or {}
    if not isinstance(entries, dict) or not entries:
        return registry
    inner: dict = {}
    for pattern, entry in entries.items():
        if isinstance(entry, dict) and fnmatch.fnmatchcase(resource_name, str(pattern)):
            inner.update(entry)
    if isinstance(entries.get(resource_name), dict):
        inner.update(entries[resource_name])
    return {**registry, "resources": inner}


def hooks_for(registry: dict, resource_name: str) -> set[str]:
    """Breakpoints set on a resource: ``resources: {name-or-glob: {hooks: [...]}}``."""
    return _per_resource(registry, resource_name, "hooks")


def restricted_actions_for(registry: dict, resource_name: str) -> set[str]:
    """What an update may not do to a resource (``update``, ``replace``):
    ``resources: {name-or-glob: {restricted_actions: [...]}}``."""
    return _per_resource(registry, resource_name, "restricted_actions")


def _strategy(strategies: dict, key: str) -> str:
    return strategies.get(key) or strategies.get("default") or "overwrite"


def merge_value(old: Any, new: Any, strategy: str) -> Any:
    """Combine two values of one parameter by ``strategy``, as Heat does.

    ``merge``: maps are merged (later keys win), lists extended, strings
    concatenated, numbers added.  ``deep_merge``: maps merged recursively, the
    same rules applying inside them.
    """
    if strategy == "overwrite" or old is None:
        return copy.deepcopy(new)
    if isinstance(old, dict) and isinstance(new, dict):
        merged = copy.deepcopy(old)
        for key, value in new.items():
            if value is None:
                continue
            if strategy == "deep_merge" and merged.get(key) and not isinstance(value, (int, float, bool)):
                merged[key] = merge_value(merged[key], value, "deep_merge")
            else:
                merged[key] = copy.deepcopy(value)
        return merged
    if isinstance(old, list):
        return old + (list(new) if isinstance(new, list) else [new])
    if isinstance(old, str) and isinstance(new, list):
        return ",".join([old, *map(str, new)]) if old else list(new)
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool) \
            and not isinstance(new, bool):
        return old + new
    return copy.deepcopy(new)


def _merge_registry(target: dict, new: dict) -> None:
    for key, value in new.items():
        if key == "resources" and isinstance(value, dict):
            resources = target.setdefault("resources", {})
            for rname, mapping in value.items():
                if isinstance(mapping, dict) and isinstance(resources.get(rname), dict):
                    resources[rname].update(mapping)
                else:
                    resources[rname] = copy.deepcopy(mapping)
        else:
            target[key] = copy.deepcopy(value)


def load_environments(paths: list[str | Path]) -> Environment:
    """Load and merge environment files in order; raise with every problem found."""
    env = Environment()
    all_problems = []
    for path in paths:
        path = Path(path)
        try:
            text = read_file(path).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed.single((), "unreadable-file", f"cannot read {path}: not UTF-8 text ({exc})")
        source = Source(text, str(path))
        problems = Problems()
        env.merge(load(text, str(path)), problems, str(path))
        env.sources.append(source)
        all_problems.extend(source.place(p) for p in problems.items)
    errors = [p for p in all_problems if p.severity == "error"]
    if errors:
        raise ValidationFailed(all_problems)
    env.warnings = [p for p in all_problems if p.severity != "error"]
    return env
