"""``yaql: {expression: ..., data: ...}``: a YAQL query over data.

A template's author writes the expression, so evaluation is fenced in:

* Heat's own limits, passed to the yaql engine: collections of at most
  ``LIMIT_ITERATORS`` items and results of at most ``MEMORY_QUOTA`` bytes
  (yaql checks the size of every function's result);
* ``pow`` and ``shiftBitsLeft`` are replaced by versions that refuse to build
  an integer beyond the quota *before* building it (the only library
  functions whose single C-level step can take minutes or gigabytes);
* a wall-clock budget of ``TIME_BUDGET`` seconds.  yaql is pure Python, so a
  trace hook that looks at the clock on every call (and every line of yaql's
  library functions) stops any runaway loop, in whatever thread; it makes
  evaluation about three times slower, which the limits above keep cheap;
* regular expressions (``regex()``, ``=~``, ``matches``, ``replace``...) matched by
  ``stoker.functions.yaql_regex``, each match within ``max_pattern_seconds``: a
  match runs inside C, where neither the trace hook nor (outside the main thread)
  a timer could stop it.

Expressions are parsed once, when the template is validated (syntax errors are
validation errors), and cached.
"""

from __future__ import annotations

import collections.abc  # noqa: F401  (yaql 3.2 uses collections.abc without importing it)
import functools
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

import yaql
import yaql.standard_library
from yaql.language import exceptions as yaql_errors
from yaql.language import specs, yaqltypes

from stoker.errors import YAQL_LIMIT
from stoker.functions import yaql_regex
from stoker.functions.base import Function, describe, resolve
from stoker.limits import limit
from stoker.patterns import PatternTimeout

LIMIT_ITERATORS = 200
MEMORY_QUOTA = 10_000
TIME_BUDGET = 5.0
#: the biggest integer (in bits) pow/shiftBitsLeft may make; about MEMORY_QUOTA bytes
_MAX_INT_BITS = MEMORY_QUOTA * 8

_LIBRARY_DIR = os.path.dirname(yaql.standard_library.__file__)
_lock = threading.Lock()
_engine = None
_context = None


class _OutOfTime(BaseException):
    """Raised into the expression when its time is up.  A BaseException, so that
    no ``except Exception`` inside yaql can swallow it."""


def _quota_exceeded() -> Exception:
    return yaql_errors.MemoryQuotaExceededException()


@specs.parameter("a", yaqltypes.Number())
@specs.parameter("b", yaqltypes.Number())
@specs.parameter("c", yaqltypes.Number(nullable=True))
def pow_(a, b, c=None):
    if c is None and isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        if b * a.bit_length() > _MAX_INT_BITS:
            raise _quota_exceeded()
    return pow(a, b, c)


@specs.parameter("value", int)
@specs.parameter("bits_number", int)
def shift_bits_left(value, bits_number):
    if value and bits_number + value.bit_length() > _MAX_INT_BITS:
        raise _quota_exceeded()
    return value << bits_number


def _bracket_depth(expression: str) -> int:
    """How deeply brackets nest in an expression (quoted text aside): yaql recurses per level."""
    depth = deepest = 0
    quote = None
    for char in expression:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def _yaql() -> tuple[Any, Any]:
    """The engine and the root context, made on first use (building the parser takes a while)."""
    global _engine, _context
    with _lock:
        if _engine is None:
            _engine = yaql.YaqlFactory().create({
                "yaql.limitIterators": LIMIT_ITERATORS,
                "yaql.memoryQuota": MEMORY_QUOTA,
            })
            context = yaql.create_context(regex=False).create_child_context()
            yaql_regex.register(context)
            context.register_function(pow_, exclusive=True)
            context.register_function(shift_bits_left, exclusive=True)
            _context = context
        return _engine, _context


@functools.lru_cache(maxsize=512)
def _parse(expression: str) -> Any:
    engine, _ = _yaql()
    with _lock:  # the ply parser keeps its state on itself
        return engine(expression)


def _within_budget(seconds: float, run: Callable[[], Any]) -> Any:
    """``run()``, interrupted by ``_OutOfTime`` once ``seconds`` have passed.

    In the main thread a SIGALRM timer interrupts it: signals are handled
    between any two bytecodes, at no cost while the expression runs.  Other
    threads (the API server's) cannot take signals, so there a trace function
    checks the clock on every call and line -- about 3x slower, but safe.
    """
    if _alarm_is_free():
        return _with_alarm(seconds, run)
    return _with_trace(seconds, run)


def _with_alarm(seconds: float, run: Callable[[], Any]) -> Any:
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:
            raise _OutOfTime

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        try:
            return run()
        finally:
            armed[0] = False  # the alarm may fire during cleanup: ignore it then
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)


def _with_trace(seconds: float, run: Callable[[], Any]) -> Any:
    """Plain nested ``finally`` blocks: each cleanup step must happen whatever line is interrupted."""
    deadline = time.monotonic() + seconds
    previous = sys.gettrace()  # a debugger or coverage keeps working
    armed = [True]

    def check() -> None:
        if armed[0] and time.monotonic() > deadline:
            raise _OutOfTime

    def trace(frame, event, arg):
        check()
        inner = previous(frame, event, arg) if previous is not None else None
        # Lines are checked too in yaql's library functions: their loops over
        # C iterators (``range(10**12).len()``) make no calls.
        if inner is None and not frame.f_code.co_filename.startswith(_LIBRARY_DIR):
            return None

        def local(frame, event, arg):
            nonlocal inner
            check()
            if inner is not None:
                inner = inner(frame, event, arg)
            return local

        return local

    sys.settrace(trace)
    try:
        try:
            return run()
        finally:
            armed[0] = False
    finally:
        sys.settrace(previous)


def _alarm_is_free() -> bool:
    """May SIGALRM be borrowed?  Only in the main thread, when no one uses it."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


class Yaql(Function):
    """``yaql: {expression: <yaql>, data: <any>}``; the data is ``$.data`` in the expression."""

    def validate(self) -> None:
        if not isinstance(self.args, dict):
            raise self.error(f'Arguments to "{self.name}" must be a map.')
        if "expression" not in self.args or set(self.args) - {"expression", "data"}:
            raise self.error(
                f'"{self.name}" syntax should be {self.name}: '
                "{expression: '$.data.var1.sum()', data: {var1: [3, 2, 1]}}"
            )
        expression = self.args["expression"]
        if not isinstance(expression, Function):
            self.parse(expression)

    def parse(self, expression: Any) -> Any:
        if not isinstance(expression, str):
            raise self.error(
                f'The "expression" argument to {self.name} must contain a string, not {describe(expression)}'
            )
        most = limit("max_nesting")
        try:
            if _bracket_depth(expression) > most:
                raise RecursionError
            return _parse(expression)
        except yaql_errors.YaqlException as exc:
            raise self.error(f'Bad expression in "{self.name}": {exc}', code="yaql-error") from None
        except RecursionError:
            raise self.error(f'The expression of "{self.name}" is nested more than {most} levels deep '
                             "(max_nesting)", code="yaql-error") from None

    def result(self) -> Any:
        statement = self.parse(resolve(self.args["expression"]))
        data = resolve(self.args.get("data", {}))
        _, root = _yaql()
        try:
            return _within_budget(
                TIME_BUDGET, lambda: statement.evaluate({"data": data}, root.create_child_context())
            )
        except _OutOfTime:
            raise self.error(f'The "{self.name}" expression took longer than {TIME_BUDGET:g} seconds',
                             code=YAQL_LIMIT) from None
        except PatternTimeout as exc:
            raise self.error(f'The "{self.name}" expression went over its limits: {exc}', code=YAQL_LIMIT) from None
        except (yaql_errors.CollectionTooLargeException, yaql_errors.MemoryQuotaExceededException,
                MemoryError) as exc:
            raise self.error(
                f'The "{self.name}" expression went over its limits ({LIMIT_ITERATORS} items per '
                f"collection, {MEMORY_QUOTA} bytes per value): {exc or type(exc).__name__}",
                code=YAQL_LIMIT,
            ) from None
        except Exception as exc:  # anything the expression does wrong is the template's error
            raise self.error(f'The "{self.name}" expression failed: {exc or type(exc).__name__}',
                             code="yaql-error") from None
