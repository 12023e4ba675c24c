"""What every blueprint function shares (over ``functions.call``): how it is recognised, how it reads paths.

A function is a mapping with one key naming it (plus, optionally, ``type``).
Its arguments are evaluated before it (the evaluator walks inside out), so
``evaluate`` sees plain values -- or, in the static phase, functions that
must wait for runtime, which each function handles as the spec says.
"""

from __future__ import annotations

import abc
from typing import Any

from stoker.blueprint.blueprint_errors import FunctionFailed
from stoker.functions.call import HYBRID, RUNTIME, STATIC, FunctionCall  # noqa: F401 (the phases, for every function)

SELF, SOURCE, TARGET = "SELF", "SOURCE", "TARGET"
NODE_REFS = (SELF, SOURCE, TARGET)

# the places a function may sit in
NODE_SCOPE = "node_template"
RELATIONSHIP_SCOPE = "node_template_relationship"
OUTPUTS_SCOPE = "outputs"
CAPABILITIES_SCOPE = "capabilities"


class Function(FunctionCall, abc.ABC):
    """One function call found at ``path`` in ``scope``; ``context`` is the node (or instance ids)."""

    def __init__(self, args: Any, scope: str | None, context: dict, path: str, raw: dict, table: dict):
        super().__init__(self.name, path)
        #: the table of functions this call was recognised by (its arguments may hold more calls)
        self.table = table
        self.scope = scope
        self.context = context
        self.raw = raw
        self.args = args
        self.parse_args(args)

    def parse_args(self, args: Any) -> None:
        """Check the arguments' shape (raise ``self.fail``)."""

    def validate(self, checker: Any) -> None:
        """Checks that need the whole blueprint, made once at upload (``checker``: a PlanEvaluator of it)."""

    @abc.abstractmethod
    def evaluate(self, handler: Any) -> Any:
        """The value, or the function itself while what it reads waits for runtime."""

    def fail(self, message: str) -> FunctionFailed:
        return FunctionFailed(self.name, message, self.path)


def function_of(value: Any, table: dict) -> tuple[type, Any] | None:
    """(class, arguments) when ``value`` is a call of a known function, else None.

    An unknown name is not a function (it stays a literal mapping, as in Cloudify);
    a second key other than ``type`` makes the mapping a literal too.
    """
    if not isinstance(value, dict) or not 0 < len(value) < 3:
        return None
    found = None
    for key, args in value.items():
        if key == "type":
            continue
        if key not in table:
            return None
        found = (table[key], args)
    return found


def holds_function(value: Any, table: dict) -> bool:
    """Whether ``value`` is a function call or has one anywhere inside."""
    if function_of(value, table):
        return True
    if isinstance(value, dict):
        return any(holds_function(v, table) for v in value.values())
    if isinstance(value, list):
        return any(holds_function(v, table) for v in value)
    return False


def python_path(steps: list) -> str:
    """``['a', 'b', 7, 'c']`` -> ``a.b[7].c`` for messages."""
    if not steps:
        return ""
    text = str(steps[0])
    for step in steps[1:]:
        text += f"[{step}]" if isinstance(step, int) else f".{step}"
    return text


def walk_path(function: Function, value: Any, path: list, start: int, where: str = "") -> Any:
    """``value`` followed along ``path[start:]`` (keys and list indexes); ``path[:start]`` named it.

    Each way of going wrong is an error of ``function`` naming the path so far (and ``where``).
    """
    for position in range(start, len(path)):
        step, so_far = path[position], python_path(path[start - 1:position])
        if isinstance(value, dict):
            if step not in value:
                raise function.fail(f"attribute '{step}' doesn't exist in '{so_far}'{where}")
            value = value[step]
        elif isinstance(value, list):
            if not isinstance(step, int) or isinstance(step, bool):
                raise function.fail(f"item {position} of the path {path} is expected to be an int but got "
                                    f"{type(step).__name__}")
            if not -len(value) <= step < len(value):
                raise function.fail(f"list size of '{so_far}' is {len(value)}{where}, but index {step} "
                                    "is retrieved")
            value = value[step]
        else:
            raise function.fail(f"'{so_far}'{where} has no attribute {step}")
    return value


def is_literal_path(steps: Any) -> bool:
    """Whether ``steps`` is a list of plain keys and indexes, so where it leads is known without evaluating."""
    return isinstance(steps, list) and all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in steps)


def is_path_item(item: Any, table: dict) -> bool:
    return isinstance(item, (str, int)) and not isinstance(item, bool) or function_of(item, table) is not None


def follow_property(owner: str, properties: Any, path: list, handler: Any, context: dict, where: str,
                    function: str, missing_ok: bool = False) -> Any:
    """The value at ``path`` inside a node's properties (or runtime properties).

    With ``missing_ok`` a missing key gives None (get_attribute then falls back);
    otherwise it is an error naming the node, the path and where it was asked from.
    """
    table = handler.table
    shown = ".".join(str(p) for p in path)

    def failed(why: str) -> FunctionFailed:
        return FunctionFailed(function, f"node template property '{owner}.properties.{shown}' referenced from "
                                        f"'{where}'{why}", where)

    value = properties
    for step in path:
        if function_of(value, table):
            value = [value, step]
            continue
        if isinstance(value, list) and (not isinstance(step, int) or isinstance(step, bool)):
            raise failed(f" is expected {step} to be an int but it is a {type(step).__name__}")
        if isinstance(value, dict) and step in value or isinstance(value, list) and -len(value) <= step < len(value):
            value = handler.property_value(value[step], context, where)
        elif missing_ok:
            return None
        elif isinstance(value, list):
            raise failed(f": index {step} is out of range (the list has {len(value)} items)")
        else:
            raise failed(" doesn't exist")
    return value
