"""Blueprint text in, one merged document out: YAML with Cloudify's rules, and ``imports``.

Blueprint text must be ASCII (inputs may carry any Unicode), as in Cloudify.
An import is a path relative to the importing file, or the well-known
standard-types URL, which resolves to Stoker's built-in definition; ``plugin:``
and other URLs resolve locally (``import_resolver``): nothing is ever fetched
over the network. ``ns--file.yaml`` imports into a namespace (``namespaces``);
``ns--blueprint:ID`` imports an uploaded blueprint, always into a namespace of its own,
its script paths prefixed ``ns--`` (run from that blueprint's files).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stoker.blueprint import import_properties, namespaces, versions
from stoker.blueprint.import_resolver import BLUEPRINT_PREFIX, ImportResolver
from stoker.blueprint.namespaces import CLOUDIFY_PREFIX  # any file may define these names again
from stoker.errors import Problem, ValidationFailed
from stoker.template.loader import Source, load

BUILTIN_TYPES = Path(__file__).with_name("builtin_types.yaml")
#: the standard types at every address Cloudify's resolver maps to its own copy (4.x to 7.x)
_WELL_KNOWN = re.compile(r"^(https?://(www\.)?(getcloudify\.org|cloudify\.co)/spec/cloudify/[0-9][^/]*/types\.yaml"
                         r"|cloudify/types/types\.yaml)$")
#: sections whose entries are merged from imports, each name defined once
MERGED_SECTIONS = ("inputs", "data_types", "node_types", "relationships", "plugins", "workflows",
                   "node_templates", "groups", "policies", "outputs", "capabilities", "policy_types",
                   "labels", "blueprint_labels", "resource_tags")
#: sections where the first definition of a name wins, as Cloudify keeps it (every plugin YAML of
#: DSL 1.4/1.5 declares its labels): a later one is no conflict; elsewhere a name two files define
#: is one, the same definition too (dsl_parser's _merge_into_dict_or_throw_on_duplicate)
FIRST_WINS = ("labels", "blueprint_labels", "resource_tags")
#: sections that belong to their own file (YAML anchors): never merged into the importer
PER_FILE = ("tosca_definitions_version", "dsl_definitions")
DSL_VERSION = re.compile(r"^cloudify_dsl_1_([0-5])$")
MAX_IMPORTS = 100
#: blueprints have no Heat-style size limit; this one only bounds memory and time
MAX_BLUEPRINT_SIZE = 16 * 1024 * 1024
#: deeper values are refused: every walk over a blueprint may then recurse safely
MAX_DEPTH = 100


@dataclass
class Loaded:
    """The merged document and the sources it came from (to place errors)."""

    document: dict
    main: Source
    problems: list[Problem] = field(default_factory=list)
    #: the main file's DSL version, when it names a known one
    version: tuple[int, int] | None = None
    #: where plugin: and URL imports come from (made when the first one is met)
    resolver: ImportResolver | None = None
    #: ``blueprint:`` imports: namespace -> (blueprint id, its folder)
    blueprints: dict[str, tuple[str, Path]] = field(default_factory=dict)


def _ascii_problem(text: str, name: str) -> Problem | None:
    if text.isascii():
        return None
    for number, line in enumerate(text.splitlines(), 1):
        for column, char in enumerate(line, 1):
            if ord(char) > 127:
                return Problem((), "non-ascii", f"illegal character {char!r}: only ASCII is accepted in "
                                                "blueprint text (inputs may hold any text)", name, number, column)
    return None


def load_text(text: str, name: str) -> tuple[Any, list[Problem]]:
    problem = _ascii_problem(text, name)
    if problem:
        return None, [problem]
    try:
        data = load(text, name, max_size=MAX_BLUEPRINT_SIZE)
    except ValidationFailed as exc:
        return None, exc.problems
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [Problem((), "invalid-blueprint", "a blueprint is a mapping of sections", name, 1, 1)]
    if _too_deep(data):
        return None, [Problem((), "too-deep", f"values are nested more than {MAX_DEPTH} levels deep", name)]
    return data, []


def _too_deep(value: Any, depth: int = 1) -> bool:
    """Whether containers nest deeper than ``MAX_DEPTH`` (recursion stops there; aliases were
    bounded by the YAML loader already)."""
    if depth > MAX_DEPTH:
        return True
    if isinstance(value, dict):
        return any(_too_deep(v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
    if isinstance(value, list):
        return any(_too_deep(v, depth + 1) for v in value if isinstance(v, (dict, list)))
    return False


def load_blueprint(text: str, name: str = "blueprint.yaml", base: Path | None = None) -> Loaded:
    """Load ``text`` and everything it imports, merged; problems are collected, never raised."""
    main = Source(text, name)
    data, problems = load_text(text, name)
    loaded = Loaded(data or {}, main, problems, dsl_version(data))
    if loaded.version:
        loaded.problems.extend(versions.version_problems(data, loaded.version, name))
    if data is not None:
        _merge_imports(loaded, data, name, base, seen={(None, name)}, depth=0)
    return loaded


@functools.lru_cache(maxsize=1)
def builtin_names() -> frozenset[str]:
    """The names the standard types define (never namespaced)."""
    data = builtin_document()
    return frozenset(name for section in namespaces.NAMED_SECTIONS for name in (data.get(section) or {}))


@functools.lru_cache(maxsize=1)
def builtin_document() -> dict:
    """The standard types as loaded (read only: callers compare with it)."""
    data, _ = load_text(BUILTIN_TYPES.read_text(encoding="utf-8"), str(BUILTIN_TYPES))
    return data


def dsl_version(document: Any) -> tuple[int, int] | None:
    """``(1, 4)`` for ``cloudify_dsl_1_4``; None for anything else (the parser says what is wrong)."""
    found = isinstance(document, dict) and DSL_VERSION.match(str(document.get("tosca_definitions_version")))
    return (1, int(found.group(1))) if found else None


def _read_import(entry: str, base: Path | None, importer: str, loaded: Loaded) -> tuple[str, Path | None,
                                                                                        Problem | None]:
    """``(key, folder, problem)``: the file an import names (its path is its key) and its folder."""
    if _WELL_KNOWN.match(entry):
        return str(BUILTIN_TYPES), BUILTIN_TYPES.parent, None
    if _resolved(entry):
        if loaded.resolver is None:
            loaded.resolver = ImportResolver.from_home()
        path, why = loaded.resolver.resolve(entry, loaded.version)
        if path is None:
            return entry, None, Problem(("imports",), "import-not-fetched", f"cannot import {entry}: {why}", importer)
        return str(path.resolve()), path.resolve().parent, None
    if base is None:
        return entry, None, Problem(("imports",), "import-not-found",
                                    f"cannot import {entry}: the blueprint has no folder", importer)
    path = (base / entry).resolve()
    if not path.is_file():
        return str(path), None, Problem(("imports",), "import-not-found", f"cannot import {entry}: no such file",
                                        importer)
    return str(path), path.parent, None


def _resolved(entry: str) -> bool:
    """A ``plugin:``, ``blueprint:`` or URL import: one Cloudify tells apart by what it says, so the
    same plugin imported as ``plugin:X?version=>2`` and ``plugin:X?version=>3`` is imported twice."""
    return entry.startswith(("plugin:", BLUEPRINT_PREFIX)) or bool(re.match(r"^[a-z][a-z0-9+.-]*://", entry))


def _merge_imports(loaded: Loaded, document: dict, name: str, base: Path | None, seen: set, depth: int,
                   namespace: str | None = None) -> None:
    imports = document.pop("imports", None) or []
    if not isinstance(imports, list):
        loaded.problems.append(Problem(("imports",), "invalid-imports", "imports must be a list", name))
        return
    for item in imports:
        entry, properties, problem = import_properties.split_entry(item, loaded.version, name)
        if problem:
            loaded.problems.append(problem)
            continue
        own, entry = namespaces.split(entry)
        inner = namespaces.SEPARATOR.join(n for n in (namespace, own) if n) or None
        if entry.startswith(BLUEPRINT_PREFIX) and not inner:  # its scripts are found by its namespace
            loaded.problems.append(Problem(("imports",), "blueprint-import-namespace", f"Invalid {entry}: blueprint "
                                           f"import cannot be used without namespace (ns--{entry})", name))
            continue
        key, folder, problem = _read_import(entry, base, name, loaded)
        if not problem and entry.startswith(BLUEPRINT_PREFIX):
            problem = _blueprint_import(loaded, str(inner), entry, folder, name)
        if problem:
            loaded.problems.append(problem)
            continue
        builtin = key == str(BUILTIN_TYPES)
        identity = (None if builtin else inner, entry if _resolved(entry) and not builtin else key)
        if identity in seen:
            continue
        seen.add(identity)
        if len(seen) > MAX_IMPORTS:
            loaded.problems.append(Problem(("imports",), "too-many-imports", f"more than {MAX_IMPORTS} imports",
                                           name))
            return
        data, problems = load_text(Path(key).read_text(encoding="utf-8", errors="replace"), key)
        loaded.problems.extend(problems)
        if data is None:
            continue
        loaded.problems.extend(Problem(("imports",), "invalid-import-properties", error, name)
                               for error in import_properties.apply(data, properties, key))
        if loaded.version and not builtin:
            mismatch = versions.check_import_version(loaded.version, dsl_version(data), entry, key)
            loaded.problems.extend([mismatch] if mismatch else versions.version_problems(data, loaded.version, key))
        if inner and not builtin:
            namespaces.apply(data, inner, builtin_names())
        if entry.startswith(BLUEPRINT_PREFIX) and inner:
            namespaces.prefix_scripts(data, inner)
        _merge_imports(loaded, data, key, folder, seen, depth + 1, None if builtin else inner)
        _merge_document(loaded, data, key)


def _blueprint_import(loaded: Loaded, namespace: str, entry: str, folder: Path | None,
                      importer: str) -> Problem | None:
    """Record a ``blueprint:`` import's namespace; one blueprint a namespace, as in Cloudify."""
    blueprint_id = entry[len(BLUEPRINT_PREFIX):].strip()
    if namespace in loaded.blueprints and loaded.blueprints[namespace][0] != blueprint_id:
        return Problem(("imports",), "blueprint-import-namespace",
                       f"Import failed {namespace}: can not use the same namespace for importing blueprints",
                       importer)
    loaded.blueprints[namespace] = (blueprint_id, folder or Path("."))
    return None


def _merge_document(loaded: Loaded, imported: dict, name: str) -> None:
    target = loaded.document
    for section, value in imported.items():
        if section in PER_FILE:
            continue
        if section not in MERGED_SECTIONS or not isinstance(value, dict):
            target.setdefault(section, value)
            continue
        if section in target and loaded.version:
            refused = versions.check_mergeable(loaded.version, section, name)
            if refused:
                loaded.problems.append(refused)
                continue
        merged = target.setdefault(section, {})
        if not isinstance(merged, dict):
            continue
        for key, definition in value.items():
            if key.startswith(CLOUDIFY_PREFIX) and key in merged:
                merged[key] = definition  # Cloudify's own names may be defined again: the import's wins
            elif section == "workflows" and isinstance(merged.get(key), dict) and isinstance(definition, dict):
                merged[key] = {**definition, **merged[key]}  # dsl_parser's _merge_workflows: the first's fields win
            elif key in merged and section not in FIRST_WINS:
                loaded.problems.append(Problem((section, key), "import-conflict",
                                               f"{section} '{key}' is defined both here and in {name}"))
            else:
                merged.setdefault(key, definition)
