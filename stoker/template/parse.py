"""Turn plain template data into data with ``Function`` nodes.

As in Heat, a map whose single key names a function of the template's version
is a call; any other map is plain data.  Argument errors do not stop the
parse: they are collected in ``problems`` so the user sees all of them.
Look-alikes of functions (``get_atr``, or ``map_merge`` in a version that has
not got it) stay plain data but earn a warning.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any

from stoker.errors import FunctionError, Problems
from stoker.functions.base import SCALAR_TYPES, Function
from stoker.functions.call import RUNTIME

if TYPE_CHECKING:  # pragma: no cover
    from stoker.template.stack_context import StackContext
    from stoker.template.versions import Version

_FUNCTION_LIKE = re.compile(r"^(?:[a-z]+(?:_[a-z]+)*|Fn::\w+|Ref)$")
#: errors Heat finds only when it evaluates a call: in an output they do not refuse the
#: stack, the output shows them as its ``output_error``; validate warns about them
RESULT_TIME_CODES = frozenset(("unused-param", "empty-param", "unequal-lengths", "unknown-algorithm",
                               "unknown-parameter"))
#: (section, key) of an output's value: ``path[0:3:2]`` of ``("outputs", name, "value", ...)``
OUTPUT_VALUES = (("outputs", "value"), ("Outputs", "Value"))


def warn_output_error(problems: Problems, problem: Any) -> None:
    """A warning, with its place, for an error an output will show (``RESULT_TIME_CODES``)."""
    if not any(p.path == problem.path and p.code == problem.code for p in problems.items):
        problems.warn(problem.path, problem.code, f"{problem.message} (the stack is created; this output shows the error)")


class Parser:
    """Parses values of one template, for one stack context."""

    def __init__(self, version: "Version", stack: "StackContext", problems: Problems | None = None):
        self.version = version
        self.stack = stack
        self.problems = problems if problems is not None else Problems()
        self._functions = version.functions
        self._condition_functions = version.condition_parse_table
        self._look_alike_cache: dict[str, str | None] = {}
        #: how many resource-naming calls were parsed so far (see Function.has_refs)
        self.references = 0
        #: the well-formed calls that name a resource, in parse order
        self.resource_calls: list[Function] = []
        #: calls outside any other call that name a resource, directly or
        #: inside: what a walk for dependencies would stop at
        self.reference_roots: list[Function] = []
        self._depth = 0

    def parse(self, value: Any, path: tuple = (), conditions: bool = False) -> Any:
        """Parse ``value`` found at ``path``; ``conditions`` selects the condition table."""
        kind = type(value)
        if kind is dict or (kind is not list and isinstance(value, dict)):
            if len(value) == 1:
                ((key, args),) = value.items()
                if type(key) is str:
                    table = self._condition_functions if conditions else self._functions
                    cls = table.get(key)
                    if cls is not None:
                        return self._call(cls, key, args, path + (key,), conditions)
                    if self._look_alike_cache.get(key, True) is not None:
                        self._check_look_alike(key, path + (key,))
            # scalars are the bulk of a template: copy them without a call
            parse = self.parse
            return {k: (v if type(v) in SCALAR_TYPES else parse(v, path + (k,), conditions))
                    for k, v in value.items()}
        if kind is list or isinstance(value, list):
            parse = self.parse
            return [v if type(v) in SCALAR_TYPES else parse(v, path + (i,), conditions)
                    for i, v in enumerate(value)]
        return value

    def parse_condition(self, value: Any, path: tuple) -> Any:
        return self.parse(value, path, conditions=True)

    def _call(self, cls: type[Function], name: str, args: Any, path: tuple, conditions: bool) -> Function:
        self._depth += 1
        try:
            fn = cls(self, name, args, path, conditions)
            if fn.phase is RUNTIME:
                self.references += 1
            fn.validate()
        except FunctionError as exc:
            if not exc.path:
                exc.path = path
            at_result = exc.code in RESULT_TIME_CODES or exc.code in cls.result_time_codes
            if at_result and tuple(path[0:3:2]) in OUTPUT_VALUES:
                warn_output_error(self.problems, exc.problem())
            else:
                self.problems.add(exc.path, exc.code, exc.message)
            return _Broken(self, name, exc, path)
        finally:
            self._depth -= 1
        if fn.phase is RUNTIME:
            self.resource_calls.append(fn)
        if fn.has_refs and not self._depth:
            self.reference_roots.append(fn)
        return fn

    def _check_look_alike(self, key: str, path: tuple) -> None:
        if key in self._look_alike_cache:
            hint = self._look_alike_cache[key]
        else:
            hint = self._look_alike_cache[key] = self._look_alike_hint(key)
        if hint:
            self.problems.warn(path, "function-look-alike", hint)

    def _look_alike_hint(self, key: str) -> str | None:
        if not _FUNCTION_LIKE.match(key):
            return None
        from stoker.template.versions import first_version_with

        since = first_version_with(key)
        if since is not None:
            return (
                f'"{key}" is not a function in heat_template_version {self.version.name}, so it '
                f"is kept as plain data; it needs heat_template_version {since} or later"
            )
        close = difflib.get_close_matches(key, list(self._functions), n=1, cutoff=0.8)
        if close:
            return f'"{key}" is not a function, so it is kept as plain data; did you mean "{close[0]}"?'
        return None


class _Broken(Function):
    """Stands where a function with bad arguments was; its error is already reported."""

    def __init__(self, parser: Parser, name: str, error: FunctionError, path: tuple):
        self.parser = parser
        self.name = name
        self.path = path
        self.args = None
        self.exc = error

    def dependencies(self):
        return iter(())

    def result(self) -> Any:
        raise self.exc
