"""The CLI held to the server's standard for its own inputs: parameters, settings, names,
plug-in folders.  Each bad input is one clear line naming the place and the limit, exit 1,
no traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

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
                       f"{how[0]} j", "nested more than 100 levels deep (max_nesting)")
    _clean_failure(stoker("template", "validate", "-t", str(template), "--parameter-file", f"j={deep}"),
                   "max_nesting")


@pytest.mark.parametrize("variable, value", [("STOKER_MAX_RESOURCES", "abc"), ("STOKER_MAX_NESTING", "-1"),
                                             ("STOKER_LOCK_TIMEOUT", "soon")])
def test_a_bad_setting_in_the_environment_is_one_line_naming_it(stoker, home, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    run = stoker("template", "validate", "-t", "valid/aliases.yaml")
    _clean_failure(run, f"ERROR: {variable} must be a positive")
    assert len(run.output.strip().splitlines()) == 1


@pytest.mark.parametrize("text, expected", [
    ("[limits]\nmax_nestin = 5\n", "[limits] max_nestin is not a limit (the limits are max_nesting,"),
    ("[limits]\nmax_nesting = lots\n", "[limits] max_nesting must be a positive whole number, not 'lots'"),
    ("[api]\nmax_resources_per_stack = 0\n", "[api] max_resources_per_stack must be a positive whole number"),
    ("max_nesting = 5\n", "File contains no section headers"),
], ids=["misspelt", "not-a-number", "api-zero", "no-section"])
def test_a_bad_setting_in_stoker_conf_names_the_file_and_key(stoker, home, text, expected):
    home.mkdir()
    (home / "stoker.conf").write_text(text)
    run = stoker("stack", "list")
    _clean_failure(run, f"ERROR: {home / 'stoker.conf'}: {expected}")
    assert len(run.output.strip().splitlines()) == 1


def test_a_database_made_at_a_db_url_path_is_private(stoker, home, tmp_path):
    stoker("--db-url", f"sqlite:///{tmp_path / 'mine.db'}", "stack", "list").expect(0)
    assert (tmp_path / "mine.db").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("url, expected", [
    ("sqlite:///{tmp}/missing/folder/s.db", "the folder {tmp}/missing/folder does not exist"),
    ("nosuchdialect://x/y", "not a SQLAlchemy database URL"),
    ("postgresql+psycopg://someone:sekrit@127.0.0.1:1/db", "postgresql+psycopg://someone:***@127.0.0.1:1/db"),
], ids=["missing-folder", "unknown-dialect", "server-away"])
def test_a_database_that_cannot_be_opened_is_one_line_naming_the_url(stoker, home, tmp_path, url, expected):
    run = stoker("--db-url", url.format(tmp=tmp_path), "stack", "list")
    _clean_failure(run, "ERROR: cannot open the database ", expected.format(tmp=tmp_path))
    assert len(run.output.strip().splitlines()) == 1 and "sekrit" not in run.output
    assert not (tmp_path / "missing").exists()


def _value_template(value: object, extra: str = "") -> str:
    return ("heat_template_version: 2018-08-31\n" + extra + "resources:\n  v:\n    type: OS::Heat::Value\n"
            "    properties:\n      value: " + json.dumps(value) + "\n")


ITEMS = [str(i) for i in range(200)]
BOMBS = {
    "repeat": _value_template({"repeat": {"template": {"k": "<a><b><c>"},
                                          "for_each": {"<a>": ITEMS, "<b>": ITEMS, "<c>": ITEMS}}}),
    "str_replace": _value_template({"str_replace": {"template": {"get_param": "t"},
                                                    "params": {"a": {"get_param": "v"}}}},
                                   "parameters:\n  t: {type: string, default: " + "a" * 100_000 + "}\n"
                                   "  v: {type: string, default: " + "b" * 100_000 + "}\n"),
    "yaql": _value_template({"yaql": {"expression": "range(0, 100000000).select($)"}}),
}
REFUSALS = {"repeat": ('The result of "repeat"', "(max_value_size)"),
            "str_replace": ('The result of "str_replace"', "(max_value_size)"),
            "yaql": ('The "yaql" expression went over its limits', "[yaql-limit]")}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_template_validate_refuses_the_bombs_create_refuses(stoker, tmp_path, home, bomb):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMBS[bomb])
    for command in (("template", "validate"), ("stack", "create", "b", "--wait")):
        run = stoker(*command, "-t", str(path))
        _clean_failure(run, *REFUSALS[bomb])
        assert "(an error at create)" not in run.output


ONE = "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::None}\n"


@pytest.mark.parametrize("name", ["a/b", "..", "a\x07b", "a" * 5000, "1x"], ids=["slash", "dots", "bell", "long", "digit"])
def test_the_cli_takes_the_stack_names_the_api_takes(stoker, tmp_path, home, name):
    template = tmp_path / "one.yaml"
    template.write_text(ONE)
    run = stoker("stack", "create", "-t", str(template), name, "--wait")
    _clean_failure(run, "Invalid stack name", 'must contain only alphanumeric or "_-." characters')
    assert "\x07" not in run.output and len(run.output) < 400
    assert stoker("stack", "list", "-f", "json").expect(0).json == []


def test_control_characters_in_resource_and_output_names_are_refused_and_never_printed(stoker, tmp_path, home):
    template = tmp_path / "names.json"
    template.write_text(json.dumps({"heat_template_version": "2018-08-31",
                                    "resources": {"r\x07\u202e": {"type": "OS::Heat::None"}},
                                    "outputs": {"o\x00": {"value": 1}}}))
    run = stoker("template", "validate", "-t", str(template))
    _clean_failure(run, r"resources.r\x07\u202e: a name in resources may not hold control or format characters",
                   r"outputs.o\x00:")
    assert not any(ch in run.output for ch in "\x07\u202e\x00")


def test_a_value_with_terminal_escapes_is_shown_escaped_in_a_table(stoker, tmp_path, home):
    template = tmp_path / "v.yaml"
    template.write_text(json.dumps({"heat_template_version": "2018-08-31",
                                    "outputs": {"o": {"value": "\x1b]0;owned\x07\u202etxt"}}}))
    stoker("stack", "create", "-t", str(template), "v", "--wait").expect(0)
    run = stoker("stack", "output", "show", "v", "o", "-f", "table").expect(0)
    assert r"\x1b]0;owned\x07\u202etxt" in run.output and "\x1b" not in run.output


SLOW = """heat_template_version: 2016-10-14
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one, wait_secs: 3}
  second:
    type: OS::Heat::TestResource
    depends_on: first
    properties: {value: two}
"""
#: bounds, not measurements
SETTLE_BOUND = 60


def _status(stoker, name: str) -> str:
    return stoker("stack", "show", name, "-f", "json").expect(0).json["stack_status"]


def test_sigterm_of_create_wait_hands_the_stack_to_an_engine_that_finishes_it(stoker, tmp_path, home):
    template = tmp_path / "slow.yaml"
    template.write_text(SLOW)
    command = subprocess.Popen([sys.executable, "-m", "stoker", "stack", "create", "-t", str(template), "sl",
                                "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + SETTLE_BOUND
    while "[first]: CREATE_IN_PROGRESS" not in (line := command.stderr.readline()):
        assert line and time.monotonic() < deadline, "the create did not start"
    command.send_signal(signal.SIGTERM)
    _, err = command.communicate(timeout=SETTLE_BOUND)
    assert command.returncode == 128 + signal.SIGTERM and "Traceback" not in err
    assert "stopped by SIGTERM: the action goes on in an engine process of its own" in err
    while _status(stoker, "sl") == "CREATE_IN_PROGRESS" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _status(stoker, "sl") == "CREATE_COMPLETE"
    events = stoker("stack", "event", "list", "sl", "-f", "json").expect(0).json
    started = [e["resource_name"] for e in events if e["resource_status"] == "CREATE_IN_PROGRESS"]
    assert started.count("first") == 1 and started.count("second") == 1  # nothing made twice


PLUGINS = {
    "syntax.py": "x = 1\ndef resource_mapping(:\n    return {}\n",
    "raises.py": "x = 1\nraise RuntimeError('boom')\n",
    "loops.py": "while True:\n    pass\n",
    "exits.py": "import os\nos._exit(0)\n",
    "override.py": "from stoker.resources.resource import Resource\n\n\nclass Mine(Resource):\n    pass\n\n\n"
                   "def resource_mapping():\n    return {'OS::Heat::None': Mine, 'My::Good': Mine}\n",
}


def test_broken_plugins_are_each_a_warning_and_never_hang_or_end_the_command(tmp_path, home):
    folder = tmp_path / "plugins"
    folder.mkdir()
    for name, text in PLUGINS.items():
        (folder / name).write_text(text)
    template = tmp_path / "good.yaml"
    template.write_text("heat_template_version: 2018-08-31\nresources:\n  g: {type: My::Good}\n")
    done = subprocess.run([sys.executable, "-m", "stoker", "--plugin-dir", str(folder), "template", "validate",
                           "-t", str(template)], capture_output=True, text=True, timeout=SETTLE_BOUND,
                          env={**os.environ, "STOKER_PLUGIN_IMPORT_TIMEOUT": "1"})
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING: plug-in ")]
    expected = [f"{folder / 'exits.py'}: ended the process while being imported",
                f"{folder / 'loops.py'}: did not finish importing within 1 s",
                f"{folder / 'override.py'}: replaces the built-in resource type OS::Heat::None",
                f"{folder / 'raises.py'}:2: RuntimeError: boom",
                f"{folder / 'syntax.py'}:2: SyntaxError: "]
    assert len(warnings) == len(expected), done.stderr
    for line, start in zip(warnings, expected):
        assert line.startswith("WARNING: plug-in " + start), (line, start)


def test_a_missing_plugin_folder_is_refused(stoker, home, tmp_path):
    run = stoker("--plugin-dir", str(tmp_path / "nowhere"), "stack", "list")
    assert run.exit_code == 2 and "Traceback" not in run.output
    assert f"Directory '{tmp_path / 'nowhere'}' does not exist" in run.output
