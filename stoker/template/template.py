"""A loaded template: its data, its files map, its source text, its version."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from stoker.errors import Problems
from stoker.names import hidden_characters, shown
from stoker.template import cfn_format
from stoker.template.loader import Source, check_nesting, load, read_file
from stoker.template.versions import CFN_VERSIONS, VERSIONS, Version, template_version

#: what each top-level section must hold, for the structure check
#: (parameters and parameter_groups are checked by the parameters module; the description
#: may hold anything: Heat shows it as it is)
#: sections whose keys name things users see listed (the CFN format's are mapped to these)
NAMED_SECTIONS = ("parameters", "resources", "outputs")


def _check_names(section: str, entries: dict, problems: Problems) -> None:
    """No control or format characters in a parameter, resource or output name."""
    for key in entries:
        found = hidden_characters(key) if isinstance(key, str) else []
        if found:
            problems.add((section, shown(key)), "invalid-name",
                         f"a name in {section} may not hold control or format characters "
                         f"(found {', '.join(dict.fromkeys(found))})")


_SECTION_TYPES = {
    "resources": (dict,),
    "outputs": (dict,),
    "conditions": (dict,),
}


class Template:
    """The template as the user wrote it, plus where it came from."""

    def __init__(self, data: Any, files: dict[str, str] | None = None, source: Source | None = None):
        self.data = data
        self.files = dict(files or {})
        self.source = source

    @classmethod
    def from_text(cls, text: str | bytes, name: str = "<template>", files: dict | None = None,
                  max_size: int | None = None) -> "Template":
        data = load(text, name, max_size=max_size)
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return cls(data, files, Source(text, name))

    @classmethod
    def from_file(cls, path: str | Path, files: dict | None = None,
                  max_size: int | None = None) -> "Template":
        return cls.from_text(read_file(Path(path), max_size), str(path), files, max_size=max_size)

    # -- sections -------------------------------------------------------------------
    @cached_property
    def hot(self) -> Any:
        """The data in HOT's shape: CFN-format templates renamed (template/cfn_format.py)."""
        version = self.version
        if version is not None and version.is_cfn:
            return cfn_format.to_hot(self.data, version.format_key)
        return self.data

    def section(self, name: str) -> Any:
        """A section's content; an empty YAML section (``None``) reads as empty."""
        value = self.hot.get(name) if isinstance(self.hot, dict) else None
        if value is None:
            return [] if name == "parameter_groups" else {}
        return value

    @property
    def description(self) -> str:
        return self.section("description") or "No description"

    @property
    def version(self) -> Version | None:
        return template_version(self.data)[2]

    def check_structure(self, problems: Problems) -> Version | None:
        """Check the top level; return the version when the rest can be checked."""
        if not isinstance(self.data, dict):
            problems.add((), "invalid-template", "a template must be a map of sections")
            return None
        key, raw_version, version = template_version(self.data)
        if raw_version is None:
            problems.add((), "missing-version", "the template has no heat_template_version "
                         "(nor AWSTemplateFormatVersion or HeatTemplateFormatVersion)")
            return None
        if version is None:
            if key == "heat_template_version":
                known = ", ".join(v.date for v in VERSIONS)
                hint = "(or the release names newton, ocata, pike, queens, rocky, wallaby)"
            else:
                known, hint = ", ".join(v.date for v in CFN_VERSIONS if v.format_key == key), ""
            problems.add((key,), "unknown-version",
                         f'"{raw_version}" is not a known {key}; known: {known} {hint}'.rstrip())
            return None
        for name, value in self.hot.items():
            if name == "heat_template_version":
                continue
            if name not in version.sections:
                later = next((v.date for v in VERSIONS if name in v.sections), None)
                hint = (f"; it needs heat_template_version {later} or later" if later
                        else f"; valid sections: {', '.join(version.sections)}")
                problems.add((name,), "unknown-section", f'"{name}" is not a valid template section{hint}')
                continue
            expected = _SECTION_TYPES.get(name)
            if name == "conditions" and not isinstance(value, dict):
                # Heat's own words; an empty section (null) is refused too
                problems.add((name,), "invalid-section", "Condition definitions must be a map. "
                             f"Found a {type(value).__name__} instead")
            elif expected and value is not None and not isinstance(value, expected):
                kind = {"str": "a string", "list": "a list", "dict": "a map"}[expected[0].__name__]
                problems.add((name,), "invalid-section", f'the "{name}" section must be {kind}')
            elif isinstance(value, dict) and name in NAMED_SECTIONS:
                _check_names(name, value, problems)
        return version


def as_template(template: Template | dict | str | Path) -> Template:
    """A template given as one, as its data, or as a file's path."""
    if isinstance(template, Template):
        return template
    if isinstance(template, dict):
        check_nesting(template)  # text is checked as it loads; data given as it is, here
        return Template(template)
    return Template.from_file(template)
