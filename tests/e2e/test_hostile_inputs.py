"""Hostile inputs to the CLI: deep nesting, devices and oversized files, exploding functions.
Each gets one clear error naming its limit: no traceback, no RecursionError, no endless read."""

from __future__ import annotations

import json
import os

import pytest

from stoker.errors import ValidationFailed
from stoker.template.loader import read_file

HOT = "heat_template_version: 2018-08-31\n"


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", [
    HOT + "outputs:\n  o: {value: " + "[" * 5000 + "]" * 5000 + "}\n",
    '{"heat_template_version": "2018-08-31", "outputs": {"o": {"value": ' + "[" * 5000 + "]" * 5000 + "}}}",
    '{"heat_template_version": "2018-08-31", "outputs": {"o": {"value": '
    + '{"list_join": [",", [' * 600 + '"x"' + "]]}" * 600 + "}}}",
], ids=["yaml", "json", "function-chain"])
def test_deep_documents_are_one_clear_error(stoker, tmp_path, text):
    run = stoker.validate(str(_write(tmp_path, "deep.yaml", text)), fmt="table")
    assert run.exit_code == 1
    assert "nested more than 100 levels deep (max_nesting)" in run.output
    assert "Traceback" not in run.output and "RecursionError" not in run.output


def test_the_nesting_limit_is_configurable(stoker, tmp_path, monkeypatch):
    text = HOT + "outputs:\n  o: {value: " + "[" * 30 + "]" * 30 + "}\n"
    stoker.valid(str(_write(tmp_path, "t.yaml", text)))
    monkeypatch.setenv("STOKER_MAX_NESTING", "20")
    assert "more than 20 levels" in stoker.validate(str(tmp_path / "t.yaml"), fmt="table").expect(1).output


def test_deep_yaql_is_a_clear_error(stoker, tmp_path):
    value = {"yaql": {"expression": "(" * 5000 + "1" + ")" * 5000}}
    text = json.dumps({"heat_template_version": "2018-08-31", "outputs": {"o": {"value": value}}})
    run = stoker.validate(str(_write(tmp_path, "y.yaml", text)), fmt="table").expect(1)
    assert "max_nesting" in run.output and "recursion" not in run.output.lower()


def test_get_file_reads_only_regular_files_up_to_max_template_size(stoker, tmp_path):
    device = {"heat_template_version": "2018-08-31", "outputs": {"o": {"value": {"get_file": "/dev/zero"}}}}
    run = stoker.validate(str(_write(tmp_path, "zero.yaml", json.dumps(device))), fmt="table").expect(1)
    assert 'No content found in the "files" section for get_file' in run.output
    _write(tmp_path, "big.txt", "x" * (512 * 1024 + 1))
    big = {**device, "outputs": {"o": {"value": {"get_file": "big.txt"}}}}
    run = stoker.validate(str(_write(tmp_path, "big.yaml", json.dumps(big))), fmt="table").expect(1)
    assert "over the limit of 524288 bytes (max_template_size)" in run.output


def test_fifos_and_folders_are_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # nobody writes to it: opening it for reading would wait forever
    for path in (tmp_path / "fifo", tmp_path):
        with pytest.raises(ValidationFailed, match="not a regular file"):
            read_file(path)


def test_a_template_that_is_a_device_is_refused(stoker):
    run = stoker.validate("/dev/zero", fmt="table").expect(1)
    assert "not a regular file" in run.output


def test_repeat_over_three_200_item_lists_is_refused(stoker, tmp_path):
    items = [str(i) for i in range(200)]
    value = {"repeat": {"template": "<a><b><c>", "for_each": {"<a>": items, "<b>": items, "<c>": items}}}
    text = json.dumps({"heat_template_version": "2018-08-31", "outputs": {"o": {"value": value}}})
    run = stoker.resolve(str(_write(tmp_path, "r.yaml", text)), fmt="table")
    assert "max_value_size" in run.output and "Traceback" not in run.output
