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

import pytest

from engine.helpers import Run
from stoker.blueprint.deployment import prepare
from stoker.blueprint.errors import BlueprintError
from stoker.blueprint.parser import parse_blueprint

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


def test_a_cycle_is_refused_before_creation_evaluates_anything():
    """``prepare`` (deployment creation) checks too: a plan stored before the check existed is refused."""
    plan = parse_blueprint(HEAD + TYPE_PQ + "node_templates:\n  a: {type: t}\n")
    node = plan["nodes"][0]
    node["properties"].update(p={"get_property": ["SELF", "q"]}, q={"get_property": ["SELF", "p"]})
    with pytest.raises(BlueprintError, match=r"get_property function call detected: a\.p -> a\.q -> a\.p"):
        prepare(plan)


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
