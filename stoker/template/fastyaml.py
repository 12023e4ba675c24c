"""A fast YAML parse that gives exactly PyYAML's result, or declines.

PyYAML builds a Python object per node even with its C parser, about 0.5 s
for a 1 MB template.  rapidyaml (C++) parses the same text and writes it out
as JSON, which ``json`` reads back in a fraction of that.  But rapidyaml
speaks YAML 1.2 and is more lenient, while PyYAML (and so Heat) speaks YAML
1.1, where ``yes`` is true, ``0777`` is 511 and ``1e3`` is a string.  So the
fast result is used only when nothing could mean something else to PyYAML.
Three tiers of checks, cheapest first:

1. The text (memory-speed searches): what the two read differently declines
   at once -- tabs, lone carriage returns, directives, document end markers,
   some block scalar headers, escaped spaces and line breaks, ``:`` glued to
   a flow indicator, unbalanced brackets, text after a node on its line.
2. rapidyaml's JSON: every number must be one PyYAML reads the same; a JSON
   string (keys included) that PyYAML might type (``yes``, ``~``, ``0644``,
   ``1:30``, ``<<``) or refuse (a stray ``]``) is suspect.
3. Only when tier 1 saw a maybe (an ``&``, ``*``, ``!``, ``?``, ``@``, ``%``
   or backtick where a node may start, a flow collection that may span
   lines) or tier 2 a suspect: rapidyaml's tree, node by node.  Anchors,
   aliases, tags and multi-line flow collections decline; so does a plain
   (unquoted) scalar that PyYAML would type or refuse.  A quoted ``'0644'``
   is fine.  About 1 µs a node: slower than tiers 1-2, far faster than PyYAML.

The document must be one map (a template or an environment).  Anything else
returns ``DECLINED`` and the caller asks PyYAML, which also writes the error
messages.  Declining is always safe; only speed is lost.
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

# What PyYAML's resolver turns into a non-string: bool, int, float, null, merge, value.
_INT = r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
_FLOAT = (r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
          r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_WORDS = r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|=|<<"
_TYPED = f"{_WORDS}|{_INT}|{_FLOAT}"
_PYYAML_TYPES = re.compile(_TYPED.encode())
_PYYAML_FLOAT = re.compile(_FLOAT)
#: plain scalars rapidyaml writes bare in JSON, and so as the same value as PyYAML
_BARE_IF_PLAIN = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|")
#: what no plain scalar may start with, for PyYAML (rapidyaml takes some as text)
_NOT_PLAIN_START = tuple(b" ]}:?@`%!&*|>'\"#,[{")

# Tier 2: a JSON string PyYAML might type, or one that starts as no plain
# scalar may (the lookbehind makes the quote an opening one; tier 1 sees
# the other such starts, %, @ and backtick).  The lookahead only makes the
# common miss fail fast.
_SUSPECT_STRING = re.compile(
    rb'"(?=[-+.0-9yYnNtTfFoO~=<"\]} ]|:\S)(?:(?<=[\s\[,{:]")[\]}: ]|(?:' + _TYPED.encode() + rb')?"(:?))')
#: rapidyaml's JSON writes any nan or inf spelling, quoted or not, as one of these
_REWRITTEN = (b'".nan"', b'".inf"', b'"-.inf"', b'"+.inf"')
# In ``{a: b #c\n}`` rapidyaml reads "b #c": a one-line string with " #" may
# be such a comment (one from a block scalar ends with a line break).
_ONE_LINE_WITH_HASH = re.compile(rb'"(?:[^"\\\n]|\\[^n])* #(?:[^"\\\n]|\\[^n])*"')

_PRINTABLE_ASCII = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])
#: compiled by ``re`` (and kept in its cache) with the first text beyond ASCII: ~3 ms, which every
#: command parsing YAML paid at import
_NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]"
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}\n")
_COLON_GLUED = re.compile(r":[\],}?]")  # "[a:]", "{a:?}": read differently in flow collections
#: an escaped blank, and the escapes for Unicode line breaks and spaces: rapidyaml garbles them
_ODD_ESCAPES = ("\\ ", "\\L", "\\P", "\\N", "\\_")
_ESCAPED_BREAK_THEN_BLANK = re.compile(r"\\\r?\n[ \t]*\r?\n")
# "- 'x' - y", "- [a] b:": rapidyaml reads on after a quoted or flow node of
# a sequence entry.  (Not anchored to a line start: 10x faster, a few more declines.)
_TEXT_AFTER_NODE = re.compile(
    r"""- +(?:'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|\[[^\]\n]*\]|\{[^}\n]*\})[ \t]+[^ \t\r\n#]""", re.S)
# the end of a quoted key: the quote, blanks, a colon, a blank or line break
_QUOTED_KEY_END = re.compile(r"""(["']) *:(?=[ \r\n]|\Z)""")

_FLOW_ML = ryml.FLOW_ML if ryml else 0
_NODE_PROPERTY = (ryml.KEYANCH | ryml.VALANCH | ryml.KEYREF | ryml.VALREF | ryml.KEYTAG | ryml.VALTAG) if ryml else 0
_KEY_PLAIN, _VAL_PLAIN = (ryml.KEY_PLAIN, ryml.VAL_PLAIN) if ryml else (0, 0)
_KEY, _VAL = (ryml.KEY, ryml.VAL) if ryml else (0, 0)

#: what a check concludes, in rising order: the worst one counts
_FINE, _MAYBE, _DECLINE = 0, 1, 2


class _Declined(Exception):
    pass


def load(text: str) -> Any:
    """The data of ``text`` exactly as PyYAML would load it, or ``DECLINED``."""
    if ryml is None:
        return DECLINED
    try:
        return _load(text)
    except Exception:  # whatever it is, PyYAML has the last word
        return DECLINED


def _load(text: str) -> Any:
    verdict = _text_verdict(text)
    if verdict == _DECLINE:
        return DECLINED
    encoded = text.encode("utf-8")
    if encoded.translate(None, _PRINTABLE_ASCII):  # something beyond printable ASCII
        if text.isascii() or _unusual_unicode(text):
            return DECLINED
    verdict = max(verdict, _bracket_verdict(encoded))
    if verdict == _DECLINE:
        return DECLINED
    parsed = _parse_quietly(encoded)
    if parsed is None:
        return DECLINED
    tree, out = parsed
    if b"#" in out and b" #" in out and _ONE_LINE_WITH_HASH.search(out):
        return DECLINED  # maybe a comment rapidyaml kept in a plain scalar of a flow collection
    verdict = max(verdict, _json_verdict(out))
    if verdict == _DECLINE or verdict == _MAYBE and not _tree_agrees(tree):
        return DECLINED
    return json.loads(out, parse_float=_float)


def _float(token: str) -> float:
    if not _PYYAML_FLOAT.fullmatch(token):
        raise _Declined  # e.g. 1e3: a number to rapidyaml, a string to PyYAML
    if token.startswith("-0."):
        raise _Declined  # rapidyaml writes -.5 so, which PyYAML keeps a string
    return float(token)


# -- tier 1: the text ---------------------------------------------------------------------

def _text_verdict(text: str) -> int:
    if "\t" in text or _COLON_GLUED.search(text):
        return _DECLINE
    if "\\" in text and (any(escape in text for escape in _ODD_ESCAPES)
                          or _ESCAPED_BREAK_THEN_BLANK.search(text)):
        return _DECLINE  # escapes rapidyaml gets wrong; an escaped line break before a blank line
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return _DECLINE  # a lone CR is a line break to YAML 1.1 only
    if _at_line_start(text, "%") or _at_line_start(text, "..."):
        return _DECLINE  # a directive, a document end marker
    if _block_scalar_trouble(text) or _multi_line_quoted_key(text):
        return _DECLINE
    if _TEXT_AFTER_NODE.search(text):
        return _DECLINE
    if any(_follows(text, char, "}]\"'", skip_blanks=True) for char in "&*!"):
        return _DECLINE  # "{}!", "{} !", "'x'&": garbage after a node, to PyYAML
    if _follows(text, "?", _NODE_START, skip_blanks=True):
        return _DECLINE  # an explicit "? key": rare in templates, and read differently
    if _follows(text, "!", _NODE_START, skip_blanks=True):
        return _DECLINE  # a tag: rare in templates, and a few in a flow collection crash rapidyaml
    if any(_follows(text, char, _NODE_START, skip_blanks=True) for char in "&*@`%"):
        return _MAYBE
    return _FINE


#: what comes before a node (blanks skipped), if not the start of the text: ": ", "- ",
#: "[", "{", ",", "? " or a line break
_NODE_START = "\n\r:-,[{?"


def _follows(text: str, char: str, before: str, skip_blanks: bool) -> bool:
    """Does ``char`` occur right after one of ``before`` (or at the start)?"""
    at = text.find(char)
    while at != -1:
        if _after(text, at, before, skip_blanks):
            return True
        at = text.find(char, at + 1)
    return False


def _after(text: str, at: int, before: str, skip_blanks: bool) -> bool:
    i = at - 1
    while skip_blanks and i >= 0 and text[i] == " ":
        i -= 1
    return i < 0 or text[i] in before


def _at_line_start(text: str, marker: str) -> bool:
    """Does ``marker`` start a line, indented or not?"""
    at = text.find(marker)
    while at != -1:
        if _after(text, at, "\n", skip_blanks=True):
            return True
        at = text.find(marker, at + 1)
    return False


def _block_scalar_trouble(text: str) -> bool:
    """A block scalar header other than a bare ``|``, ``|-`` or ``|+`` (an
    indentation indicator, a blank before the chomping one, a comment), or a
    block scalar ending the text without a line break: the two parsers keep
    different text."""
    for char in "|>":
        at = text.find(char)
        while at != -1:
            if not text.endswith("\n"):
                return True
            if _after(text, at, _NODE_START, skip_blanks=True):
                end = text.find("\n", at)
                if text[at + 1:end].rstrip(" \r") not in ("", "-", "+"):
                    return True
            at = text.find(char, at + 1)
    return False


def _multi_line_quoted_key(text: str) -> bool:
    """A quoted key whose opening quote may be on an earlier line (``"a\\n b": 1``):
    its line holds no other such quote, or an escaped or doubled one (to be safe)."""
    for quote, at in _quoted_key_ends(text):
        line = text[text.rfind("\n", 0, at) + 1:at]
        if quote not in line or ('\\"' if quote == '"' else "''") in line:
            return True
    return False


def _quoted_key_ends(text: str):
    """(quote, where) of each quote that ends a key: followed by a colon and a blank or line break."""
    if " :" in text:  # a blank before a colon is rare: only then the slower, thorough search
        yield from ((m.group(1), m.start()) for m in _QUOTED_KEY_END.finditer(text))
        return
    for quote in "\"'":
        at = text.find(quote + ":")
        while at != -1:
            if text[at + 2:at + 3] in ("", " ", "\n", "\r"):
                yield quote, at
            at = text.find(quote + ":", at + 2)


def _unusual_unicode(text: str) -> bool:
    """Characters PyYAML refuses, a byte order mark, or line breaks only YAML 1.1 knows."""
    return bool(re.search(_NON_PRINTABLE, text)) or any(c in text for c in "\ufeff\x85\u2028\u2029")


def _bracket_verdict(encoded: bytes) -> int:
    """Brackets that do not pair up decline; a line that leaves one open may be
    a multi-line flow collection, where the two parsers differ in the details."""
    skeleton = encoded.translate(None, _NOT_BRACKET)  # brackets and line breaks only
    if skeleton.count(b"[") != skeleton.count(b"]") or skeleton.count(b"{") != skeleton.count(b"}"):
        return _DECLINE
    while True:  # strike pairs closed on their own line, innermost first
        shorter = skeleton.replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(skeleton):
            break
        skeleton = shorter
    return _MAYBE if skeleton.strip(b"\n").translate(None, b"\n") else _FINE


# -- tier 2: the JSON -----------------------------------------------------------------------

def _json_verdict(out: bytes) -> int:
    """Might a JSON string have been a plain scalar PyYAML types or refuses?

    Keys are always JSON strings, so a key PyYAML might type is suspect.  A
    value is not when it is one rapidyaml writes bare when plain (``80``,
    ``true``): as a string it was quoted.  A string starting with a blank may
    be a key rapidyaml read as more indented than it is.  A nan or inf
    string declines: rapidyaml rewrote it.
    """
    verdict = _FINE
    for match in _SUSPECT_STRING.finditer(out):
        is_key = match.group(1)
        string = match.group()[:-1] if is_key else match.group()
        if string in _REWRITTEN:
            return _DECLINE
        if is_key is None or is_key or not _BARE_IF_PLAIN.fullmatch(string[1:-1]):
            verdict = _MAYBE
    return verdict


# -- tier 3: the tree ------------------------------------------------------------------------

def _tree_agrees(tree: Any) -> bool:
    """No node PyYAML would read differently: see the module's docstring."""
    node_type, key, val = tree.type, tree.key, tree.val
    for node in range(tree.size()):
        flags = node_type(node)
        if flags & (_NODE_PROPERTY | _FLOW_ML):
            return False
        if flags & _KEY and flags & _KEY_PLAIN and _plain_differs(key(node), is_key=True):
            return False
        if flags & _VAL and flags & _VAL_PLAIN and _plain_differs(val(node), is_key=False):
            return False
    return True


def _plain_differs(scalar: Any, is_key: bool) -> bool:
    scalar = bytes(scalar or b"")  # a memoryview into the tree; None for an empty value
    if not scalar:
        return is_key  # an empty key is null to PyYAML, "" in JSON
    if scalar[0] in _NOT_PLAIN_START:
        return True
    if not _PYYAML_TYPES.fullmatch(scalar):
        return False
    return is_key or not _BARE_IF_PLAIN.fullmatch(scalar)


# -- rapidyaml, quietly ---------------------------------------------------------------------

_stderr_lock = threading.Lock()


def _parse_quietly(encoded: bytes) -> tuple[Any, bytes] | None:
    """rapidyaml's tree of ``encoded`` and its JSON; ``None`` when it fails,
    cannot be kept quiet, or is not a single map.

    On an error rapidyaml's C++ side writes a report straight to file
    descriptor 2.  Only redirecting that descriptor silences it, and that
    would swallow other threads' output too; so the fast path runs only while
    this is the process's single thread (the command line, not the server).
    """
    if threading.active_count() > 1 or not _stderr_lock.acquire(blocking=False):
        return None
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        try:
            return _parse(encoded)
        except Exception:  # rapidyaml's errors; PyYAML will name the place
            return None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    finally:
        _stderr_lock.release()


def _parse(encoded: bytes) -> tuple[Any, bytes] | None:
    tree = ryml.Tree()
    tree.reserve(len(encoded) // 16 + 16)  # about a node per 17 bytes: no regrowth (2x faster when big)
    ryml.parse_in_arena(encoded, tree)
    node = tree.root_id()
    if tree.is_stream(node):
        if tree.num_children(node) != 1:
            return None
        node = tree.first_child(node)
    if not tree.is_map(node):
        return None  # templates and environments are maps; leave the rest to PyYAML
    return tree, ryml.emit_json_malloc(tree, node).encode("utf-8")
