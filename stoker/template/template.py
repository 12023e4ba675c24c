"""A loaded template: its data, its files map, its source text, its version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stoker.errors import Problems, ValidationFailed
from stoker.template.loader import Source, load, read_file
from stoker.template.versions import VERSIONS, Version, get_version

#: what each top-level section must hold, for the structure check
#: (parameters and parameter_groups are checked by the parameters module)
_SECTION_TYPES = {
    "description": (str,),
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
    def section(self, name: str) -> Any:
        """A section's content; an empty YAML section (``None``) reads as empty."""
        value = self.data.get(name) if isinstance(self.data, dict) else None
        if value is None:
            return [] if name == "parameter_groups" else {}
        return value

    @property
    def description(self) -> str:
        return self.section("description") or "No description"

    @property
    def version(self) -> Version | None:
        if not isinstance(self.data, dict):
            return None
        return get_version(self.data.get("heat_template_version"))

    def check_structure(self, problems: Problems) -> Version | None:
        """Check the top level; return the version when the rest can be checked."""
        if not isinstance(self.data, dict):
            problems.add((), "invalid-template", "a template must be a map of sections")
            return None
        raw_version = self.data.get("heat_template_version")
        version = get_version(raw_version)
        if raw_version is None:
            if "AWSTemplateFormatVersion" in self.data or "HeatTemplateFormatVersion" in self.data:
                problems.add((), "unsupported-format",
                             "CloudFormation-format (CFN) templates are not supported; use HOT")
            else:
                problems.add((), "missing-version",
                             "the template has no heat_template_version")
            return None
        if version is None:
            known = ", ".join(v.date for v in VERSIONS)
            problems.add(("heat_template_version",), "unknown-version",
                         f'"{raw_version}" is not a known heat_template_version; known: {known} '
                         "(or the release names newton, ocata, pike, queens, rocky, wallaby)")
            return None
        for name, value in self.data.items():
            if name not in version.sections:
                later = next((v.date for v in VERSIONS if name in v.sections), None)
                hint = (f"; it needs heat_template_version {later} or later" if later
                        else f"; valid sections: {', '.join(version.sections)}")
                problems.add((name,), "unknown-section", f'"{name}" is not a valid template section{hint}')
                continue
            expected = _SECTION_TYPES.get(name)
            if expected and value is not None and not isinstance(value, expected):
                kind = {"str": "a string", "list": "a list", "dict": "a map"}[expected[0].__name__]
                problems.add((name,), "invalid-section", f'the "{name}" section must be {kind}')
        return version
