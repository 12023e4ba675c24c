"""The CLI held to the server's standard for its own inputs: parameters, settings, names,
plug-in folders.  Each bad input is one clear line naming the place and the limit, exit 1,
no traceback."""

from __future__ import annotations

import pytest

JSON_PARAM = """heat_template_version: 2018-08-31
parameters:
  j: {type: json}
outputs:
  o: {value: {get_param: j}}
"""
DEEP = "[" * 10000 + "]" * 10000


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    return tmp_path / "home"


def _clean_failure(run, *parts: str) -> None:
    run.expect(1)
    assert "Traceback" not in run.output and "RecursionError" not in run.output, run.output
    for part in parts:
        assert part in run.output, run.output


def test_a_json_parameter_nested_10000_deep_is_one_clear_error(stoker, tmp_path, home):
    template = tmp_path / "t.yaml"
    template.write_text(JSON_PARAM)
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    for how in (["--parameter-file", f"j={deep}"], ["-P", f"j={DEEP}"]):
        _clean_failure(stoker("stack", "create", "-t", str(template), *how, "deep", "--wait"),
                       "parameters.j", "nested more than 100 levels deep (max_nesting)")
    _clean_failure(stoker("template", "validate", "-t", str(template), "--parameter-file", f"j={deep}"),
                   "max_nesting")
