"""The fast YAML path must give exactly what PyYAML gives, or decline.

PyYAML (YAML 1.1, as Heat reads templates) is the reference for what a
template means: ``loader._pyyaml``.  ``fastyaml.load`` parses with
rapidyaml for speed; it may give up (return ``fastyaml.DECLINED``) whenever it
is not sure, but what it does return must be *strictly* PyYAML's value: equal
values of the same types all the way down (``True`` is not ``1``, ``1`` is not
``1.0``, ``{1: 'a'}`` is not ``{'1': 'a'}``, ``'1e3'`` is not ``1000.0``), with
keys in the same order.  When PyYAML rejects a text, the fast path must decline
so that ``load()`` reports PyYAML's error.

So this file generates many texts -- data dumped as YAML and JSON, hand-built
YAML full of YAML 1.1 traps, and broken mutations of both -- and checks that
contract on each.  A few more tests check that the fast path really engages on
ordinary templates (declining everything would satisfy the contract and help
no one), and that ``load()`` reports errors where PyYAML places them without
rapidyaml printing anything.
"""

from __future__ import annotations

import json
import math
import re
import threading
from contextlib import suppress
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stoker.errors import ValidationFailed
from stoker.template import fastyaml, loader

ROOT = Path(__file__).resolve().parents[2]


# -- the contract ------------------------------------------------------------------


def strictly_equal(a, b) -> bool:
    """Equal values of identical types all the way down, dict keys in the same order.

    NaN equals NaN (PyYAML's ``.nan``), and ``-0.0`` is not ``0.0``.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            strictly_equal(ka, kb) and strictly_equal(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items())
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(map(strictly_equal, a, b))
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def check(text: str) -> None:
    """The contract for one text: the fast path declines or gives PyYAML's value."""
    fast = fastyaml.load(text)
    try:
        expected = loader._pyyaml(text)
    except Exception as error:  # YAMLError; ValueError for "0b_", UnicodeEncodeError for "\ud800"
        assert fast is fastyaml.DECLINED, (
            f"PyYAML rejects {text!r} ({type(error).__name__}: {error}),"
            f" but the fast path gave {fast!r}"
        )
        return
    assert fast is fastyaml.DECLINED or strictly_equal(fast, expected), (
        f"the fast path disagrees with PyYAML on {text!r}:\n"
        f"  fast:   {fast!r}\n  PyYAML: {expected!r}"
    )


@pytest.mark.parametrize(
    "a, b",
    [
        (True, 1),
        (1, 1.0),
        ({1: "a"}, {"1": "a"}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ([None], [""]),
        (0.0, -0.0),
        ("1e3", 1000.0),
        ({"a": [1, {"b": False}]}, {"a": [1, {"b": 0}]}),
    ],
)
def test_strict_equality_tells_apart_what_plain_equality_does_not(a, b):
    assert not strictly_equal(a, b)
    assert strictly_equal(a, a) and strictly_equal(b, b)


def test_strict_equality_takes_nan_as_equal_to_itself():
    assert strictly_equal({"x": [float("nan")]}, {"x": [float("nan")]})


# -- tricky scalars ----------------------------------------------------------------

#: Scalars whose meaning differs between YAML 1.1 (PyYAML), YAML 1.2, JSON and
#: Python, or that look like YAML syntax.  Used unquoted in hand-built YAML, and
#: as string values in generated data.
TRICKY = [
    # booleans and nulls in YAML 1.1, and near misses that are strings
    *"yes Yes YES no No NO on On ON off Off OFF y Y n N".split(),
    *"true True TRUE false False FALSE tRUE oN".split(),
    *"null Null NULL nULL ~".split(),
    "",
    # integers: octal, hex, binary, underscores, base 60
    *"0 00 -0 +0 +1 -1 07 08 0777 0o17 0x1F 0x1f -0x1F 0b101 0b 0x 0b_ 0x_".split(),
    *"1_000 1__0 _1 1_ 1:30 -1:30 1:60 190:20:30 12345678901234567890123".split(),
    # floats: YAML 1.1 floats need a dot, and a signed exponent
    *"1.5 1. 0. .5 -.5 +.5 -1.5 +1.5 1_000.5 1.0_0 -0.0 1:30.5 190:20:30.15".split(),
    *"1e3 1E3 1.5e3 1.0e3 1.0e+3 1.0E-3 1e-3 1e+3 .5e+3 1.0e+400 6.8523015e+5".split(),
    *".inf .Inf .INF -.inf +.inf .NaN .nan .NAN -.nan nan NaN inf -inf Infinity".split(),
    # timestamps (kept as the strings they were written as) and near misses
    "2016-10-14",
    "2016-1-4",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14T21:59:43Z",
    "2001-12-14 21:59:43.10 -5",
    "2002-12-14T21:59",
    # YAML indicators, alone and inside scalars
    *"= << - -- --- ... # '#' ? : :x x: x:y @x `x %x | > ! !x &x *x".split(),
    *"[x x] {x x} a,b x#y".split(),
    "- ",
    "a: b",
    "? x",
    "x #y",
    "x # y",
    # whitespace, quotes, backslashes, unicode, control characters
    "a b",
    "a  b",
    " a",
    "a ",
    "a\tb",
    "\ta",
    "a\\b",
    "\\n",
    '"x"',
    "'x'",
    'x"y',
    "x'y",
    "it's",
    "café",
    "日本語",
    "😀",
    "\u00a0",
    "\ufeff",
    "a\u2028b",
    "a\x85b",
    "\x7f",
    "\x00",
    "\x1b",
    "http://example.com:80/x?a=b#frag",
]

#: Places to put a token, unquoted (``{}`` is the token)
PLAIN_CONTEXTS = [
    "{}",
    "{}\n",
    "key: {}\n",
    "{}: value\n",
    "- {}\n",
    "[{}]\n",
    "[a, {}, b]\n",
    "{{key: {}}}\n",
    "{{{}: value}}\n",
    "outer:\n  inner: {}\n  next: 1\n",
    "- - {}\n  - x\n",
    "--- {}\n...\n",
    "key: {} # comment\n",
    "key: x\n  {}\n",  # continuation of a multi-line plain scalar
]


def single_quoted(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


#: Places to put a token as a quoted string: always the string itself to PyYAML
QUOTED_CONTEXTS = [
    lambda s: "key: " + single_quoted(s) + "\n",
    lambda s: "key: " + json.dumps(s) + "\n",
    lambda s: "key: " + json.dumps(s, ensure_ascii=False) + "\n",
    lambda s: single_quoted(s) + ": value\n",
    lambda s: "- " + json.dumps(s) + "\n",
    lambda s: "[" + single_quoted(s) + "]\n",
]


def in_every_context(token: str) -> list[str]:
    return [c.format(token) for c in PLAIN_CONTEXTS] + [c(token) for c in QUOTED_CONTEXTS]


@pytest.mark.parametrize("token", TRICKY, ids=repr)
def test_tricky_token_matches_pyyaml_or_declines(token):
    failures = []
    for text in in_every_context(token):
        try:
            check(text)
        except AssertionError as failure:  # report every context, not just the first
            failures.append(str(failure))
    assert not failures, "\n\n".join(failures)


#: Whole texts exercising YAML structure rather than scalar resolution
STRUCTURES = [
    # block scalars: styles, chomping, indentation indicators
    "a: |\n  line\n  more\n\n",
    "a: >\n  folded\n  text\n\n  para\n",
    "a: |-\n  x\n\n",
    "a: |+\n  x\n\n\nb: 1\n",
    "a: >+\n  x\n\n",
    "a: >-\n  x\n   indented\n  y\n",
    "a: |2\n    x\n  y\n",
    "a: >1\n  x\n",
    "a: |\n  # not a comment\n  x: y\n",
    "a: | # comment\n  x\n",
    "a: |\n\tx\n",
    "a: |\n  x\n \n  y\n",
    "- |\n  x\n- >\n  y\n",
    "|\n  root literal\n",
    # quoted scalars, escapes, folding
    'a: "\\n\\t\\u00e9\\x41\\/\\ \\0\\a\\b\\e\\N\\_\\L\\P\\U0001F600\\\\\\""\n',
    'a: "\\q"\n',
    'a: "\\x4"\n',
    'a: "\\ud83d\\ude00"\n',
    'a: "line\n  folded\n\n  kept"\n',
    'a: "escaped \\\n  break"\n',
    "a: 'it''s\n  folded'\n",
    "a: 'tab\there'\n",
    # multi-line plain scalars and comments
    "a: one\n  two\n\n  three\n",
    "a: one # c\n  two\n",
    "# only a comment\n",
    "",
    "   \n",
    "a: 1 # c\n# c\nb: 2\n",
    "a: x#y\n",
    # documents and directives
    "---\na: 1\n",
    "---\na: 1\n...\n",
    "%YAML 1.1\n---\na: 1\n",
    "%YAML 1.2\n---\na: yes\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    "a: 1\n---\nb: 2\n",
    "---\n---\n",
    "...\n",
    # anchors, aliases, tags, merge keys
    "a: &x 1\nb: *x\n",
    "a: &x [1, 2]\nb: *x\n",
    "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
    "d:\n  <<: [{x: 1}, {y: 2}]\n  x: 3\n",
    "d: {<<: {x: 1}}\n",
    "a: *nope\n",
    "a: !!str 1\n",
    "a: !!int '1'\n",
    "a: !!float 1\n",
    "a: !!bool yes\n",
    "a: !!null ''\n",
    "a: !!binary aGk=\n",
    "a: !custom x\n",
    "a: ! x\n",
    "a: !!set {x, y}\n",
    "a: !!omap [x: 1]\n",
    "!!map {a: 1}\n",
    # keys: duplicates, complex, non-string, empty
    "a: 1\na: 2\n",
    "a: 1\nb: 2\na: 3\n",
    "{a: 1, a: 2}\n",
    "? a\n: 1\n",
    "? [a, b]\n: 1\n",
    "? {a: 1}\n: 1\n",
    "? |\n  block key\n: v\n",
    "1: a\n",
    "1.5: a\n",
    "true: a\n",
    "null: a\n",
    "~: a\n",
    ": a\n",
    "'': a\n",
    '"": a\n',
    "'1': a\n",
    # flow collections
    "{a:b}\n",
    '{"a":1}\n',
    "{a: [1, {b: c}], d}\n",
    "[a: 1, b]\n",
    "[1, 2,]\n",
    "{a: 1,}\n",
    "[\n  a,\n  b\n]\n",
    "{a: 1\n}\n",
    "[a, [b, [c, [d]]]]\n",
    "[]\n",
    "{}\n",
    "a: []\nb: {}\n",
    # indentation and whitespace
    "a:\n- 1\n- 2\n",
    "a:\n  - 1\n  -  2\n",
    "- a: 1\n  b: 2\n- c\n",
    "-\n  a: 1\n",
    "a:\tb\n",
    "a: b\t\n",
    "a: 1\r\nb: |\r\n  x\r\n  y\r\n",
    "a: 1\rb: 2\r",
    "a: |\r  x\r",
    "\ufeffa: 1\n",
    "a: 1\n\x85b: 2\n",
    "a: 1\u2028b: 2\n",
    "a: x\u2028  y\n",
    # invalid texts
    "a: [1, 2\n",
    "a: b: c\n",
    "a:\n\t- x\n",
    "a: 'unclosed\n",
    '"a\n',
    "- a\nb: c\n",
    "a: 1\n a: 2\n",
    "a:\n  b: 1\n c: 2\n",
    "[a, b]]\n",
    "{a: 1}}\n",
    "a: @x\n",
    "a: `x\n",
    "%FOO bar\n---\na: 1\n",
    "a: \x00\n",
    "a: \x1b\n",
    "a: \ud800\n",
    # found by the generators below, kept as examples
    "a: |\n  x",  # a block scalar that ends the text without a line break
    "- |\n yes",
    "a: >\n  x",
    "a: >1\n     \n",
    "--- |\n...\n",
    "a\rb",  # a lone CR is a line break to YAML 1.1
    "a: x\ry\r",
    "false\r...\r",
    "{?: value}\n",
    "[?null, false]\n",
    "{a: b #c\n}\n",
    "{key: x #y}\n",
    '- "\\ \n    \\ \n    " # c\n',
    "]\n",
    "}\n",
    "a: ]\n",
    "{}!",
    "{} !",
    '"0"!',
    "|8c",
    ">\nx\n",
    "[:x]\n",
    "[x:]\n",
    '{"a"::"}',
    "\n? \n--\n --",
    # found by the stress runs (3.4 million examples each, twice); rapidyaml reads these otherwise
    'a: "\\\n\n "',  # an escaped line break, then a blank line
    '{a: "x\\\n\ny"}\n',
    "{a\n b: 1}",  # keys over two lines in a flow collection
    'x: {"a\n b": 1}\n',
    "x: [a\n b: 1]\n",
    "{a\n: }",
    "{a:?}",
    "x: [a:?]\n",
    "{' ':?.}",
    "a: | -\n",  # block scalar headers
    "a: > +\n  y\n",
    "a: |   -\n",
    "a: > #-\n a\n",
    "a: | #+\n  x\n\n",
    "a: [:",  # unclosed at the end
    "a: [ :\n",
    "{a: b\n\n c #d\n}\n",  # blank lines and comments in multi-line flow collections
    "x: {a: b,\n  c: d\n\n   e #f\n  }\n",
    "{a: 1\n\n}",
    "{a: yes\n\n}",
    "{~\n\n}",
    "x: [a b\n\n\n  ]\n",
    "{a: b\r\n\r\n}\r\n",
    "a: [a\n\r\n ]",
    "{\n---\n}",
    "a:\n- 'x' - y\n",  # text after a node of a sequence entry
    'a:\n- "x" b:\n',
    "a:\n- [x] - y\n",
    "a:\n- {b: c} d:\n",
    "a:\n- '''' -",
    'a:\n- "\\"" - y\n',
    'a:\n  "x\n  y": z\n',  # a quoted key over two lines
    "a: 'x\n  y': z\n",
    "x:\n  a:\n  - ''\n   b: 1\n",  # a key indented past its map
    " a:\n - 'x'\n  b: 1\n",
    "a:\n  - x\n  ...\n",  # an indented document end marker
    "[! ! ! !]",  # several tags in a flow collection crash rapidyaml itself
    "a: [!a !b !c !d x]\n",
    'a: "\\n\\L\\L"',  # escapes for Unicode line breaks
    'a: "\\\\_\\P\\L"',
    '"\\n\\L\\P":',
    "a: 'b\n c' :\n",  # a quoted key over two lines, a blank before its colon
    'a: "b\n c" : d\n',
    "a:\n  'b\n  c' : d\n",
    'a: "\n \\"":',
    "a: '\n ''':",
    "a:\n- 'b\n c' - d\n",  # text after a quoted entry over two lines
    'a:\n- "\n " -',
]


@pytest.mark.parametrize("text", STRUCTURES, ids=repr)
def test_structure_matches_pyyaml_or_declines(text):
    check(text)


# -- generated texts ---------------------------------------------------------------

strings = st.one_of(st.sampled_from(TRICKY), st.text(max_size=12))
scalars = st.one_of(strings, st.integers(), st.floats(), st.booleans(), st.none())
keys = st.one_of(strings, strings, strings, st.integers(-3, 3), st.booleans(), st.none())
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=16,
)

yaml_dump_styles = st.fixed_dictionaries(
    {
        "default_flow_style": st.sampled_from([False, True, None]),
        "width": st.sampled_from([8, 80, 10**6]),
        "allow_unicode": st.booleans(),
        "default_style": st.sampled_from([None, '"', "'"]),
        "indent": st.sampled_from([2, 4]),
        "explicit_start": st.booleans(),
    }
)
json_dump_styles = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 2]),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":")]),
    }
)


@st.composite
def dumped_data(draw) -> str:
    """Data written by PyYAML's emitter or by ``json`` in one of their styles."""
    value = draw(data)
    if draw(st.booleans()):
        return json.dumps(value, **draw(json_dump_styles))
    return yaml.safe_dump(value, sort_keys=False, **draw(yaml_dump_styles))


ESCAPES = [
    *r"\n \t \\ \" \/ \0 \a \b \e \N \_ \L \P \u00e9 \x41 \U0001F600 \ud83d \q \x4 \u12".split(),
    "\\ ",
    "\\\n  ",  # escaped line break
]
#: anchors and tags before a node (mostly none)
DECORATIONS = [""] * 5 + ["&a ", "&b ", "!!str ", "!!int ", "!!map ", "!custom ", "&a !!str "]
COMMENTS = ["", "", "", " # c", " #: x", "\t# tab"]
BLOCK_HEADERS = ["|", ">", "|-", ">-", "|+", ">+", "|2", ">1", "|-2", "|2-", ">+1", "| # c"]
#: lines between entries that carry no data: blank, comments, stray whitespace
FILLERS = ["", "", "", "\n", "\n# comment", "\n   # indented", "\n  ", "\n\t"]


@cache
def pick(*choices):
    """One of ``choices`` (cached: building strategies in every draw is slow)."""
    return st.sampled_from(choices)


plain = st.sampled_from(TRICKY)
plain_line = st.one_of(plain, st.text(st.characters(exclude_characters="\n\r"), max_size=10))
quoted_piece = st.one_of(
    st.sampled_from(ESCAPES),
    st.text(max_size=5).map(lambda s: s.replace('"', "").replace("\\", "")),
)


def indented(text: str, indent: int) -> str:
    return text.replace("\n", "\n" + " " * indent)


# Composite strategies with arguments are cached for speed, like ``pick``.


@cache
@st.composite
def double_quoted(draw, indent: int) -> str:
    return indented('"' + "".join(draw(st.lists(quoted_piece, max_size=5))) + '"', indent)


@cache
@st.composite
def inline_scalar(draw, indent: int) -> str:
    """A scalar on one line, or a multi-line flow scalar continued at ``indent``."""
    kind = draw(pick("plain", "plain", "plain", "single", "double", "multiline"))
    if kind == "plain":
        return draw(plain)
    if kind == "single":
        return indented(single_quoted(draw(strings)), indent)
    if kind == "double":
        return draw(double_quoted(indent))
    return indented(draw(plain) + draw(pick("\n", "\n\n")) + draw(plain), indent)


@cache
@st.composite
def block_scalar(draw, indent: int) -> str:
    line = st.one_of(plain_line, pick("", " " * (indent + 3), "  deeper", "\tx"))
    lines = draw(st.lists(line, max_size=4))
    body = "".join("\n" + (" " * indent + line if line else "") for line in lines)
    return draw(pick(*BLOCK_HEADERS)) + body


@cache
@st.composite
def flow_node(draw, depth: int) -> str:
    kind = draw(pick("seq", "map", "scalar") if depth < 2 else pick("scalar"))
    if kind == "scalar":
        form = draw(pick("plain", "plain", "single", "double"))
        if form == "plain":
            return draw(plain)
        return single_quoted(draw(strings)) if form == "single" else draw(double_quoted(2))
    items = []
    for _ in range(draw(st.integers(0, 3))):
        item = draw(flow_node(depth + 1))
        pair = draw(pick("", "", ": ", ":"))  # "{a}" and "[a: b]" are YAML too
        items.append(item + pair + draw(flow_node(depth + 1)) if pair else item)
    separator = draw(pick(", ", ",", ",\n  ", " , "))
    opening, closing = ("[", "]") if kind == "seq" else ("{", "}")
    return opening + separator.join(items) + draw(pick("", "", ",")) + closing


@cache
@st.composite
def node(draw, indent: int, depth: int) -> str:
    """A node as it follows ``key:``, ``-`` or ``---`` whose parent sits at column ``indent``."""
    decoration = draw(pick(*DECORATIONS))
    kinds = ["scalar", "scalar", "flow", "block", "empty", "alias"] + ["map", "seq"] * (depth < 3)
    kind = draw(pick(*kinds))
    if kind == "map":
        child = indent + draw(pick(1, 2, 4))
        return " " + decoration + "\n" + draw(block_mapping(child, depth + 1))
    if kind == "seq":
        child = max(0, indent + draw(pick(0, 2, 3)))
        return " " + decoration + "\n" + draw(block_sequence(child, depth + 1))
    if kind == "block":
        return " " + decoration + draw(block_scalar(indent + draw(pick(1, 2))))
    if kind == "flow":
        return " " + decoration + draw(flow_node(0)) + draw(pick(*COMMENTS))
    if kind == "empty":
        return (" " + decoration).rstrip()
    if kind == "alias":
        return " *" + draw(pick("a", "b"))
    return " " + decoration + draw(inline_scalar(indent + 1)) + draw(pick(*COMMENTS))


@cache
@st.composite
def mapping_key(draw, indent: int) -> str:
    form = draw(pick("word", "word", "plain", "single", "double", "complex"))
    if form == "word":
        return draw(pick("a", "b", "key", "<<"))
    if form == "plain":
        return draw(plain)
    if form == "single":
        return single_quoted(draw(strings))
    if form == "double":
        return draw(double_quoted(indent + 1))
    return "?" + draw(node(indent, 3)) + "\n" + " " * indent  # ": value" follows


@cache
@st.composite
def block_mapping(draw, indent: int, depth: int) -> str:
    entries = []
    for _ in range(draw(st.integers(1, 3))):
        key = draw(mapping_key(indent))
        entries.append(" " * indent + key + ":" + draw(node(indent, depth)) + draw(pick(*FILLERS)))
    return "\n".join(entries)


@cache
@st.composite
def block_sequence(draw, indent: int, depth: int) -> str:
    entries = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 3)) == 0:  # compact mapping: "- a: 1\n  b: 2"
            entry = draw(block_mapping(indent + 2, depth + 1))
            entries.append(" " * indent + "- " + entry[indent + 2 :])
        else:
            entries.append(" " * indent + "-" + draw(node(indent, depth)) + draw(pick(*FILLERS)))
    return "\n".join(entries)


DOCUMENT_HEADS = ["", "", "", "---", "--- # doc", "%YAML 1.1\n---", "%YAML 1.2\n---", "# c\n---"]
DOCUMENT_TAILS = ["", "", "\n", "\n...", "\n...\n", "\n---\nb: 2", "\n--- x", "\n# end", "\n\n\n"]


@st.composite
def yaml_documents(draw) -> str:
    """Hand-built YAML: block and flow collections, every scalar style, YAML 1.1 traps."""
    root = draw(
        st.one_of(block_mapping(0, 0), block_mapping(0, 0), block_sequence(0, 0), node(-1, 1))
    )
    head = draw(pick(*DOCUMENT_HEADS))
    return head + ("\n" if head else "") + root + draw(pick(*DOCUMENT_TAILS))


MUTATION_CHARS = [*":-?[]{},#&*!|>'\"%@`\\\t\n\r ", "\x00", "\ufeff", "\u2028", "\x85", "\ud800"]
inserted_char = st.sampled_from(MUTATION_CHARS) | st.characters(codec=None)
TRANSFORMS = [
    lambda t: t.replace("\n", "\r\n"),
    lambda t: t.replace("\n", "\r"),
    lambda t: "\ufeff" + t,
    lambda t: t.replace("\n", " \n"),
    lambda t: t.replace("  ", "\t"),
    lambda t: t.rstrip("\n"),
]


@st.composite
def mutated(draw, texts) -> str:
    """A text with a whole-text transformation, or a few characters deleted or inserted."""
    text = draw(texts)
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(TRANSFORMS))(text)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if text and at < len(text) and draw(st.booleans()):
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + draw(inserted_char) + text[at:]
    return text


any_text = st.one_of(
    dumped_data(),
    yaml_documents(),
    mutated(st.one_of(dumped_data(), yaml_documents())),
)


@pytest.mark.slow  # hundreds of generated documents
@settings(max_examples=400, deadline=None)
@given(dumped_data())
def test_dumped_data_matches_pyyaml_or_declines(text):
    check(text)


@pytest.mark.slow  # hundreds of generated documents
@settings(max_examples=800, deadline=None)
@given(yaml_documents())
def test_hand_built_yaml_matches_pyyaml_or_declines(text):
    check(text)


@pytest.mark.slow  # hundreds of generated documents
@settings(max_examples=600, deadline=None)
@given(mutated(st.one_of(dumped_data(), yaml_documents())))
def test_broken_yaml_matches_pyyaml_or_declines(text):
    check(text)


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=40))
def test_any_string_at_all_matches_pyyaml_or_declines(text):
    """Lone surrogates and control characters included: the fast path never raises."""
    check(text)


# -- the fast path engages on ordinary templates -----------------------------------

#: an anchor, alias, tag or merge key where a node or key starts
SPECIAL_NODE = re.compile(r"(?:^|[\s\[{,:-])(?:[&*!]\S|<<\s*:)", re.MULTILINE)


def corpus() -> list[Path]:
    files = [*ROOT.glob("tests/templates/**/*.yaml"), *ROOT.glob("examples/**/*.yaml")]
    return sorted(f for f in files if not SPECIAL_NODE.search(f.read_text(encoding="utf-8")))


def test_fast_path_accepts_most_plain_template_files():
    files = corpus()
    valid, declined = 0, []
    for path in files:
        text = path.read_text(encoding="utf-8")
        check(text)
        try:
            loader._pyyaml(text)
        except yaml.YAMLError:
            continue  # the deliberately broken ones
        valid += 1
        if fastyaml.load(text) is fastyaml.DECLINED:
            declined.append(str(path.relative_to(ROOT)))
    assert valid >= 50, f"expected a corpus of templates, found {valid} valid of {len(files)}"
    assert len(declined) <= 0.2 * valid, f"declined {len(declined)} of {valid}: {declined}"


HEAT_TEMPLATE = """\
heat_template_version: 2016-10-14

description: |
  A web server behind a port.
  Second line: with a colon, and a # that is not a comment.

parameters:
  port:
    type: number
    default: 80
    constraints:
      - range: {min: 1, max: 65535}
        description: a TCP port
  port_text:
    type: string
    default: "80"
  ratio:
    type: number
    default: 1.5
  enabled:
    type: boolean
    default: true
  flavor:
    type: string
    default: m1.small
    constraints:
      - allowed_values: [m1.small, m1.medium, 'm1.large']
  names:
    type: comma_delimited_list
    default: [a, b, c]
  empty:
    type: string
    default: ''

resources:
  port:
    type: OS::Neutron::Port
    properties:
      network: private
      fixed_ips:
        - subnet: {get_param: subnet}
  server:
    type: OS::Nova::Server
    depends_on: [port]
    properties:
      name: {list_join: ['-', [{get_param: 'OS::stack_name'}, web]]}
      flavor: {get_param: flavor}
      networks:
        - port: {get_resource: port}
      metadata: {enabled: {get_param: enabled}, weight: 0.25, count: 3}
      user_data:
        str_replace:
          template: |
            #!/bin/bash
            echo "listening on $PORT" > /tmp/port
          params:
            $PORT: {get_param: port}

outputs:
  address:
    description: The server's first address
    value: {get_attr: [server, first_address]}
  private:
    value: {get_attr: [server, networks, private, 0]}
"""

ORDINARY = [
    HEAT_TEMPLATE,
    "key: value\n",
    "a: 1\nb: -2\nc: 1.5\nd: true\ne: false\nf: null\ng:\nh: ''\n",
    "list:\n  - one\n  - 2\n  - {x: y}\n",
    "nested:\n  deeper:\n    deepest: [1, 2, 3]\n",
    "text: 'single ''quoted'''\nother: \"double \\\"quoted\\\"\"\n",
    "script: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    "# a comment\nkey: value  # another\n",
]


@pytest.mark.parametrize("text", ORDINARY, ids=lambda t: t.splitlines()[0])
def test_fast_path_accepts_ordinary_yaml(text):
    fast = fastyaml.load(text)
    assert fast is not fastyaml.DECLINED, "the fast path declined an ordinary template"
    assert strictly_equal(fast, loader._pyyaml(text))


def test_heat_template_means_what_pyyaml_says():
    data = loader.load(HEAT_TEMPLATE)
    assert data["heat_template_version"] == "2016-10-14"
    assert data["parameters"]["port"]["default"] == 80
    assert data["parameters"]["port_text"]["default"] == "80"
    assert data["parameters"]["enabled"]["default"] is True
    assert strictly_equal(data, loader._pyyaml(HEAT_TEMPLATE))


# -- load(), end to end ------------------------------------------------------------

INVALID = [
    "a: [1, 2\n",
    "a: b: c\n",
    "a:\n\t- x\n",
    "a: 'unclosed\n",
    "- a\nb: c\n",
    "a:\n  b: 1\n c: 2\n",
    "a: *nope\n",
    'a: "\\q"\n',
    "a: @x\n",
    "x: 1\n---\ny: 2\n",
]


def pyyaml_error(text: str) -> yaml.MarkedYAMLError:
    with pytest.raises(yaml.MarkedYAMLError) as info:
        loader._pyyaml(text)
    return info.value


def assert_load_fails_like_pyyaml(text: str, error: yaml.YAMLError) -> None:
    with pytest.raises(ValidationFailed) as failed:
        loader.load(text)
    problem = failed.value.problems[0]
    assert problem.code == "invalid-syntax"
    mark = getattr(error, "problem_mark", None)
    if mark is not None:
        assert (problem.line, problem.column) == (mark.line + 1, mark.column + 1)


@pytest.mark.parametrize("text", INVALID, ids=repr)
def test_load_reports_invalid_yaml_where_pyyaml_does(text):
    assert_load_fails_like_pyyaml(text, pyyaml_error(text))


@pytest.mark.parametrize(
    "text", ["a: 0b_\n", "a: 0x_\n", "a: !!int abc\n", "a: !!float x\n", "a: \ud800\n"], ids=repr
)
def test_load_reports_pyyaml_errors_that_are_not_yaml_errors_as_invalid_syntax(text):
    """PyYAML raises ValueError or UnicodeEncodeError here; load() still owes a ValidationFailed."""
    with pytest.raises(ValidationFailed) as failed:
        loader.load(text)
    assert failed.value.problems[0].code == "invalid-syntax"


@pytest.mark.parametrize("text", INVALID, ids=repr)
def test_load_of_invalid_yaml_prints_nothing(text, capfd):
    """rapidyaml's C++ error handler writes to fd 2; load() must keep it quiet."""
    with suppress(ValidationFailed):  # raising it is the test above
        loader.load(text)
    assert capfd.readouterr() == ("", "")


def test_load_of_invalid_yaml_prints_nothing_while_other_threads_run(capfd):
    """As in the API server, where requests are handled in a pool of threads."""
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        for text in INVALID:
            with suppress(ValidationFailed):
                loader.load(text)
    finally:
        done.set()
        other.join()
    assert capfd.readouterr() == ("", "")


def parses(text: str) -> bool:
    try:
        loader._pyyaml(text)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("text", ORDINARY + [t for t in STRUCTURES if parses(t)], ids=repr)
def test_load_gives_pyyaml_value(text):
    assert strictly_equal(loader.load(text), loader._pyyaml(text))


# capfd is read (and so emptied) in every example: it may be shared between them
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=any_text)
def test_load_agrees_with_pyyaml_and_prints_nothing(text, capfd):
    assume(not text.lstrip().startswith("{"))  # JSON goes first, by design
    try:
        expected = loader._pyyaml(text)
    except yaml.YAMLError as error:
        assert_load_fails_like_pyyaml(text, error)
    except Exception:
        assume(False)  # PyYAML's ValueErrors: see the test above
    else:
        if _contains_itself(expected):  # a recursive alias: nothing could walk it, so refused
            with pytest.raises(ValidationFailed, match="max_nesting"):
                loader.load(text)
        else:
            assert strictly_equal(loader.load(text), expected)
    assert capfd.readouterr() == ("", "")


def _contains_itself(value, inside=()) -> bool:
    if not isinstance(value, (dict, list)):
        return False
    if any(value is outer for outer in inside):
        return True
    children = value.values() if isinstance(value, dict) else value
    return any(_contains_itself(child, (*inside, value)) for child in children)
