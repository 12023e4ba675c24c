"""What Heat's ``template validate`` evaluates, beyond the template's shape.

Heat resolves, while validating, every condition a resource or an output
names and every condition an ``if`` in them tests (``if`` is a macro: its
branch is chosen when the template is parsed).  A condition that needs a
parameter without a value fails validation there, and so does a ``get_attr``
whose attribute name needs one (Heat's ``GetAtt.validate`` resolves the name),
though nothing else that waits for a value does.
"""

from __future__ import annotations

from typing import Any, Iterator

from stoker.errors import FunctionError, Problems
from stoker.functions.base import Function, functions_in, resolve
from stoker.functions.logic import If
from stoker.functions.references import GetAtt
from stoker.template.definition import StackDefinition

#: why a condition cannot be evaluated without more input
_NEEDS_VALUE = {"missing-parameter", "unknown-parameter"}


def check_conditions_in_use(definition: StackDefinition, problems: Problems) -> None:
    for condition, path in _conditions_in_use(definition):
        try:
            definition.enabled(condition)
        except FunctionError as exc:
            if exc.code in _NEEDS_VALUE:
                problems.add(exc.path or path, exc.code, exc.message)


def check_attribute_names(definition: StackDefinition, problems: Problems) -> None:
    """Each ``get_attr`` whose attribute name is a call: resolved, as Heat's validate does."""
    for fn in definition.resource_calls:
        if isinstance(fn, GetAtt) and isinstance(fn.args, list) and len(fn.args) > 1 \
                and isinstance(fn.args[1], Function):
            try:
                resolve(fn.args[1])
            except FunctionError as exc:
                if exc.code in _NEEDS_VALUE:
                    problems.add(fn.path, exc.code, exc.message)


def _conditions_in_use(definition: StackDefinition) -> Iterator[tuple[Any, tuple]]:
    """Each condition (a name or an expression) Heat evaluates, with where it is used."""
    bodies = [(("resources", n), r.condition, [r.properties, r.metadata, r.update_policy])
              for n, r in definition.resources.items()]
    bodies += [(("outputs", n), o.condition, o.value) for n, o in definition.outputs.items()]
    for place, condition, body in bodies:
        yield condition, place + ("condition",)
        yield from ((fn.args[0], fn.path + (0,)) for fn in functions_in(body) if isinstance(fn, If))
