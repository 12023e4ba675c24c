"""Which class implements each resource type name, and where plug-ins come from.

Plug-ins are Python modules defining ``resource_mapping()`` (type name ->
class) and optionally ``constraint_mapping()`` (custom constraint name ->
check).  They come from directories (``plugin_dirs`` in
``$STOKER_HOME/stoker.conf``, ``STOKER_PLUGIN_DIRS``, or arguments) and from
installed packages exposing the entry-point group ``stoker.plugins``.

A broken plug-in must not take the others down: loading returns one problem
string per failure (naming the file, the line and the error) and goes on; a
module that would loop or end the process at import is found in a forked
child first and left out (``import_probe``).  A later registration of a type
name replaces an earlier one, so a plug-in can override a built-in type, as
in Heat, which it reports.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Callable, Iterable, Iterator, Mapping

from stoker.constraints import custom
from stoker.home import config, stoker_home
from stoker.resources import builtin, entry_points
from stoker.resources.import_probe import unsafe_modules
from stoker.resources.exceptions import UnknownResourceType
from stoker.resources.openstack import catalogue, inventory, simulated

ENTRY_POINT_GROUP = "stoker.plugins"
#: the package plug-in modules are imported under (one sub-package per directory)
PLUGIN_PACKAGE = "stoker_plugins"
#: folders whose files are never loaded as plug-ins (the plug-in's own tests, caches)
SKIPPED_DIRS = {"tests", "__pycache__"}


class Registry:
    """Type name -> resource class, and the problems met loading plug-ins."""

    def __init__(self, types: Mapping[str, type] | None = None, simulate: bool = False) -> None:
        self._types: dict[str, type] = dict(types or {})
        self.problems: list[str] = []
        #: answer for the OpenStack types Heat registers with their simulated classes (resources/openstack)
        self.simulate = simulate
        #: type name -> its simulated class, once found (each resource checked asks two or three times)
        self._simulated: dict[str, type] = {}

    def _simulates(self, type_name: object) -> bool:
        return self.simulate and (type_name in self._simulated or catalogue.entry(type_name) is not None)

    def register(self, type_name: str, cls: type) -> None:
        if not isinstance(type_name, str) or not type_name:
            raise TypeError(f"a resource type name must be a non-empty string, not {type_name!r}")
        if not isinstance(cls, type):
            raise TypeError(f"resource type {type_name}: {cls!r} is not a class")
        self._types[type_name] = cls

    def get(self, type_name: str) -> type:
        """The class registered for ``type_name``; else, for a type Heat registers, its simulated
        class (any plug-in registering the name wins over it)."""
        found = self._types.get(type_name) or self._simulated.get(type_name)  # no KeyError raised and caught
        if found is not None:
            return found
        if self._simulates(type_name):
            found = self._simulated[type_name] = simulated.simulated_class(type_name)
            return found
        raise UnknownResourceType(type_name, self._hint(type_name))

    def _hint(self, type_name: str) -> str:
        names = self.types()
        same_case = [n for n in names if n.lower() == str(type_name).lower()]
        close = same_case or difflib.get_close_matches(str(type_name), names, n=3, cutoff=0.8)
        return f" Did you mean {' or '.join(close)}?" if close else ""

    def __contains__(self, type_name: object) -> bool:
        return type_name in self._types or type_name in self._simulated or self._simulates(type_name)

    def types(self) -> list[str]:
        return sorted(set(self._types).union(catalogue.names() if self.simulate else ()))

    def register_module(self, module: Any) -> list[str]:
        """Register what a plug-in module maps; returns its type names.  Checks everything
        before registering anything, so a module is loaded whole or not at all."""
        resources = _mapping(module, "available_resource_mapping", "resource_mapping")
        constraints = _mapping(module, "constraint_mapping")
        for type_name, cls in resources.items():
            if not isinstance(cls, type):
                raise TypeError(f"resource_mapping(): {type_name!r} maps to {cls!r}, not a class")
        checks = [custom.CustomCheck(name, check) for name, check in constraints.items()]
        for type_name, cls in resources.items():
            self.register(type_name, cls)
        for check in checks:
            custom.register(check.name, check.check)
        return list(resources)

    def load_plugin_dirs(self, dirs: Iterable[str | os.PathLike]) -> list[str]:
        """Import every plug-in module under ``dirs``; one problem string per failure
        (also added to ``self.problems``)."""
        problems = []
        importlib.invalidate_caches()  # files may have appeared since the last import
        modules = []
        for directory in dirs:
            directory = Path(directory).expanduser()
            if not directory.is_dir():
                problems.append(f"{directory}: plug-in directory not found")
                continue
            package = _package_for(directory)
            modules += [(_module_name(package, directory, path), str(path)) for path in _plugin_files(directory)]
        unsafe = unsafe_modules((name, path) for name, path in modules if name not in sys.modules)
        for name, path in modules:
            if path in unsafe:
                problems.append(f"{path}: {unsafe[path]}")
            else:
                problems.extend(self._load(path, lambda name=name: importlib.import_module(name)))
        self.problems.extend(problems)
        return problems

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Load the plug-ins installed packages declare; one problem string per failure.

        An entry point names a plug-in module, or a callable returning the
        ``resource_mapping()`` dictionary.
        """
        problems = []
        for name, value in entry_points.entry_points(group):
            where = f"entry point {name} ({value})"
            problems.extend(self._load(where, lambda value=value: _as_module(entry_points.load(value))))
        self.problems.extend(problems)
        return problems

    def _load(self, where: str, load: Callable[[], Any]) -> list[str]:
        try:
            names = self.register_module(load())
        except Exception as exc:  # any failure of a plug-in is reported, never fatal
            return [f"{_place(where, exc)}: {type(exc).__name__}: {exc}"]
        return [f"{where}: replaces the built-in resource type {name}" for name in names if name in BUILTIN_TYPES]


def _place(where: str, exc: BaseException) -> str:
    """``file:line`` of the plug-in's line that failed, when the failure is in that file."""
    path = os.path.abspath(where)
    if isinstance(exc, SyntaxError) and exc.filename == path and exc.lineno:
        return f"{where}:{exc.lineno}"
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == path]
    return f"{where}:{lines[-1]}" if lines else where


def _mapping(module: Any, *names: str) -> Mapping:
    """The first mapping function of ``names`` the module defines, called (as Heat,
    ``available_resource_mapping`` wins over ``resource_mapping``)."""
    for name in names:
        function = getattr(module, name, None)
        if callable(function):
            result = function()
            if result is None:
                return {}
            if not isinstance(result, Mapping):
                raise TypeError(f"{name}() returned {type(result).__name__}, not a dict")
            return result
    return {}


def _as_module(loaded: Any) -> Any:
    if isinstance(loaded, ModuleType) or not callable(loaded):
        return loaded
    return SimpleNamespace(resource_mapping=loaded)


def _plugin_files(directory: Path) -> Iterator[Path]:
    """The ``.py`` files under ``directory``, in a stable order, without tests.

    ``setup.py`` is skipped (a packaged plug-in's installer, not a plug-in),
    as are hidden folders (a virtualenv inside a plug-in checkout) and the
    directory's own ``__init__.py`` (the directory is the package).
    """
    for path in sorted(directory.rglob("*.py")):
        relative = path.relative_to(directory)
        folders = relative.parts[:-1]
        if any(f in SKIPPED_DIRS or f.startswith(".") for f in folders):
            continue
        if relative.name == "setup.py" or relative == Path("__init__.py"):
            continue
        yield path


def _package_for(directory: Path) -> str:
    """A package standing for ``directory``, so its modules can import each other.

    The name depends only on the directory, so loading it twice reuses the
    modules already imported.
    """
    root = sys.modules.get(PLUGIN_PACKAGE)
    if root is None:
        root = sys.modules[PLUGIN_PACKAGE] = ModuleType(PLUGIN_PACKAGE)
        root.__path__ = []
    digest = hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:12]
    name = f"{PLUGIN_PACKAGE}.d{digest}"
    if name not in sys.modules:
        package = ModuleType(name)
        package.__path__ = [str(directory)]
        sys.modules[name] = package
    return name


def _module_name(package: str, directory: Path, path: Path) -> str:
    parts = path.relative_to(directory).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((package, *parts))


# -- configuration -----------------------------------------------------------------------
def plugin_dirs_from_config() -> list[Path]:
    """Plug-in directories from ``$STOKER_HOME/stoker.conf`` then ``STOKER_PLUGIN_DIRS``.

    The config file says ``[DEFAULT] plugin_dirs = a, b`` (comma-separated,
    relative paths from ``$STOKER_HOME``); the variable is separated by
    ``os.pathsep``, like ``PATH``.
    """
    home = stoker_home()
    found: list[Path] = []
    for entry in config().defaults().get("plugin_dirs", "").split(","):
        if entry.strip():
            found.append(home / Path(entry.strip()).expanduser())
    for entry in os.environ.get("STOKER_PLUGIN_DIRS", "").split(os.pathsep):
        if entry.strip():
            found.append(Path(entry.strip()).expanduser())
    return list(dict.fromkeys(found))


# -- the process-wide registry ---------------------------------------------------------------
inventory.register_checks()
#: built-in types, plus whatever the embedding program registers
default = Registry(simulate=True)
#: the types Stoker ships: a plug-in replacing one is reported
BUILTIN_TYPES = frozenset(default.register_module(builtin))
register = default.register
get = default.get
types = default.types
register_module = default.register_module
load_plugin_dirs = default.load_plugin_dirs
load_entry_points = default.load_entry_points


def default_registry(plugin_dirs: Iterable[str | os.PathLike] = ()) -> Registry:
    """A registry for an engine: the process-wide types, then installed plug-ins
    (entry points), then plug-in directories from the configuration,
    ``STOKER_PLUGIN_DIRS`` and ``plugin_dirs``; the more local source wins.  Heat's OpenStack
    types no plug-in registers are simulated."""
    registry = Registry(default._types, simulate=True)
    registry.load_entry_points()
    registry.load_plugin_dirs([*plugin_dirs_from_config(), *plugin_dirs])
    return registry
