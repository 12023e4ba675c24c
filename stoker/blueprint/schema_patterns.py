"""JSON Schema validators (jsonschema's drafts) whose keywords match an author's patterns through
``stoker.patterns``, within ``max_pattern_seconds``: ``pattern``, ``patternProperties`` and
``additionalProperties`` (which leaves out the keys ``patternProperties`` matches).

jsonschema calls ``re.search`` itself in those keywords, and in ``unevaluatedProperties`` while it works out
which keys ``patternProperties`` evaluated, deep in a recursive helper no keyword can replace: a schema holding
both is refused (``unbounded``).
"""

from __future__ import annotations

import functools
from typing import Any, Iterator

import jsonschema
from jsonschema.exceptions import ValidationError
from jsonschema._utils import extras_msg

from stoker import patterns

WHERE = "a pattern of the schema"


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not patterns.search(pattern, instance, WHERE):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, pattern_properties: dict, instance: Any,
                        schema: dict) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if patterns.search(pattern, key, WHERE):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    """jsonschema's keyword, its messages too, the keys matched one pattern at a time."""
    if not validator.is_type(instance, "object"):
        return
    named, matched = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [key for key in instance if key not in named
              and not any(patterns.search(pattern, key, WHERE) for pattern in matched)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if matched:
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{', '.join(repr(each) for each in sorted(extras))} {verb} not match any of the "
                                  f"regexes: {', '.join(repr(each) for each in sorted(matched))}")
        else:
            yield ValidationError("Additional properties are not allowed (%s %s unexpected)"
                                  % extras_msg(sorted(extras, key=str)))


KEYWORDS = {"pattern": _pattern, "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties}


@functools.cache
def bounded_validator(draft: type) -> type:
    """``draft`` (a jsonschema validator class) with the keywords above."""
    return jsonschema.validators.extend(draft, {k: f for k, f in KEYWORDS.items() if k in draft.VALIDATORS})


def unbounded(schema: Any) -> bool:
    """Does the schema use ``unevaluatedProperties`` and ``patternProperties``, whose matching jsonschema does
    where no keyword of Stoker's can bound it?"""
    found, parts = set(), [schema]
    while parts and len(found) < 2:  # no recursion: a schema may nest deeper than Python does
        part = parts.pop()
        if isinstance(part, dict):
            found.update({"unevaluatedProperties", "patternProperties"} & part.keys())
            parts.extend(part.values())
        elif isinstance(part, list):
            parts.extend(part)
    return len(found) == 2
