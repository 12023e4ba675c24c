"""Which sections, keys, functions and condition functions each HOT version has.

This module is the one place that decides it.  Each version lists its
functions by name, mapped to ``module:Class`` in ``stoker.functions``; the
classes are imported on first use.  Versions build on their predecessor:
``added`` functions (or new implementations of old names), ``removed`` ones
(which become errors naming the version, as in Heat).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from stoker.functions.descriptions import HEAT_DESCRIPTIONS

_CFN_FUNCTIONS = {
    "Fn::Base64": "cfn:Base64",
    "Fn::GetAZs": "cfn:GetAZs",
    "Fn::Join": "cfn:Join",
    "Fn::MemberListToMap": "cfn:MemberListToMap",
    "Fn::Replace": "cfn:Replace",
    "Fn::ResourceFacade": "cfn:ResourceFacade",
    "Fn::Select": "cfn:Select",
    "Fn::Split": "cfn:Split",
    "Ref": "cfn:Ref",
}

_BASE_SECTIONS = (
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
)
_BASE_RESOURCE_KEYS = (
    "type",
    "properties",
    "metadata",
    "depends_on",
    "deletion_policy",
    "update_policy",
    "description",
)
# ``immutable`` is documented from 2017-02-24, but Heat accepts it in every version
_BASE_PARAMETER_KEYS = ("type", "label", "description", "default", "hidden", "constraints", "immutable")


@dataclass
class Version:
    """One ``heat_template_version``."""

    date: str
    aliases: tuple[str, ...]
    function_paths: dict[str, str]
    condition_function_paths: dict[str, str]
    sections: tuple[str, ...]
    resource_keys: tuple[str, ...]
    output_keys: tuple[str, ...]
    parameter_keys: tuple[str, ...]
    deletion_policies: tuple[str, ...]
    notes: str = ""
    removed: frozenset[str] = field(default_factory=frozenset)
    #: the top-level key that names the version: CFN-format templates have their own
    format_key: str = "heat_template_version"

    @property
    def name(self) -> str:
        return self.date

    @property
    def is_cfn(self) -> bool:
        return self.format_key != "heat_template_version"

    @property
    def has_conditions(self) -> bool:
        return "conditions" in self.sections

    @cached_property
    def functions(self) -> Mapping[str, type]:
        """Function name -> class, including ``Removed`` for dropped names."""
        return _Classes(self.function_paths)

    @cached_property
    def condition_parse_table(self) -> Mapping[str, type]:
        """What a map key means inside ``conditions``: every function of the
        version that is not a condition function is there, but invalid."""
        paths = {name: (path if name in self.removed else "base:Invalid")
                 for name, path in self.function_paths.items()}
        paths.update(self.condition_function_paths)
        return _Classes(paths)

    def function_names(self, with_removed: bool = False) -> list[str]:
        return sorted(n for n in self.function_paths if with_removed or n not in self.removed)

    def condition_function_names(self) -> list[str]:
        return sorted(self.condition_function_paths)


class _Classes(Mapping):
    """Name -> class, each module imported at the first lookup of one of its
    names: a template without ``yaql`` never pays for importing yaql."""

    def __init__(self, paths: dict[str, str]):
        self._paths = paths
        self._loaded: dict[str, type] = {}

    def __getitem__(self, name: str) -> type:
        cls = self._loaded.get(name)
        if cls is None:
            cls = self._loaded[name] = _load(self._paths[name])
        return cls

    def get(self, name: str, default: Any = None) -> Any:
        """The parser's lookup for every one-key map, kept to one dict probe when loaded."""
        cls = self._loaded.get(name)
        if cls is None:
            return self[name] if name in self._paths else default
        return cls

    def __contains__(self, name: object) -> bool:
        return name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _load(path: str) -> type:
    module, _, cls = path.partition(":")
    return getattr(importlib.import_module(f"stoker.functions.{module}"), cls)


def _build() -> list[Version]:
    versions: list[Version] = []

    def add(date, aliases=(), added=None, removed=(), conditions=None, sections=(),
            resource_keys=(), output_keys=(), parameter_keys=(), deletion_policies=(), notes=""):
        prev = versions[-1] if versions else None
        functions = dict(prev.function_paths) if prev else {}
        functions.update(added or {})
        gone = set(prev.removed) if prev else set()
        for name in removed:
            functions[name] = "base:Removed"
            gone.add(name)
        versions.append(
            Version(
                date=date,
                aliases=tuple(aliases),
                function_paths=functions,
                condition_function_paths=(
                    conditions if conditions is not None
                    else dict(prev.condition_function_paths) if prev else {}
                ),
                sections=(prev.sections if prev else _BASE_SECTIONS) + tuple(sections),
                resource_keys=(prev.resource_keys if prev else _BASE_RESOURCE_KEYS)
                + tuple(resource_keys),
                output_keys=(prev.output_keys if prev else ("description", "value"))
                + tuple(output_keys),
                parameter_keys=(prev.parameter_keys if prev else _BASE_PARAMETER_KEYS)
                + tuple(parameter_keys),
                deletion_policies=(prev.deletion_policies if prev else ("Delete", "Retain", "Snapshot"))
                + tuple(deletion_policies),
                notes=notes,
                removed=frozenset(gone),
            )
        )

    add(
        "2013-05-23",
        added={
            **_CFN_FUNCTIONS,
            "get_attr": "references:GetAttThenSelect",
            "get_file": "references:GetFile",
            "get_param": "references:GetParam",
            "get_resource": "references:GetResource",
            "list_join": "strings:Join",
            "resource_facade": "references:ResourceFacade",
            "str_replace": "strings:Replace",
        },
        notes="Icehouse; HOT functions plus the CloudFormation-compatible ones",
    )
    add(
        "2014-10-16",
        added={"get_attr": "references:GetAtt"},
        removed=[n for n in _CFN_FUNCTIONS if n != "Fn::Select"],
        notes="Juno; CFN functions removed except Fn::Select",
    )
    add(
        "2015-04-30",
        added={"digest": "strings:Digest", "repeat": "collections:Repeat"},
        notes="Kilo; adds repeat and digest",
    )
    add(
        "2015-10-15",
        added={
            "get_attr": "references:GetAttAllAttributes",
            "list_join": "strings:JoinMultiple",
            "str_replace": "strings:ReplaceJson",
            "str_split": "strings:StrSplit",
        },
        removed=["Fn::Select"],
        notes="Liberty; adds str_split, multi-list list_join, get_attr of all attributes",
    )
    add(
        "2016-04-08",
        added={"map_merge": "collections:MapMerge"},
        notes="Mitaka; adds map_merge",
    )
    add(
        "2016-10-14",
        aliases=["newton"],
        added={
            "repeat": "collections:RepeatWithMap",
            "yaql": "yaql_function:Yaql",
            "map_replace": "collections:MapReplace",
            "if": "logic:If",
        },
        conditions={
            "get_param": "references:GetParam",
            "equals": "logic:Equals",
            "not": "logic:Not",
            "and": "logic:And",
            "or": "logic:Or",
        },
        sections=["conditions"],
        resource_keys=["external_id", "condition"],
        output_keys=["condition"],
        deletion_policies=["delete", "retain", "snapshot"],
        notes="Newton; adds conditions, if, yaql, map_replace",
    )
    add(
        "2017-02-24",
        aliases=["ocata"],
        added={"filter": "collections:Filter", "str_replace_strict": "strings:ReplaceJsonStrict"},
        notes="Ocata; adds filter, str_replace_strict",
    )
    add(
        "2017-09-01",
        aliases=["pike"],
        added={
            "repeat": "collections:RepeatWithNestedLoop",
            "make_url": "strings:MakeURL",
            "list_concat": "collections:ListConcat",
            "list_concat_unique": "collections:ListConcatUnique",
            "contains": "collections:Contains",
            "str_replace_vstrict": "strings:ReplaceJsonVeryStrict",
        },
        conditions={
            "get_param": "references:GetParam",
            "equals": "logic:Equals",
            "not": "logic:Not",
            "and": "logic:And",
            "or": "logic:Or",
            "yaql": "yaql_function:Yaql",
            "contains": "collections:Contains",
        },
        notes="Pike; adds make_url, list_concat(_unique), contains, str_replace_vstrict",
    )
    add("2018-03-02", aliases=["queens"], parameter_keys=["tags"], notes="Queens; parameter tags")
    add("2018-08-31", aliases=["rocky"], notes="Rocky")
    add(
        "2021-04-16",
        aliases=["wallaby"],
        added={"if": "logic:IfNullable"},
        notes="Wallaby; if with one value removes the key or item when false",
    )
    return versions


#: Heat's CloudFormation-format templates, read in their HOT shape (see template/cfn_format.py)
_CFN_COMMON = {**_CFN_FUNCTIONS, "Fn::FindInMap": "cfn:FindInMap", "Fn::GetAtt": "cfn:GetAtt"}
_CFN_SECTIONS = ("description", "mappings", "parameters", "resources", "outputs")


def _build_cfn() -> list[Version]:
    common = dict(aliases=(), parameter_keys=_BASE_PARAMETER_KEYS,
                  deletion_policies=("Delete", "Retain", "Snapshot"))
    return [
        Version(date="2010-09-09", format_key="AWSTemplateFormatVersion",
                function_paths={**_CFN_COMMON, "Fn::If": "logic:If"},
                condition_function_paths={
                    "Fn::Equals": "logic:Equals", "Fn::Not": "cfn:Not", "Fn::And": "cfn:And",
                    "Fn::Or": "cfn:Or", "Ref": "cfn:ParamRef", "Fn::FindInMap": "cfn:FindInMap"},
                sections=_CFN_SECTIONS + ("conditions",), resource_keys=_BASE_RESOURCE_KEYS + ("condition",),
                output_keys=("description", "value", "condition"),
                notes="CloudFormation format, with Conditions", **common),
        Version(date="2012-12-12", format_key="HeatTemplateFormatVersion",
                function_paths=dict(_CFN_COMMON), condition_function_paths={},
                sections=_CFN_SECTIONS, resource_keys=_BASE_RESOURCE_KEYS, output_keys=("description", "value"),
                notes="Heat's CloudFormation format", **common),
    ]


VERSIONS: list[Version] = _build()
CFN_VERSIONS: list[Version] = _build_cfn()
_BY_NAME: dict[str, Version] = {}
for _v in VERSIONS:
    _BY_NAME[_v.date] = _v
    for _alias in _v.aliases:
        _BY_NAME[_alias] = _v


def get_version(name: Any) -> Version | None:
    return _BY_NAME.get(str(name))


def get_cfn_version(format_key: str, name: Any) -> Version | None:
    """The CFN-format version ``format_key: name`` (``AWSTemplateFormatVersion: 2010-09-09``)."""
    return next((v for v in CFN_VERSIONS if v.format_key == format_key and v.date == str(name)), None)


def listed_versions() -> list[dict]:
    """Every version as Heat's API lists it: ``{version, type, aliases}`` with qualified names."""
    rows = [{"version": f"{v.format_key}.{v.date}", "type": "cfn", "aliases": []} for v in CFN_VERSIONS]
    rows += [{"version": f"heat_template_version.{v.date}", "type": "hot",
              "aliases": [f"heat_template_version.{a}" for a in v.aliases]} for v in VERSIONS]
    return rows


def find_version(qualified: str) -> Version | None:
    """A version by its qualified name (``AWSTemplateFormatVersion.2010-09-09``) or HOT date/alias."""
    key, _, name = qualified.partition(".")
    cfn = get_cfn_version(key, name) if name else None
    return cfn or get_version(qualified.removeprefix("heat_template_version."))


def template_version(data: Any) -> tuple[str, Any, Version | None]:
    """(the key naming the version, its value, the Version) of template data."""
    for key in ("heat_template_version", *(v.format_key for v in CFN_VERSIONS)):
        if isinstance(data, dict) and key in data:
            value = data[key]
            found = get_version(value) if key == "heat_template_version" else get_cfn_version(key, value)
            return key, value, found
    return "heat_template_version", None, None


def first_version_with(function_name: str) -> str | None:
    """The first version where ``function_name`` is a live function, if any."""
    for version in VERSIONS:
        if function_name in version.function_paths and function_name not in version.removed:
            return version.date
    return None


def function_rows(version: Version, with_conditions: bool = False) -> list[dict]:
    """``template function list`` (CLI and API): each function once, with Heat's description
    of the class it is bound to; ``with_conditions`` merges in the condition functions as Heat
    does (a name in both tables is described by its condition class, e.g. CFN's ``Ref``)."""
    paths = {name: version.function_paths[name] for name in version.function_names()}
    if with_conditions:
        paths.update((name, version.condition_function_paths[name])
                     for name in version.condition_function_names())
    return [{"functions": name, "description": HEAT_DESCRIPTIONS[path]} for name, path in paths.items()]
