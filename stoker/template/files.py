"""Build the files map from local files, as Heat's client does.

Every static ``get_file`` target, every resource ``type`` that names a
template, and every template an environment's ``resource_registry`` maps to
is read relative to the file that names it, stored under its absolute
``file://`` URL, and the reference is rewritten to that URL.  Nested
templates are gathered the same way, recursively.  The engine then reads
only from the map: nothing outside it is ever opened.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from stoker.errors import Problem, Problems, ValidationFailed
from stoker.template.environment import Environment, is_template_type, load_environments
from stoker.template.loader import UnreadableFile, load, read_file
from stoker.template.template import Template


def _url(base_dir: Path, reference: str) -> str | None:
    """The absolute file URL a reference means, or None for remote URLs (not fetched)."""
    parsed = urlparse(reference)
    if parsed.scheme == "file":
        return reference
    if parsed.scheme:
        return None
    return (base_dir / reference).resolve().as_uri()


def _path(url: str) -> Path:
    """The local path of a file URL (``as_uri`` quoted its ``+ @ % #`` and spaces)."""
    return Path(unquote(urlparse(url).path))


class FilesMap:
    """Collects files and nested templates; ``files`` is the result."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        #: templates named (as a type or in a registry) that are not there, and files a nested
        #: template's ``get_file`` names that are not (the top template's report their place)
        self.missing: list[str] = []
        self._nesting = 0

    def template(self, path: Path) -> Any:
        """Load the template at ``path`` and gather everything it names (its text stripped
        first: heatclient parses every template it sends, so a block scalar ending the file
        loses its trailing newline there too)."""
        data = load(read_file(path).rstrip(), str(path))
        self._nesting += 1
        try:
            self._walk(data, path.parent, in_resources=False)
        finally:
            self._nesting -= 1
        return data

    def _walk(self, value: Any, base: Path, in_resources: bool) -> None:
        if isinstance(value, dict):
            if len(value) == 1 and isinstance(value.get("get_file"), str):
                url = _url(base, value["get_file"])
                if url is not None and self._read(url):
                    value["get_file"] = url
            kind = value.get("type")
            if in_resources and isinstance(kind, str) and is_template_type(kind):
                url = _url(base, kind)
                if url is not None and self._nested(url):
                    value["type"] = url
            for key, child in value.items():
                self._walk(child, base, in_resources or key == "resources")
        elif isinstance(value, list):
            for child in value:
                self._walk(child, base, in_resources)

    def _read(self, url: str) -> bool:
        if url in self.files:
            return True
        try:
            text = read_file(_path(url)).decode("utf-8")
        except UnreadableFile:
            if self._nesting:  # heatclient refuses it; in the top template get_file reports its place
                self.missing.append(url)
            return False
        except UnicodeDecodeError:
            return False  # get_file reports the entry with its place
        if _is_template(text):  # heatclient sends a template it reads as its parsed JSON
            return self._nested(url)
        self.files[url] = text
        return True

    def _nested(self, url: str) -> bool:
        if url in self.files:
            return True
        path = _path(url)
        if not path.is_file():
            self.missing.append(url)
            return False
        self.files[url] = ""  # a placeholder stops loops between templates
        self.files[url] = json.dumps(self.template(path))
        return True

    def environment(self, env: Environment, base: Path) -> None:
        """Gather the templates a ``resource_registry`` maps to (relative to its file)."""
        self._registry(env.resource_registry, base)

    def _registry(self, registry: dict, base: Path) -> None:
        for key, target in list(registry.items()):
            if key == "resources" and isinstance(target, dict):
                for entry in target.values():
                    if isinstance(entry, dict):
                        self._registry(entry, base)
            elif isinstance(target, str) and is_template_type(target):
                url = _url(base, target)
                if url is not None and self._nested(url):
                    registry[key] = url


_VERSION_KEYS = ("heat_template_version", "HeatTemplateFormatVersion", "AWSTemplateFormatVersion")


def _is_template(text: str) -> bool:
    """heatclient's test: the text parses as a map with a template version key."""
    try:
        data = load(text.strip(), "<file>")
    except ValidationFailed:
        return False
    return isinstance(data, dict) and any(key in data for key in _VERSION_KEYS)


def _check_json_as_heatclient(text: bytes, name: str) -> None:
    """heatclient reads a template that starts with ``{`` as JSON, strictly: no YAML
    fallback (the engine, given such text through the API, would try YAML too)."""
    if not text.lstrip().startswith(b"{"):
        return
    try:
        json.loads(text)
    except (UnicodeDecodeError, RecursionError):
        return  # reported by the loader, with its limits
    except ValueError as exc:
        line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        raise ValidationFailed([Problem((), "invalid-syntax", f"invalid JSON: {getattr(exc, 'msg', exc)}",
                                        name, line, column)]) from None


def load_template_tree(path: str | Path, environment_paths: list[str | Path] = ()) -> tuple[Template, Environment]:
    """The template at ``path`` with its files map, and the merged environments."""
    path = Path(path)
    collector = FilesMap()
    # heatclient strips the template text it sends, so a block scalar ending the file loses its
    # trailing newline; nested templates and get_file contents go as they are
    text = read_file(path).rstrip()
    _check_json_as_heatclient(text, str(path))
    template = Template.from_text(text, str(path))
    collector._walk(template.data, path.resolve().parent, in_resources=False)
    environment = Environment()
    for env_path in environment_paths:
        try:
            one = load_environments([env_path])
        except ValidationFailed as exc:  # keep going: report every file's errors at once
            for problem in exc.problems + exc.warnings:
                problem.file = problem.file or str(env_path)
            environment.errors.extend(exc.problems)
            environment.warnings.extend(exc.warnings)
            continue
        collector.environment(one, Path(env_path).resolve().parent)
        environment.merge(one.as_dict(), Problems())  # each file was checked as it loaded
        environment.sources.extend(one.sources)
        environment.warnings.extend(one.warnings)
    if collector.missing:  # heatclient refuses to send a template whose files it cannot read
        raise ValidationFailed([Problem((), "missing-file", f"Could not fetch contents for {url}", str(path))
                                for url in dict.fromkeys(collector.missing)])
    template.files = collector.files
    return template, environment
