"""Names users give, and text shown on a terminal.

One rule for stack names wherever a stack is made (Heat's: the CLI used to
take ``/``, ``..`` and control characters the API refused); no control or
format characters in the names a template gives (a NUL, a bell or a
right-to-left override would reach every terminal that lists them); and
``shown`` for any text printed to a terminal, so what slipped in anyway (a
resource's status reason, an old stack's name) prints as escapes.
"""

from __future__ import annotations

import re
import unicodedata

#: Heat's stack name rule (heat/api/openstack/v1/stacks.py)
STACK_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")
#: Unicode categories never printed as themselves: control, format (bidi overrides,
#: zero-width), surrogates, private use, line and paragraph separators
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def stack_name_error(name: object) -> str | None:
    """Why ``name`` cannot name a stack (Heat's words), or None when it can."""
    if isinstance(name, str) and STACK_NAME.match(name):
        return None
    text = shown(name if isinstance(name, str) else repr(name))
    if len(text) > 80:
        text = text[:77] + "..."
    return (f'Invalid stack name {text} must contain only alphanumeric or "_-." characters, '
            "must start with alpha and must be 255 characters or less.")


def hidden_characters(text: str) -> list[str]:
    """The escapes of the control and format characters in ``text`` (empty when clean).

    Every hidden character is one ``str.isprintable`` refuses: a printable name (nearly all,
    and a stored template's names are checked on every read) skips the per-character walk."""
    if text.isprintable():
        return []
    return [_escape(ch) for ch in text if _is_hidden(ch)]


def shown(text: str) -> str:
    """``text`` fit for a terminal: tabs and newlines kept, other control and format
    characters as escapes (``\\x07``, ``\\u202e``)."""
    if text.isprintable():
        return text
    return "".join(_escape(ch) if ch not in "\t\n" and _is_hidden(ch) else ch for ch in text)


def _is_hidden(ch: str) -> bool:
    return unicodedata.category(ch) in _HIDDEN


def _escape(ch: str) -> str:
    return ascii(ch)[1:-1]
