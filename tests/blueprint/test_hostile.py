"""The blueprint half held to the hostile standard (issue 21): bad input is refused with a clear
message naming its place and its limit, nothing hangs, nothing is half-stored, nothing secret shows.

Commands that hung on main run as child processes with a deadline, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from engine.helpers import Run
from engine.helpers import alive as _alive

CLI = "import sys; from stoker.cli import main; main(sys.argv[1:], prog_name='stoker')"
HEAD = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
TYPE_PQ = ("node_types:\n  t:\n    derived_from: cloudify.nodes.Root\n"
           "    properties:\n      p: {default: 1}\n      q: {default: 1}\n")


def stoker(sqlite_url: str, *args, deadline: float = 60) -> Run:
    """``stoker --db-url URL ARGS`` in a child process that must answer before ``deadline``."""
    argv = ["--db-url", sqlite_url, *map(str, args)]
    done = subprocess.run([sys.executable, "-c", CLI, *argv], capture_output=True, text=True, timeout=deadline,
                          env=os.environ.copy())
    return Run(argv, done.returncode, done.stdout, done.stderr)


# -- 1. get_property / get_input cycles ---------------------------------------------------------
PROPERTY_CYCLE = HEAD + TYPE_PQ + """\
node_templates:
  a:
    type: t
    properties:
      p: {get_property: [b, q]}
  b:
    type: t
    properties:
      q: {get_property: [a, p]}
"""
INPUT_CYCLE = HEAD + """\
inputs:
  x: {default: {get_input: y}}
  y: {default: {get_input: x}}
node_templates:
  a:
    type: cloudify.nodes.Root
    properties: {}
outputs:
  o: {value: {get_input: x}}
"""


@pytest.mark.parametrize("text, cycle", [(PROPERTY_CYCLE, "a.p -> b.q -> a.p"), (INPUT_CYCLE, "x -> y -> x")])
def test_reference_cycles_are_named_at_validate_and_create(sqlite_url, write, text, cycle):
    path = write("cycle.yaml", text)
    refused = stoker(sqlite_url, "blueprint", "validate", path).expect(1)
    assert f"function call detected: {cycle}" in refused.stderr
    assert "[reference-cycle]" in refused.stderr
    refused = stoker(sqlite_url, "blueprint", "upload", path, "-b", "bp").expect(1)
    assert cycle in refused.stderr


PREPARE = """
import sys
from stoker.blueprint.deployment import prepare
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.parser import parse_blueprint
plan = parse_blueprint(sys.argv[1])
plan["nodes"][0]["properties"].update(p={"get_property": ["SELF", "q"]}, q={"get_property": ["SELF", "p"]})
try:
    prepare(plan)
except BlueprintError as exc:
    print(exc)
"""


def test_a_cycle_is_refused_before_creation_evaluates_anything():
    """``prepare`` (deployment creation) checks too: a plan stored before the check existed is refused."""
    done = subprocess.run([sys.executable, "-c", PREPARE, HEAD + TYPE_PQ + "node_templates:\n  a: {type: t}\n"],
                          capture_output=True, text=True, timeout=60)
    assert "get_property function call detected: a.p -> a.q -> a.p" in done.stdout, done.stdout + done.stderr


def test_a_cycle_through_given_inputs_is_refused(cli, write):
    """Input values are data, but a value that is a get_input call is followed: a loop ends with an error."""
    path = write("bp.yaml", HEAD + "inputs:\n  x: {}\nnode_templates:\n  a:\n    type: cloudify.nodes.Root\n"
                                   "outputs:\n  o: {value: {get_input: x}}\n")
    cli("blueprint", "upload", path, "-b", "bp").expect(0)
    refused = cli("deployment", "create", "d", "-b", "bp", "-i", '{"x": {"get_input": "x"}}').expect(1)
    assert "circular get_input function call detected" in refused.stderr
    assert cli("deployment", "list", "-f", "json").expect(0).json == []


def test_a_deep_list_in_an_input_is_no_loop(cli, write):
    deep: list = ["bottom"]
    for _ in range(90):
        deep = [deep]
    path = write("bp.yaml", HEAD + "inputs:\n  x: {default: " + json.dumps(deep) + "}\n"
                 "node_templates:\n  a:\n    type: cloudify.nodes.Root\noutputs:\n  o: {value: {get_input: x}}\n")
    cli("blueprint", "upload", path, "-b", "bp").expect(0)
    created = cli("deployment", "create", "d", "-b", "bp")
    assert "loop" not in created.output
    created.expect(0)
    shown = cli("deployment", "outputs", "d", "-f", "json").expect(0).json
    assert json.dumps(shown).count("[") >= 91


# -- 5. inputs and parameters bounded -----------------------------------------------------------
PLAIN = HEAD + "inputs:\n  x: {default: 1}\nnode_templates:\n  a: {type: cloudify.nodes.Root}\n"
HOT_JSON = ("heat_template_version: 2018-08-31\nparameters:\n  j: {type: json, default: {}}\n"
            "  s: {type: string, default: x}\nresources: {}\noutputs:\n  s: {value: {get_param: s}}\n")
DEEP = "[" * 10_000 + "]" * 10_000


def _deep_file(write):
    return write("deep.yaml", "x: " + DEEP + "\n")


@pytest.mark.parametrize("given, limit_name", [
    (lambda write: ["-i", _deep_file(write)], "max_nesting"),
    (lambda write: ["-i", "x=" + DEEP], "max_nesting"),
    (lambda write: ["-i", write("big.yaml", "x: " + "a" * 10_000_000 + "\n")], "max_template_size"),
    (lambda write: ["-i", write("many.json", json.dumps({f"k{i}": 1 for i in range(700_000)}))],
     "max_template_size"),
])
def test_deployment_inputs_are_bounded(sqlite_url, cli, write, given, limit_name):
    cli("blueprint", "upload", write("bp.yaml", PLAIN), "-b", "bp").expect(0)
    refused = stoker(sqlite_url, "deployment", "create", "d", "-b", "bp", *given(write), deadline=30).expect(1)
    assert f"({limit_name})" in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert cli("deployment", "list", "-f", "json").expect(0).json == []


def test_a_long_key_value_is_never_a_path(cli, write):
    cli("blueprint", "upload", write("bp.yaml", PLAIN), "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp", "-i", "x=" + "v" * 10_000).expect(0)
    assert cli("deployment", "inputs", "d", "-f", "json").expect(0).json == {"x": "v" * 10_000}
    cli("execution", "start", "install", "-d", "d", "-p", "y=" + "v" * 10_000).expect(1)


def test_workflow_parameters_are_bounded(cli, write):
    cli("blueprint", "upload", write("bp.yaml", PLAIN), "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp").expect(0)
    refused = cli("execution", "start", "install", "-d", "d", "-p", "x=" + DEEP).expect(1)
    assert "-p x: the value is nested more than 100 levels deep (max_nesting)" in refused.stderr
    assert cli("execution", "list", "-f", "json").expect(0).json == []


@pytest.mark.parametrize("given, message", [
    (lambda write: ["-P", "j=" + DEEP], "-P j: the value is nested more than 100 levels deep (max_nesting)"),
    (lambda write: ["--parameter-file", f"j={write('deep.txt', DEEP)}"], "--parameter-file j: the value is nested"),
    (lambda write: ["-e", write("env.yaml", "parameters:\n  j: '" + DEEP + "'\n")], "-e parameters j: the value"),
    (lambda write: ["-P", "s=" + "x" * 20_000], "-P s would be 20002 bytes or more, over the limit of 10000 bytes "
                                                "(max_value_size)"),
])
def test_template_parameters_are_bounded(sqlite_url, write, monkeypatch, given, message):
    monkeypatch.setenv("STOKER_MAX_VALUE_SIZE", "10000")  # a command line cannot hold the default's million
    template = write("t.yaml", HOT_JSON)
    for command in (["stack", "create", "s", "-t", template, "--wait"], ["template", "validate", "-t", template]):
        refused = stoker(sqlite_url, *command, *given(write), deadline=30).expect(1)
        assert message in refused.stderr and "Traceback" not in refused.stderr, refused.stderr


def test_a_long_parameter_is_a_value(cli, write):
    shown = cli("stack", "create", "s", "-t", write("t.yaml", HOT_JSON), "-P", "s=" + "v" * 10_000, "--wait",
                "-f", "json").expect(0)
    assert "v" * 10_000 in shown.stdout


# -- 2. scale bounded ---------------------------------------------------------------------------
def test_scale_is_bounded_before_anything_is_planned(sqlite_url, cli, write):
    cli("blueprint", "upload", write("bp.yaml", PLAIN), "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp").expect(0)
    cli("install", "d").expect(0)
    for delta, words in (("100000", "would have 100001 node instances, more than the limit of 100000"),
                         ("1000000", "would have 1000001 node instances"),
                         ("-1000000", "would have -999999 instances")):
        refused = stoker(sqlite_url, "execution", "start", "scale", "-d", "d", "-p", "scalable_entity_name=a",
                         "-p", f"delta={delta}", deadline=30).expect(1)
        assert words in refused.stderr and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert [e["workflow_id"] for e in cli("execution", "list", "-f", "json").expect(0).json] == ["install"]
    assert len(cli("node-instance", "list", "-d", "d", "-f", "json").expect(0).json) == 1


# -- 7. validate refuses what install would -----------------------------------------------------
def test_validate_refuses_scripts_install_would_refuse(cli, write, tmp_path):
    (tmp_path / "outside.sh").write_text("#!/bin/sh\ntouch ran\n")
    path = write("bp/b.yaml", HEAD + "node_templates:\n  n:\n    type: cloudify.nodes.Root\n    interfaces:\n"
                                   "      cloudify.interfaces.lifecycle:\n        create: ../outside.sh\n"
                                   "        start: scripts/missing.sh\n")
    refused = cli("blueprint", "validate", path).expect(1)
    assert "script ../outside.sh: resource ../outside.sh is outside the blueprint's folder" in refused.stderr
    assert "script scripts/missing.sh: resource scripts/missing.sh not found" in refused.stderr
    cli("blueprint", "upload", path, "-b", "bp").expect(1)
    assert cli("blueprint", "list", "-f", "json").expect(0).json == []


# -- 4. hidden secrets and inputs never shown or stored in clear -------------------------------
HIDDEN = HEAD + """\
inputs:
  h: {hidden: true, default: hidden-input-value}
node_templates:
  n:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create:
          implementation: returns.sh
          inputs: {pw: {get_secret: pw}}
outputs:
  secret: {value: {get_secret: pw}}
  derived: {value: {concat: ["user:", {get_secret: pw}]}}
  input: {value: {get_input: h}}
  returned: {value: {get_attribute: [n, copied]}}
  plain: {value: shown}
capabilities:
  secret: {value: {get_secret: pw}}
  plain: {value: shown}
"""


def test_hidden_values_are_masked_in_outputs_and_sealed_in_events(cli, write, sqlite_url):
    write("returns.sh", 'ctx instance runtime-properties copied "$pw"\nctx returns "$pw"\n')
    cli("secret", "create", "pw", "-s", "very-secret-pw", "--hidden").expect(0)
    cli("blueprint", "upload", write("b.yaml", HIDDEN), "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp").expect(0)
    cli("install", "d").expect(0)
    assert cli("deployment", "outputs", "d", "-f", "json").expect(0).json == {
        "secret": "******", "derived": "******", "input": "******", "returned": "******", "plain": "shown"}
    assert cli("deployment", "capabilities", "d", "-f", "json").expect(0).json == {"secret": "******",
                                                                                  "plain": "shown"}
    execution = cli("execution", "list", "-f", "json").expect(0).json[0]["id"]
    events = cli("event", "list", "-e", execution, "--include-logs", "-f", "json").expect(0).json
    assert any(e.get("event_type") == "task_succeeded" for e in events)
    from sqlalchemy import create_engine, text

    with create_engine(sqlite_url).connect() as conn:
        stored = " ".join(str(row) for row in conn.execute(text("SELECT * FROM execution_event")))
    assert "very-secret-pw" not in stored and "very-secret-pw" not in json.dumps(events)


# -- 3. a killed execution's scripts are killed before anyone acts on it ---------------------------
SCRIPT = """\
pids={folder}/pids
first=$(head -n 1 $pids 2>/dev/null)
echo $$ >> $pids
if [ -z "$first" ]; then sleep 120; exit 0; fi
state=$(cut -d ' ' -f 3 /proc/$first/stat 2>/dev/null)
if [ -n "$state" ] && [ "$state" != Z ]; then echo alive > {folder}/seen; else echo gone > {folder}/seen; fi
"""


def _wait_for(path, deadline: float = 60):
    end = time.monotonic() + deadline
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < end, f"{path} never written"
        time.sleep(0.05)


@pytest.mark.parametrize("action", ["resume", "cancel", "new execution", "deployment delete"])
def test_a_killed_executions_script_is_killed_before_anyone_acts(sqlite_url, cli, write, tmp_path, action):
    import signal

    write("bp/create.sh", SCRIPT.format(folder=tmp_path))
    path = write("bp/b.yaml", HEAD + "node_templates:\n  n:\n    type: cloudify.nodes.Root\n    interfaces:\n"
                                   "      cloudify.interfaces.lifecycle:\n        create: create.sh\n")
    cli("blueprint", "upload", path, "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp").expect(0)
    running = subprocess.Popen([sys.executable, "-c", CLI, "--db-url", sqlite_url, "install", "d"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = None
    try:
        _wait_for(tmp_path / "pids")
        first = int((tmp_path / "pids").read_text().split()[0])
        running.send_signal(signal.SIGKILL)
        running.wait(30)
        assert _alive(first), "the script outlives its engine until someone kills it"
        execution = cli("execution", "list", "-f", "json").expect(0).json[0]["id"]
        command, code = {"resume": (["execution", "resume", execution], 0),
                         "cancel": (["execution", "cancel", execution], 1),  # nothing to cancel, but it is stopped
                         "new execution": (["install", "d"], 0),
                         "deployment delete": (["deployment", "delete", "d"], 0)}[action]
        stoker(sqlite_url, *command).expect(code)
        end = time.monotonic() + 5  # the SIGKILL is sent; its delivery may take a moment
        while _alive(first) and time.monotonic() < end:
            time.sleep(0.01)
        assert not _alive(first)
        if action in ("resume", "new execution"):  # the second copy started after the first was gone
            assert (tmp_path / "seen").read_text().strip() == "gone"
    finally:
        if first is not None:
            try:
                os.killpg(first, signal.SIGKILL)
            except ProcessLookupError:
                pass


# -- 6. following an execution costs what the execution costs -------------------------------------
def _many_instances(cli, write) -> None:
    """Deployment ``d``: 3,000 instances of a node without operations (3,002 events to install)."""
    cli("blueprint", "upload", write("bp.yaml", HEAD + "node_templates:\n  a:\n    type: cloudify.nodes.Root\n"
                                     "    capabilities: {scalable: {properties: {default_instances: 3000}}}\n"),
        "-b", "bp").expect(0)
    cli("deployment", "create", "d", "-b", "bp").expect(0)


def test_following_an_execution_reads_each_event_once(cli, write, monkeypatch):
    from stoker.cli import following
    from stoker.store.execution_records import ExecutionRecords

    reads: list[int] = []
    original = ExecutionRecords.events

    def counted(self, *args, **kwargs):
        rows = original(self, *args, **kwargs)
        reads.append(len(rows))
        return rows

    monkeypatch.setattr(ExecutionRecords, "events", counted)
    monkeypatch.setattr(following, "FOLLOW_PAGE", 500, raising=False)
    _many_instances(cli, write)
    followed = cli("install", "d").expect(0)
    printed = [line for line in followed.stderr.splitlines() if "<d>" in line]
    assert len(printed) == 3002  # each instance started, and the workflow's start and end
    assert sum(reads) == len(printed), f"{sum(reads)} event rows read to print {len(printed)}"
    assert max(reads) <= 500


def test_a_follower_far_behind_skips_to_the_newest_events_saying_so(cli, write, monkeypatch):
    from stoker.cli import following

    monkeypatch.setattr(following, "FOLLOW_PAGE", 50, raising=False)
    monkeypatch.setattr(following, "FOLLOW_BACKLOG", 60, raising=False)
    printing = following._print_events
    stalled = []

    def slow_at_first(*args):  # a terminal that stalls a second: the follower falls behind even on a slow machine
        if not stalled:
            stalled.append(True)
            time.sleep(1)
        printing(*args)

    monkeypatch.setattr(following, "_print_events", slow_at_first)
    _many_instances(cli, write)
    followed = cli("install", "d").expect(0)
    lines = followed.stderr.splitlines()
    assert any("events not shown, to keep up with the execution (stoker event list -e" in line for line in lines)
    assert len([line for line in lines if "<d>" in line]) < 3002
    assert "'install' workflow execution succeeded" in lines[-1]
