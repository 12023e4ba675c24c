"""yaql's regex functions with each pattern matched within ``max_pattern_seconds`` (``stoker.patterns``).

``regex()`` gives a ``BoundedRegex`` here in place of ``re``'s compiled pattern.  The library's functions that
take one (``matches``, ``=~`` and ``!~`` on one, ``search``, ``searchAll``, ``split``, ``replace``,
``replaceBy``) are registered again taking this type: their bodies only call its ``search``, ``finditer``,
``split`` and ``sub``.  Those that take the pattern as a string, and ``regex()`` and ``isRegex()``, are these
below, the library's in all else.
"""

from __future__ import annotations

import re
from typing import Any

from yaql.language import conventions, specs, yaqltypes
from yaql.standard_library import regex as library

from stoker import patterns

WHERE = "a regex function"


class BoundedRegex:
    """A compiled pattern whose every match is bounded."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: Any):
        self.pattern = pattern

    def search(self, string: str) -> Any:
        return patterns.search(self.pattern, string, WHERE)

    def finditer(self, string: str) -> list:
        return patterns.bounded(WHERE, self.pattern, "finditer", string)

    def split(self, string: str, max_split: int = 0) -> list:
        return patterns.bounded(WHERE, self.pattern, "split", string, max_split)

    def sub(self, repl: Any, string: str, count: int = 0) -> str:
        return patterns.bounded(WHERE, self.pattern, "sub", repl, string, count)


@specs.parameter("pattern", yaqltypes.String())
def regex(pattern, ignore_case=False, multi_line=False, dot_all=False):
    flags = re.UNICODE | (re.IGNORECASE if ignore_case else 0) | (re.MULTILINE if multi_line else 0) \
        | (re.DOTALL if dot_all else 0)
    return BoundedRegex(patterns.compiled(pattern, flags))


@specs.parameter("string", yaqltypes.String())
@specs.parameter("regexp", yaqltypes.String())
@specs.method
@specs.name("matches")
def matches_string(string, regexp):
    return patterns.search(regexp, string, WHERE) is not None


@specs.parameter("pattern", yaqltypes.String())
@specs.parameter("string", yaqltypes.String())
@specs.name("#operator_=~")
def matches_operator_string(string, pattern):
    return patterns.search(pattern, string, WHERE) is not None


@specs.parameter("pattern", yaqltypes.String())
@specs.parameter("string", yaqltypes.String())
@specs.name("#operator_!~")
def not_matches_operator_string(string, pattern):
    return patterns.search(pattern, string, WHERE) is None


def is_regex(value):
    return isinstance(value, BoundedRegex)


#: the library's functions taking a compiled pattern (their ``regexp``)
TAKING_A_REGEX = (library.matches, library.matches_operator_regex, library.not_matches_operator_regex,
                  library.search, library.search_all, library.split, library.split_string, library.replace,
                  library.replace_by, library.replace_string, library.replace_by_string)


def register(context: Any) -> None:
    """The regex functions, in a context made without the library's (``yaql.create_context(regex=False)``)."""
    for function in TAKING_A_REGEX:
        definition = specs.get_function_definition(function, convention=conventions.CamelCaseConvention())
        definition.set_parameter("regexp", BoundedRegex, overwrite=True)
        context.register_function(definition)
    for function in (regex, matches_string, matches_operator_string, not_matches_operator_string, is_regex,
                     library.escape_regex):
        context.register_function(function)
