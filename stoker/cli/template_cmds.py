"""``stoker template validate|resolve|version list|function list``."""

from __future__ import annotations

import sys

import click

from stoker.cli.formatting import format_option, show_document, show_list, show_problems, show_warnings
from stoker.cli.group import pass_engine
from stoker.cli.template_options import read_inputs, template_options
from stoker.errors import Problems, ValidationFailed
from stoker.template.resolve import evaluate
from stoker.template.parse import RESULT_TIME_CODES, warn_output_error
from stoker.template.parameters import redact
from stoker.template.versions import find_version, function_rows, listed_versions


@click.group()
def template() -> None:
    """Check and evaluate templates without running them."""


def _fail(problems, fmt: str, wrap: str | None = None) -> None:
    show_problems(problems, fmt, wrap)
    sys.exit(1)


def _check(engine, given: tuple, fmt: str, wrap: str | None = None, *, missing_ok: bool):
    """Load and check everything a create would (plug-in schemas too); never opens the database.
    With ``missing_ok`` (validate) the verdict is Heat's: create-time errors are warnings."""
    try:
        inputs = read_inputs(*given)
        definition, problems = engine.check_template(inputs.template, inputs.environment, inputs.parameters,
                                                     missing_parameters_ok=missing_ok, at_validate=missing_ok)
    except ValidationFailed as exc:
        _fail(exc.problems, fmt, wrap)
    return inputs.template, definition, problems


def _report(template_obj, problems, definition, outcome, fmt: str, wrap: str | None = None) -> list:
    """Show the warnings (returned) and, when there are errors or no ``outcome``, the errors, exiting 1:
    each with its file place, and no hidden value in its message."""
    source = template_obj.source
    hidden = definition.secrets() if definition is not None else []
    placed = [source.place(p) if source and not p.file else p for p in problems.items]
    for problem in placed:
        problem.message = redact(problem.message, hidden)
    warnings = [p for p in placed if p.severity != "error"]
    show_warnings(warnings)
    errors = [p for p in placed if p.severity == "error"]
    if errors or outcome is None:
        _fail(errors, fmt, wrap)
    return warnings


@template.command("validate")
@template_options
@format_option()
@pass_engine
def validate(engine, template_file, environment_files, parameters, parameter_files, fmt) -> None:
    """Check a template; print its description and parameters, or every error."""
    given = (template_file, environment_files, parameters, parameter_files)
    tmpl, definition, problems = _check(engine, given, fmt, missing_ok=True)
    if definition is not None and not _blocking(problems):
        _evaluate_what_is_known(definition, problems)
    warnings = _report(tmpl, problems, definition, definition, fmt)
    result = {
        "Description": tmpl.description,
        "Parameters": {name: schema.as_validate_output()
                       for name, schema in definition.parameter_schemas.items()},
    }
    groups = tmpl.section("parameter_groups")
    if groups:
        result["ParameterGroups"] = groups
    if warnings and fmt in ("json", "yaml"):
        result["Warnings"] = [w.as_dict() for w in warnings]
    show_document(result, fmt)


def _blocking(problems) -> list:
    """Errors that make evaluating outputs pointless (only resources wrong: evaluate anyway,
    to report more errors in one run)."""
    return [p for p in problems.errors if p.path[:1] != ("resources",)]


def _evaluate_what_is_known(definition, problems) -> None:
    """Evaluate the outputs and conditions validate can: what fails whatever the inputs
    is a warning (Heat evaluates outputs only once the stack exists).

    Anything that waits for a parameter value not given, or a resource, is
    not reported here.
    """
    scratch = Problems()
    evaluate(definition, scratch)
    # an output error the parse already warned about (``Function.result_time_codes``)
    warned = {(p.path, p.code) for p in problems.warnings}
    for problem in scratch.errors:
        if problem.code in RESULT_TIME_CODES or (problem.path, problem.code) in warned:
            warn_output_error(problems, problem)
        elif problem.code not in _NEEDS_INPUT:
            problems.extend_as_create_time([problem])


#: codes of failures that only mean "a value is not known yet"
_NEEDS_INPUT = {"missing-parameter", "resource-pending"}


@template.command("resolve")
@template_options
@format_option()
@pass_engine
def resolve_cmd(engine, template_file, environment_files, parameters, parameter_files, fmt) -> None:
    """Evaluate parameters, conditions and every output that needs no resource."""
    given = (template_file, environment_files, parameters, parameter_files)
    tmpl, definition, problems = _check(engine, given, fmt, "errors", missing_ok=False)
    result = evaluate(definition, problems) if definition is not None and not _blocking(problems) else None
    _report(tmpl, problems, definition, result, fmt, "errors")
    show_document(result, fmt)


@template.group("version")
def version_group() -> None:
    """Template versions."""


@version_group.command("list")
@format_option()
def version_list(fmt) -> None:
    """List the heat_template_version values Stoker knows."""
    rows = [{"Version": row["version"], "Type": row["type"], "Aliases": ", ".join(row["aliases"])}
            for row in listed_versions()]
    show_list(rows, ["Version", "Type", "Aliases"], fmt)


@template.group("function")
def function_group() -> None:
    """Intrinsic functions."""


@function_group.command("list")
@click.argument("version")
@click.option("--with-conditions", "--with_conditions", "with_conditions", is_flag=True,
              help="Also list the condition functions.")
@format_option()
def function_list(version, with_conditions, fmt) -> None:
    """List the functions of template VERSION (e.g. 2016-10-14 or newton)."""
    found = find_version(version)
    if found is None:
        raise click.BadParameter(f'"{version}" is not a known template version', param_hint="VERSION")
    show_list(function_rows(found, with_conditions), ["functions", "description"], fmt)
