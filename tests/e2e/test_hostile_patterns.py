"""Authors' regular expressions on the CLI: a value that would make ``re`` backtrack for hours is matched within
``max_pattern_seconds`` (``stoker.patterns``): refused, or one clear error naming the place, the pattern and the
limit, exit 1.  Each command runs as a child process with a 30 s time-out, so a hang is a failure."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # a process per command, some matching for a second

#: (a+)+$ backtracks without end in re, not in regex: a plain refusal
NESTED, NESTED_VALUE = "(a+)+$", "a" * 40 + "!"
#: (a|aa)+$ backtracks in both: regex stops it at the limit
ALTERNATION, ALTERNATION_VALUE = "(a|aa)+$", "a" * 60 + "!"
OUT_OF_TIME = 'the regular expression "(a|aa)+$" took longer than 1 s to match (max_pattern_seconds)'


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STOKER_DB_URL", raising=False)
    return tmp_path / "home"


def _hot(tmp_path, pattern: str):
    path = tmp_path / "pattern.yaml"
    path.write_text("heat_template_version: 2018-08-31\nparameters:\n  p:\n    type: string\n    constraints:\n"
                    f"      - allowed_pattern: {pattern!r}\n        description: only a's\nresources: {{}}\n")
    return str(path)


def _refused(run, *parts: str) -> None:
    run.expect(1)
    assert "Traceback" not in run.output, run.output
    for part in parts:
        assert part in run.output, run.output


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "s", "--wait")])
def test_a_backtracking_allowed_pattern_is_one_clear_error(stoker_process, tmp_path, home, command):
    template = _hot(tmp_path, NESTED)
    _refused(stoker_process(*command, "-t", template, "-P", f"p={NESTED_VALUE}", timeout=30),
             "parameters.p: only a's [constraint-violation]")  # a mismatch: the constraint's description
    template = _hot(tmp_path, ALTERNATION)
    _refused(stoker_process(*command, "-t", template, "-P", f"p={ALTERNATION_VALUE}", timeout=30),
             f"parameters.p: allowed_pattern: {OUT_OF_TIME} [pattern-timeout]")
    stoker_process(*command, "-t", template, "-P", "p=aaa", timeout=30).expect(0)


def test_a_backtracking_pattern_constraint_refuses_the_deployment(stoker_process, tmp_path, home):
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text("tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
                         f"inputs:\n  x:\n    constraints: [{{pattern: {ALTERNATION!r}}}]\n"
                         f"  y:\n    default: a\n    constraints: [{{pattern: {NESTED!r}}}]\n"
                         "node_templates:\n  n: {type: cloudify.nodes.Root}\n")
    stoker_process("blueprint", "upload", str(blueprint), "-b", "pb", timeout=30).expect(0)
    _refused(stoker_process("deployment", "create", "d1", "-b", "pb", "-i", f"x={ALTERNATION_VALUE}", timeout=30),
             f"inputs.x: input x's constraint pattern: {OUT_OF_TIME}")
    _refused(stoker_process("deployment", "create", "d2", "-b", "pb", "-i", "x=aa", "-i", f"y={NESTED_VALUE}",
                            timeout=30),
             f"value {NESTED_VALUE} of input y violates constraint pattern((a+)+$)")
    stoker_process("deployment", "create", "d3", "-b", "pb", "-i", "x=aa", timeout=30).expect(0)
    assert "d3" in stoker_process("deployment", "list", timeout=30).expect(0).stdout
