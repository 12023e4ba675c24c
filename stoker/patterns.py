"""Regular expressions an author gives (a HOT ``allowed_pattern``, a blueprint's ``pattern`` constraint, a
resource type listing's name filter, a typed secret's JSON Schema, yaql's regex functions), compiled and matched
within ``max_pattern_seconds``.

Python's ``re`` backtracks without bound and holds the GIL while it does: ``(a|aa)+$`` against sixty a's and a
"!" runs for hours, and on ``stoker api`` one author's pattern would freeze every project's requests.  The
``regex`` library reads ``re``'s syntax (its default VERSION0), takes a time-out per match (counted in the
process's CPU time: matches running at once share it) and lets other threads run while it matches a str.  A match
out of time is ``PatternTimeout``, naming the place, the pattern (shortened) and the limit.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stoker.errors import StokerError
from stoker.limits import limit

#: what ``compiled`` raises for a pattern that is not a regular expression
error = re.error
#: the longest pattern a message quotes whole
LONGEST_SHOWN = 60


class PatternTimeout(StokerError):
    code = "pattern-timeout"


def compiled(pattern: Any, flags: int = 0) -> Any:
    """``pattern`` (a str; a compiled one is taken as it is) compiled by ``regex``, which keeps the recent ones;
    ``error`` with ``re``'s message (Heat's and Cloudify's; compiling does not backtrack) if it is not a regular
    expression.  ``regex`` (a hundredth of a second to import) is imported by the first pattern."""
    if not isinstance(pattern, str):
        return pattern
    re.compile(pattern, flags)
    import regex

    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise error(str(exc)) from None


def shown(pattern: str) -> str:
    """A pattern as a message quotes it: as JSON, cut to ``LONGEST_SHOWN`` characters."""
    return json.dumps(pattern if len(pattern) <= LONGEST_SHOWN else pattern[:LONGEST_SHOWN] + "...")


def bounded(where: str, pattern: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``compiled(pattern).<method>(*args, **kwargs)`` given ``max_pattern_seconds`` (``match``, ``search``,
    ``fullmatch``, ``sub``, ``split``, ``findall``; ``finditer``'s matches come as a list, found within the
    time); ``where`` (the place, e.g. "allowed_pattern") begins the message of a time-out."""
    found = compiled(pattern)
    seconds = limit("max_pattern_seconds")
    try:
        result = getattr(found, method)(*args, timeout=seconds, **kwargs)
        return list(result) if method == "finditer" else result
    except TimeoutError:
        raise PatternTimeout(f"{where}: the regular expression {shown(found.pattern)} took longer than {seconds} s "
                             "to match (max_pattern_seconds)") from None


def match(pattern: Any, text: str, where: str) -> Any:
    return bounded(where, pattern, "match", text)


def search(pattern: Any, text: str, where: str) -> Any:
    return bounded(where, pattern, "search", text)


def fullmatch(pattern: Any, text: str, where: str) -> Any:
    return bounded(where, pattern, "fullmatch", text)
