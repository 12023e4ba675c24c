"""Gather what a command needs from the command line: template, files, environments, parameters.

The files map is built as Heat's client builds it (see
``stoker.template.files``); the engine only ever reads from that map.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import click

from stoker.cli.given_values import bounded
from stoker.errors import ValidationFailed
from stoker.template.environment import Environment, load_environments
from stoker.template.files import load_template_tree
from stoker.template.loader import read_file
from stoker.template.template import Template


def template_options(func):
    """The options every command that reads a template shares."""
    options = [
        click.option("-t", "--template", "template_file", required=True,
                     type=click.Path(dir_okay=False), help="Template file (YAML or JSON)."),
        click.option("-e", "--environment", "environment_files", multiple=True,
                     type=click.Path(dir_okay=False), help="Environment file; repeat to merge several."),
        click.option("-P", "--parameter", "parameters", multiple=True, metavar="KEY=VALUE",
                     help='Parameter value; repeat, or separate several with ";".'),
        click.option("--parameter-file", "parameter_files", multiple=True, metavar="KEY=PATH",
                     help="Parameter whose value is the content of a file."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def parse_parameters(pairs: Iterable[str], files: Iterable[str] = ()) -> dict[str, Any]:
    """``-P`` and ``--parameter-file`` values, each bounded as a template is (``given_values``)."""
    values: dict[str, Any] = {}
    for pair in pairs:
        parts = pair.split(";") if all("=" in p for p in pair.split(";")) else [pair]
        for part in parts:
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise click.BadParameter(f'"{part}" is not of the form KEY=VALUE', param_hint="-P")
            values[key.strip()] = value
    bounded(values, "-P")
    from_files: dict[str, Any] = {}
    for pair in files:
        key, sep, path = pair.partition("=")
        if not sep:
            raise click.BadParameter(f'"{pair}" is not of the form KEY=PATH', param_hint="--parameter-file")
        try:
            from_files[key.strip()] = read_file(path).decode("utf-8")
        except (ValidationFailed, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="--parameter-file") from None
    values.update(bounded(from_files, "--parameter-file"))
    return values


def _bounded_environment(environment: Environment | None) -> Environment | None:
    if environment is not None:
        bounded(environment.parameters, "-e parameters")
        bounded(environment.parameter_defaults, "-e parameter_defaults")
    return environment


@dataclass
class Inputs:
    template: Template
    environment: Environment
    parameters: dict[str, Any]

    def parameter_values(self, declared: set[str]) -> dict[str, Any]:
        """Environment values first, then the command line's."""
        values = self.environment.parameter_values(declared)
        values.update(self.parameters)
        return values


def read_inputs(template_file: str, environment_files=(), parameters=(), parameter_files=()) -> Inputs:
    """Load everything, with the files map; raises ``ValidationFailed`` (with places) on bad input."""
    template, environment = load_template_tree(template_file, list(environment_files))
    return Inputs(template, _bounded_environment(environment), parse_parameters(parameters, parameter_files))


def load_inputs(template_file: str | None, environment_files=(), parameters=(), parameter_files=()) -> tuple:
    """(template, environment, parameters) of ``stack create|update``: each None when not given."""
    template = environment = None
    if template_file:
        template, environment = load_template_tree(template_file, list(environment_files))
        environment = environment if environment_files else None
    elif environment_files:
        environment = load_environments(list(environment_files))
    return template, _bounded_environment(environment), parse_parameters(parameters, parameter_files)


def declared_parameters(template: Template) -> set[str]:
    section = template.section("parameters")
    return set(section) if isinstance(section, dict) else set()


__all__ = ["Inputs", "ValidationFailed", "declared_parameters", "load_inputs", "read_inputs", "template_options"]
