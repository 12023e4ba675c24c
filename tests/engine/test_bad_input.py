"""Bad input never crashes: every mistake is a clear error with its place, and leaves no stack."""

from __future__ import annotations

import pytest

from stoker.errors import NotFound, ValidationFailed

from .helpers import files_under, hot, template, tres, write_yaml
from .plugin_sources import write_plugins


def _problems(caught) -> dict[str, str]:
    return {".".join(map(str, p.path)): p.message for p in caught.value.problems if p.severity == "error"}


def test_an_invalid_template_reports_every_place_and_stores_nothing(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", template("invalid.yaml"))

    problems = _problems(caught)
    assert "resources.typo.type" in problems
    assert "Did you mean OS::Heat::TestResource" in problems["resources.typo.type"]
    assert "resources.bad_length.properties.length" in problems
    assert any(path.startswith("resources.bad_ref.properties.value") for path in problems), problems
    placed = [p for p in caught.value.problems if ".".join(map(str, p.path)) == "resources.typo.type"]
    assert placed[0].file and placed[0].file.endswith("invalid.yaml") and placed[0].line == 11
    assert engine.list_stacks(show_deleted=True) == []


def test_an_unknown_type_names_its_place_and_a_close_match(engine):
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", template("unknown_type.yaml"))
    problems = _problems(caught)
    assert list(problems) == ["resources.x.type"]
    assert "Stoker::Local::Fiel" in problems["resources.x.type"]
    assert "Did you mean Stoker::Local::File" in problems["resources.x.type"]
    assert engine.list_stacks(show_deleted=True) == []


def test_a_property_out_of_range_names_its_place(make_engine, tmp_path):
    engine = make_engine(plugin_dirs=[str(write_plugins(tmp_path / "plugins", broken=False))])
    assert engine.registry.problems == []
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", template("bad_port.yaml"))
    problems = _problems(caught)
    assert list(problems) == ["resources.web.properties.port"]
    assert "70000" in problems["resources.web.properties.port"] or "65535" in problems[
        "resources.web.properties.port"]
    assert str(caught.value).startswith(str(template("bad_port.yaml"))) or \
        "resources.web.properties.port: " in str(caught.value)
    assert engine.list_stacks(show_deleted=True) == []


def test_a_value_known_only_at_create_time_fails_the_resource_not_the_engine(engine, files):
    """A property whose value comes from another resource is checked when it is known."""
    stack = hot({"source": tres(value="not-a-number"),
                 "length": {"type": "OS::Heat::RandomString",
                            "properties": {"length": {"get_attr": ["source", "output"]}}}})
    info = engine.create_stack("late", stack)
    assert info["stack_status"] == "CREATE_FAILED"
    assert "resources.length.properties.length" in info["stack_status_reason"]
    rows = {r["resource_name"]: r for r in engine.resources("late")}
    assert rows["length"]["resource_status"] == "CREATE_FAILED"
    assert engine.delete_stack("late")["stack_status"] == "DELETE_COMPLETE"


@pytest.mark.parametrize("taken", [True, False])
def test_an_if_is_checked_by_the_branch_its_condition_takes(engine, taken):
    """Validation skips a value that needs a resource not created yet (as Heat does) -- but
    only the branch the conditions take counts: a literal there is checked before create."""
    stack = hot({"source": tres(value="8"),
                 "length": {"type": "OS::Heat::RandomString",
                            "properties": {"length": {"if": ["taken", {"get_attr": ["source", "output"]},
                                                             "not-a-number"]}}}},
                conditions={"taken": taken})
    if taken:  # the value comes from "source": known, and checked, at create
        engine.validate_template(stack)
        assert engine.create_stack("branch", stack)["stack_status"] == "CREATE_COMPLETE"
        return
    with pytest.raises(ValidationFailed) as caught:
        engine.validate_template(stack)
    assert "not-a-number" in _problems(caught)["resources.length.properties.length"]


def test_a_bad_update_changes_nothing(engine, files):
    engine.create_stack("ok", hot({"a": tres(value="a")}))
    before = (engine.show_stack("ok"), engine.resources("ok"), engine.events("ok"))
    with pytest.raises(ValidationFailed) as caught:
        engine.update_stack("ok", template("unknown_type.yaml"))
    assert "resources.x.type" in _problems(caught)
    assert (engine.show_stack("ok"), engine.resources("ok"), engine.events("ok")) == before
    assert engine.get_record("ok").lock_owner is None
    assert files_under(files) == []


def test_unknown_stacks_are_not_found(engine):
    for action in (engine.show_stack, engine.delete_stack, engine.suspend_stack, engine.check_stack,
                   engine.outputs, engine.resources, engine.events, engine.cancel_stack):
        with pytest.raises(NotFound, match="nowhere"):
            action("nowhere")
    with pytest.raises(NotFound):
        engine.update_stack("nowhere", existing=True)


# -- the same through the command line ----------------------------------------------------
@pytest.mark.parametrize("name, place", [
    ("invalid.yaml", "resources.typo.type"),
    ("unknown_type.yaml", "resources.x.type"),
    ("syntax_error.yaml", "syntax_error.yaml"),
])
def test_the_cli_reports_bad_templates_without_a_traceback(cli, name, place):
    run = cli("stack", "create", "bad", "-t", template(name)).expect(1)
    assert place in run.stderr and "ERROR" in run.stderr
    errors = cli("stack", "create", "bad", "-t", template(name), "-f", "json").expect(1).json
    assert isinstance(errors, list) and errors
    assert all(set(e) >= {"path", "file", "line", "column", "code", "message"} for e in errors)
    assert cli("stack", "list", "-f", "json").expect(0).json == []


@pytest.mark.sqlite_only
def test_the_cli_reports_bad_arguments_without_a_traceback(cli, tmp_path):
    cases = [
        ("stack", "create", "x", "-t", tmp_path / "missing.yaml"),
        ("stack", "create", "x", "-t", template("dependencies.yaml"), "-P", "no-equals-sign"),
        ("stack", "create", "x", "-t", template("dependencies.yaml")),  # dir has no value
        ("stack", "show", "nowhere"),
        ("stack", "delete", "nowhere", "--yes"),
        ("stack", "update", "nowhere", "--existing"),
        ("stack", "output", "show", "nowhere", "--all"),
        ("stack", "resource", "show", "nowhere", "x"),
        ("stack", "cancel", "nowhere"),
    ]
    for args in cases:
        run = cli(*args)
        # a usage error (2) or a Stoker error (1), never a traceback, always a message
        assert run.exit_code in (1, 2), (args, run)
        assert "Traceback" not in run.output and run.stderr.strip(), (args, run)
    run = cli("stack", "create", "x", "-t", template("dependencies.yaml")).expect(1)
    assert "parameters.dir" in run.stderr or "dir" in run.stderr
    assert cli("stack", "list", "-f", "json").expect(0).json == []


USED_THREE_TIMES = hot(
    {name: {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "port"}}} for name in ("a", "b")},
    outputs={"port": {"value": {"get_param": "port"}}},
    parameters={"port": {"type": "number", "constraints": [{"range": {"min": 1, "max": 100}}]}})


@pytest.mark.sqlite_only
@pytest.mark.parametrize("value, code, message", [
    ("abc", "invalid-parameter-value", '"abc" is not a number'),
    ("1000", "constraint-violation", "1000 is out of range (min: 1, max: 100)"),
    (None, "missing-parameter", "The Parameter (port) was not provided."),
])
def test_a_bad_parameter_value_is_one_error_not_one_per_use(engine, value, code, message):
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("bad", USED_THREE_TIMES, parameters={} if value is None else {"port": value})
    assert [(p.path, p.code, p.message) for p in caught.value.problems] == [
        (("parameters", "port"), code, message)]
    assert engine.list_stacks(show_deleted=True) == []


@pytest.mark.sqlite_only
def test_the_cli_reports_a_bad_parameter_value_once(cli, tmp_path):
    path = write_yaml(tmp_path / "port.yaml", USED_THREE_TIMES)
    for command in (("template", "validate"), ("stack", "create", "bad")):
        errors = cli(*command, "-t", path, "-P", "port=abc", "-f", "json").expect(1).json
        assert [(e["path"], e["code"]) for e in errors] == [("parameters.port", "invalid-parameter-value")]
