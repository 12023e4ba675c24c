"""The intrinsic-function node and the helpers every function family uses.

A template is parsed once into plain data in which every function call
(``{get_param: x}``) is replaced by a ``Function`` object.  Each function knows
three things:

* ``validate()`` -- are my arguments well formed?  Called once, at parse time;
  raises ``FunctionError`` (use ``self.error(...)``).
* ``dependencies()`` -- which resources must exist before I can be computed?
  The engine builds its graph from this.
* ``result()`` -- my value, computed from resolved arguments and from what the
  stack context (``self.stack``) knows: parameters, conditions, resources.
"""

from __future__ import annotations

import abc
import json
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol

from stoker.errors import FunctionError, Problems
from stoker.functions.call import RUNTIME, FunctionCall
from stoker.functions.sizes import measure, remember, remembering

if TYPE_CHECKING:  # pragma: no cover
    from stoker.template.stack_context import StackContext


class Parser(Protocol):
    """What a call asks of the parser that read it (``template.parse.Parser``, which imports this module)."""

    version: Any
    stack: "StackContext"
    problems: Problems
    references: int  # resource-naming calls parsed so far (see ``Function.has_refs``)

    def parse(self, value: Any, path: tuple = (), conditions: bool = False) -> Any: ...

    def parse_condition(self, value: Any, path: tuple) -> Any: ...


class Function(FunctionCall, abc.ABC):
    """One parsed call of an intrinsic function (``phase`` RUNTIME: it names a resource).

    Not an ``abc.ABC``: ``isinstance(x, Function)`` runs for every node of
    every template walk, and an ABC's check costs several times a plain one.
    """

    #: set by subclasses whose arguments are conditions (``not``, ``and``, ...)
    parses_conditions = False
    #: set by functions whose string arguments are condition names (``not``, ``and``,
    #: ``or``); ``equals`` parses conditions but its strings are plain values
    names_conditions = False
    #: does this call, or one inside it, name a resource?  (lets graph building
    #: skip the many calls that cannot add a dependency)
    has_refs = False
    #: does a call inside the arguments name a resource?
    args_have_refs = False
    #: True for calls whose value exists already (a parameter, an attribute, a file, one
    #: of their arguments): bounded where it came from, so measured once, not checked
    passes_through = False
    #: codes of this function's validate errors that Heat meets only when it evaluates
    #: the call (``get_resource`` of no resource): in an output, that output's error
    result_time_codes: frozenset = frozenset()

    def __init__(self, parser: "Parser", name: str, args: Any, path: tuple, conditions: bool = False):
        self.parser = parser
        FunctionCall.__init__(self, name, path)
        #: inside ``conditions`` every nested call is read with the condition table
        self.in_conditions = conditions or self.parses_conditions
        if parser is None:  # a hand-made node (tests, plug-ins): nothing to count
            self.args = self.parse_args(args)
            self.has_refs = self.args_have_refs = True
            return
        before = parser.references
        self.args = self.parse_args(args)
        self.args_have_refs = parser.references > before
        self.has_refs = self.phase is RUNTIME or self.args_have_refs

    # -- construction -------------------------------------------------------
    def parse_args(self, args: Any) -> Any:
        """Parse the raw arguments; functions with special syntax override this."""
        return self.parser.parse(args, self.path, self.in_conditions)

    @property
    def stack(self) -> "StackContext":
        return self.parser.stack

    # -- the three questions --------------------------------------------------
    def validate(self) -> None:
        """Check the arguments' shape; raise ``self.error(...)`` when wrong."""

    def dependencies(self) -> Iterator[str]:
        """Names of resources this call needs (default: those its arguments need)."""
        return dependencies(self.args) if self.args_have_refs else iter(())

    def waits(self) -> bool:
        """Does this call (one naming a resource) need a resource not created yet?"""
        return self.parser is not None and not all(map(self.parser.stack.resource_ready, self.dependencies()))

    @abc.abstractmethod
    def result(self) -> Any:
        """The call's value (arguments resolved first); every function defines it."""

    # -- helpers ------------------------------------------------------------------
    def error(self, message: str, code: str = "invalid-function-arguments") -> FunctionError:
        return FunctionError(message, code=code, path=self.path)

    def __eq__(self, other: object) -> bool:
        # Two parsed templates compare equal when they say the same thing; this
        # lets the update planner diff resource definitions.
        return (
            isinstance(other, Function)
            and type(other) is type(self)
            and other.name == self.name
            and other.args == self.args
        )

    __hash__ = object.__hash__


class Removed(Function):
    """A function the template's version dropped (``Fn::Select`` from 2015-10-15)."""

    def validate(self) -> None:
        raise self.error(
            f'The function "{self.name}" is not supported in heat_template_version '
            f"{self.parser.version.name}; it was removed in this version",
            code="removed-function",
        )

    def result(self) -> Any:
        raise self.error(f'The function "{self.name}" is not supported', code="removed-function")


class Invalid(Function):
    """A real function used where it is not allowed (``get_resource`` in a condition)."""

    def parse_args(self, args: Any) -> Any:
        return args

    def validate(self) -> None:
        raise self.error(
            f'The function "{self.name}" is not allowed in conditions; conditions may '
            "use only condition functions and may not reference resources",
            code="function-not-allowed-here",
        )

    def result(self) -> Any:
        raise self.validate()


class _Omitted:
    """The value of an ``if`` (2021-04-16) whose condition is false and that has
    no false value: the map key or list item holding it disappears."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMITTED"

    def __reduce__(self) -> str:  # copies and pickles stay the one marker
        return "OMITTED"


OMITTED = _Omitted()


def resolve(value: Any, nullable: bool = False) -> Any:
    """Replace every function in ``value`` by its result, recursively.

    Map entries and list items whose value is ``OMITTED`` are dropped.  Where
    there is nothing to drop from (``value`` itself is omitted) the result is
    ``None``, unless ``nullable``: then ``OMITTED`` is returned so that an
    enclosing function (an outer ``if``) can pass it on to its own container.
    """
    with remembering():
        result = _resolve(value)
    if result is OMITTED and not nullable:
        return None
    return result


#: values that can hold no function (exact types: a subclass may be anything)
SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


def resolve_call(fn: "Function") -> Any:
    """``resolve(fn)`` for one call (what validation does for each property given as one),
    without the walk's dispatch; within a ``remembering`` block (sizes are remembered as in it)."""
    result = fn.result()
    if type(result) not in SCALAR_TYPES:
        result = _resolve(result)
    if fn.passes_through:
        remember(result)
    else:
        measure(fn, result)
    return None if result is OMITTED else result


def _resolve(value: Any) -> Any:
    kind = type(value)
    if kind in SCALAR_TYPES:  # most of a template: skip the isinstance chain
        return value
    if kind is not dict and kind is not list and isinstance(value, Function):  # an ABC's check is slow
        result = _resolve(value.result())
        if value.passes_through:
            remember(result)
        else:
            measure(value, result)
        return result
    if isinstance(value, dict):
        resolved = {}
        for k, v in value.items():
            v = _resolve(v)
            if v is not OMITTED:
                resolved[k] = v
        return resolved
    if isinstance(value, list):
        return [v for v in map(_resolve, value) if v is not OMITTED]
    return value


def _referring_calls(value: Any) -> Iterator[Function]:
    """The outermost calls inside ``value`` that name a resource, directly or inside."""
    pending = [value]
    while pending:  # an explicit stack: no generator per nested container
        item = pending.pop()
        kind = type(item)
        if kind is not dict and kind is not list and isinstance(item, Function):  # an ABC's check is slow
            if item.has_refs:
                yield item
        elif isinstance(item, dict):
            pending.extend(v for v in item.values() if type(v) not in SCALAR_TYPES)
        elif isinstance(item, list):
            pending.extend(v for v in item if type(v) not in SCALAR_TYPES)


def dependencies(value: Any) -> Iterator[str]:
    """Every resource name the functions inside ``value`` depend on."""
    for call in _referring_calls(value):
        yield from call.dependencies()


def waits_for_resources(value: Any) -> bool:
    """Does ``value`` need a resource that has not been created yet?

    Heat does not check such a value while validating: it is checked when
    the resource is created.  (An ``if`` needs what its chosen branch needs.)
    """
    kind = type(value)
    if kind in SCALAR_TYPES:
        return False  # most values: plain
    if kind is not dict and kind is not list and isinstance(value, Function):
        if not value.has_refs:
            return False  # a call that names no resource: no walk needed
        calls: Iterable[Function] = (value,)  # the outermost call naming one is the value itself
    else:
        calls = _referring_calls(value)
    for call in calls:
        if call.waits():
            return True
    return False


def functions_in(value: Any) -> Iterator[Function]:
    """Every function node inside ``value`` (outermost first, then nested)."""
    if isinstance(value, Function):
        yield value
        yield from functions_in(value.args)
    elif isinstance(value, dict):
        for v in value.values():
            yield from functions_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from functions_in(v)


def has_functions(value: Any) -> bool:
    return next(functions_in(value), None) is not None


# -- helpers for argument checks and messages -----------------------------------------
def describe(value: Any) -> str:
    """A value's kind as error messages name it ("a list", "a map", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a map"
    return f"a {type(value).__name__}"


def show(value: Any, limit: int = 200) -> str:
    """``value`` as JSON for an error message, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
