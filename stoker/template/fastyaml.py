"""A fast YAML parse that gives exactly PyYAML's result, or declines.

PyYAML builds a Python object per node even with its C parser, about 0.5 s
for a 1 MB template.  rapidyaml (C++) parses the same text and writes it out
as JSON, which ``json`` reads back in a fraction of that.  But rapidyaml
speaks YAML 1.2 and is more lenient, while PyYAML (and so Heat) speaks YAML
1.1, where ``yes`` is true, ``0777`` is 511 and ``1e3`` is a string.  So the
fast result is used only when nothing could mean something else to PyYAML:

* the text avoids what the two read differently: anchors, aliases, tags,
  directives, ``?`` keys, tabs, lone carriage returns, document end markers,
  block scalars with an indentation indicator or at the very end without a
  line break, escaped spaces, characters no plain scalar may start with;
* every JSON string (keys included) must be one no YAML 1.1 resolver claims
  (``yes``, ``~``, ``0x1f``, ``1_000``, ``1:30``, ``.inf``, ``<<``, ...): a
  plain scalar PyYAML would type and a quoted one that looks like it both decline;
* every JSON number must be one PyYAML reads as the same number;
* the document is one map (a template or an environment), and rapidyaml
  parses it without error.

Anything else returns ``DECLINED`` and the caller asks PyYAML, which also
writes the error messages.  Declining is always safe; only speed is lost.
``tests/unit/test_fast_yaml.py`` holds the two to this, input by input.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any

try:
    import ryml
except ImportError:  # no wheel for this platform: PyYAML does all the work
    ryml = None

DECLINED: Any = object()

# What PyYAML's resolver turns into a non-string (bool, int, float, null,
# merge, value).  Found as the text between the quotes of a JSON string.
_INT = rb"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
_FLOAT = (rb"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
          rb"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_WORDS = rb"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|=|<<"
# First alternative: a string that starts as no plain scalar may -- rapidyaml
# takes a stray ``]`` or the ``:x`` of ``[:x]`` as text, PyYAML refuses them
# (the lookbehind makes it an opening quote).  Second: the typed ones, with a
# lookahead that only makes the common miss fail fast.
_SUSPECT_STRING = re.compile(
    rb'(?<=[\s\[,{:])"([\]}:])|"(?=[-+.0-9yYnNtTfFoO~=<"])(' + _WORDS + rb"|" + _INT + rb"|" + _FLOAT
    + rb'|)"(:?)')
# Strings rapidyaml would have written bare had they been plain scalars: as
# JSON strings they were quoted in the source, and PyYAML keeps them strings too.
_BARE_IF_PLAIN = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|")
_PYYAML_FLOAT = re.compile(_FLOAT.decode())
# In ``{a: b #c\n}`` rapidyaml reads "b #c": a one-line string with " #" may
# be such a comment (one from a block scalar ends with a line break).
_ONE_LINE_WITH_HASH = re.compile(rb'"(?:[^"\\\n]|\\[^n])* #(?:[^"\\\n]|\\[^n])*"')

_PRINTABLE_ASCII = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
#: what may come just before the start of a node (and, for safety, just after one ends)
_NODE_START = " \n\r,[{}]\"'"
#: characters that, starting a node, make it something other than a plain scalar
_INDICATORS = "%!&*?@`"


class _Declined(Exception):
    pass


def load(text: str) -> Any:
    """The data of ``text`` exactly as PyYAML would load it, or ``DECLINED``."""
    if ryml is None or not _plain_enough(text):
        return DECLINED
    try:
        return _load(text)
    except Exception:  # whatever it is, PyYAML has the last word
        return DECLINED


def _load(text: str) -> Any:
    encoded = text.encode("utf-8")
    if encoded.translate(None, _PRINTABLE_ASCII):  # something beyond printable ASCII
        if text.isascii() or _unusual_unicode(text):
            return DECLINED
    tree = _parse_quietly(encoded)
    if tree is None:
        return DECLINED
    node = tree.root_id()
    if tree.is_stream(node):
        if tree.num_children(node) != 1:
            return DECLINED
        node = tree.first_child(node)
    if not tree.is_map(node):
        return DECLINED  # templates and environments are maps; leave the rest to PyYAML
    out = ryml.emit_json_malloc(tree, node).encode("utf-8")
    if b" #" in out and _ONE_LINE_WITH_HASH.search(out):
        return DECLINED  # maybe a comment rapidyaml kept in a plain scalar of a flow collection
    if _suspect_strings(out):
        return DECLINED
    return json.loads(out, parse_float=_float)


def _float(token: str) -> float:
    if not _PYYAML_FLOAT.fullmatch(token):
        raise _Declined  # e.g. 1e3: a number to rapidyaml, a string to PyYAML
    if token.startswith("-0."):
        raise _Declined  # rapidyaml writes -.5 so, which PyYAML keeps a string
    return float(token)


def _suspect_strings(out: bytes) -> bool:
    """Whether a JSON string might have been a plain scalar PyYAML types or refuses.

    Keys are always JSON strings, so any key PyYAML would type declines
    (``1:``, ``true:``, an empty key, ``<<``).  A value declines unless it is
    one rapidyaml writes bare when plain (``80``, ``true``): such a string
    must have been quoted.
    """
    for match in _SUSPECT_STRING.finditer(out):
        bad_start, content, is_key = match.groups()
        if bad_start or is_key or not _BARE_IF_PLAIN.fullmatch(content):
            return True
    return False


def _plain_enough(text: str) -> bool:
    """No YAML feature the two parsers read differently, by cheap text checks.

    Single-character or short searches only (they run at memory speed); each
    hit is then looked at.
    """
    if "\t" in text or "\\ " in text:
        return False
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False  # a lone CR is a line break to YAML 1.1 only
    if any(_starts_a_node(text, char) for char in _INDICATORS):
        return False
    if _at_line_start(text, "...") or ":]" in text or ":," in text or ":}" in text:
        return False
    return not _block_scalar_trouble(text)


def _starts_a_node(text: str, char: str) -> bool:
    at = text.find(char)
    while at != -1:
        if at == 0 or text[at - 1] in _NODE_START:
            return True
        at = text.find(char, at + 1)
    return False


def _at_line_start(text: str, marker: str) -> bool:
    return text.startswith(marker) or f"\n{marker}" in text


def _block_scalar_trouble(text: str) -> bool:
    """A ``|``/``>`` header with an indentation indicator, or a block scalar
    ending the text without a line break: the two parsers keep different text."""
    for char in "|>":
        at = text.find(char)
        while at != -1:
            header = text[at + 1:at + 3].lstrip("+-")
            if header[:1].isdigit() or not text.endswith("\n"):
                return True
            at = text.find(char, at + 1)
    return False


def _unusual_unicode(text: str) -> bool:
    """Characters PyYAML refuses, a byte order mark, or line breaks only YAML 1.1 knows."""
    return bool(_NON_PRINTABLE.search(text)) or any(c in text for c in "\ufeff\x85\u2028\u2029")


_stderr_lock = threading.Lock()


def _parse_quietly(encoded: bytes) -> Any:
    """rapidyaml's tree of ``encoded``; ``None`` when it fails or cannot be kept quiet.

    On a parse error rapidyaml's C++ side writes a report straight to file
    descriptor 2.  Only redirecting that descriptor silences it, and that
    would swallow other threads' output too; so the fast path runs only while
    this is the process's single thread (the command line, not the server).
    """
    if threading.active_count() > 1 or not _stderr_lock.acquire(blocking=False):
        return None
    try:
        tree = ryml.Tree()
        tree.reserve(len(encoded) // 16 + 16)  # about a node per 17 bytes: no regrowth (2x faster when big)
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        try:
            ryml.parse_in_arena(encoded, tree)
        except Exception:  # rapidyaml's parse errors; PyYAML will name the place
            return None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        return tree
    finally:
        _stderr_lock.release()
