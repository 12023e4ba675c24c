"""Evaluate a template without resources: what ``stoker template resolve`` prints."""

from __future__ import annotations

from typing import Any, Mapping

from stoker.errors import FunctionError, Problems, ResourcePending, ValidationFailed
from stoker.functions.base import resolve
from stoker.template.definition import StackDefinition, build_definition
from stoker.template.parameters import masked
from stoker.template.template import Template


def evaluate(definition: StackDefinition, problems: Problems | None = None) -> dict:
    """Parameters (hidden ones masked), conditions, outputs and pending outputs.

    Outputs that need a resource are listed as pending; an output that fails
    is a problem added to ``problems`` (default: the definition's).
    """
    problems = definition.problems if problems is None else problems
    conditions = definition.conditions.evaluate_all(problems)
    outputs: dict[str, Any] = {}
    pending: list[str] = []
    for name, output in definition.outputs.items():
        try:
            outputs[name] = resolve(output.value) if definition.enabled(output.condition) else None
        except ResourcePending:
            pending.append(name)
        except FunctionError as exc:
            problems.add(exc.path or ("outputs", name, "value"), exc.code, exc.message)
    return {
        "parameters": masked(definition.parameter_schemas, definition.parameters),
        "conditions": conditions,
        "outputs": outputs,
        "pending": pending,
    }


def resolve_template(data: Any, parameters: Mapping[str, Any] | None = None,
                     files: Mapping[str, str] | None = None, **context_args: Any) -> dict:
    """Evaluate template ``data``; raise ``ValidationFailed`` with every problem found."""
    template = data if isinstance(data, Template) else Template(data, dict(files or {}))
    problems = Problems()
    definition = build_definition(template, parameters, problems=problems, **context_args)
    if definition is None or problems.errors:
        raise ValidationFailed(problems.items)
    result = evaluate(definition, problems)
    problems.raise_if_errors()
    return result
