"""Heat's own results for its intrinsic functions, replayed through Stoker.

Each line of ``data/heat-functions.jsonl`` (recorded from Heat, see ``data/README.md``) is a whole template
whose output ``result`` holds the function under test, the parameters to pass,
and what Heat gave: a value (null when the output's condition is false) or an
error.  For errors Stoker must fail with its own error (``ValidationFailed`` or
``FunctionError``) whose message names the function or says what Heat said.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stoker.errors import FunctionError, ValidationFailed
from stoker.template.resolve import resolve_template

CASES_FILE = Path(__file__).with_name("data") / "heat-functions.jsonl"


def _load_cases() -> list:
    if not CASES_FILE.is_file():
        raise FileNotFoundError(f"conformance cases not found at {CASES_FILE}")
    lines = [line for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line) for line in lines]


CASES = _load_cases()


def _case_id(index_case) -> str:
    index, case = index_case
    return f"{index:03d}-{case['name']}"


def _function_name(template: dict) -> str | None:
    """The function under test: the first function-like key in the output value."""
    value = template["outputs"]["result"]["value"]
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    for section in ("conditions",):
        for definition in (template.get(section) or {}).values():
            if isinstance(definition, dict) and len(definition) == 1:
                return next(iter(definition))
    return None


def _messages(exc: Exception) -> list[str]:
    """The messages only: the path names the function whatever the error says."""
    if isinstance(exc, ValidationFailed):
        return [p.message for p in exc.problems]
    return [exc.message] if isinstance(exc, FunctionError) else [str(exc)]


def _key_phrase(heat_message: str) -> str:
    """The start of Heat's message, without its ``.path:`` prefix and quoting."""
    text = re.sub(r"^\.[\w.\[\]]*: ", "", heat_message).strip("'\"")
    return text[:24]


def test_case_file_is_complete():
    assert len(CASES) == 158


@pytest.mark.parametrize("index_case", list(enumerate(CASES)), ids=_case_id)
def test_heat_function_case(index_case):
    _, case = index_case
    expect = case["expect"]
    if "value" in expect:
        result = resolve_template(case["template"], case["parameters"])
        assert result["outputs"]["result"] == expect["value"]
        return

    with pytest.raises((ValidationFailed, FunctionError)) as caught:
        resolve_template(case["template"], case["parameters"])
    messages = _messages(caught.value)
    name = _function_name(case["template"])
    phrase = _key_phrase(expect["error"]["message"])
    assert any(
        (name and name in message) or phrase.lower() in message.lower() for message in messages
    ), f"expected an error about {name!r} ({phrase!r}), got {messages}"
