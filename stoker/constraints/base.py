"""Constraints on values, shared by template parameters and resource properties.

A constraint checks a value that already has its final type (a number for
``range``, a list for ``length`` of a list ...).  When it fails it raises
``ConstraintViolation`` whose message is the template author's
``description`` if one was given, else a default message worded as Heat's, so
users moving from Heat recognise them.  ``summary()`` states the rule without
the value, for places where the value must not be shown (hidden parameters).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import json
import numbers
from typing import Any, Callable

from stoker import patterns
from stoker.constraints import custom
from stoker.errors import StokerError


class ConstraintViolation(StokerError):
    """A value breaks a constraint; ``message`` says which and how."""

    code = "constraint-violation"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def show(value: Any) -> str:
    """A value as messages print it: as JSON, so strings are quoted."""
    return json.dumps(value, default=str)


def is_number(value: Any) -> bool:
    """True for ints and floats; booleans are not numbers here."""
    kind = type(value)
    if kind is int or kind is float:  # most values: no ABC check
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class Constraint(ABC):
    """One rule a value must follow.  ``key`` is its name in HOT."""

    key = ""

    def __init__(self, description: str | None = None):
        self.description = description

    def validate(self, value: Any, context: Any = None) -> None:
        message = self.problem(value, context)
        if message is not None:
            raise ConstraintViolation(self.description or message)

    @abstractmethod
    def problem(self, value: Any, context: Any = None) -> str | None:
        """The default message for an invalid ``value``, None if it is valid."""

    @abstractmethod
    def summary(self) -> str:
        """The rule in words, without any value."""

    @abstractmethod
    def definition(self) -> Any:
        """The constraint's argument as written in HOT."""

    def schema_dict(self) -> dict:
        data = {self.key: self.definition()}
        if self.description is not None:
            data["description"] = self.description
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.schema_dict()!r})"


class _Bounds(Constraint):
    """A measure of the value (itself, or its length) between min and max."""

    noun = ""  # what the summary talks about
    _bound_kind = "numbers"

    def __init__(self, min: Any = None, max: Any = None, description: str | None = None):
        super().__init__(description)
        if min is None and max is None:
            raise ValueError(f"a {self.key} constraint needs a min value, a max value or both")
        for bound in (min, max):
            if bound is not None and not self._valid_bound(bound):
                raise ValueError(f"the min and max of a {self.key} constraint must be "
                                 f"{self._bound_kind}, not {show(bound)}")
        self.min = min
        self.max = max

    def _valid_bound(self, bound: Any) -> bool:
        return is_number(bound)

    def _within(self, measure: Any) -> bool:
        return ((self.min is None or measure >= self.min)
                and (self.max is None or measure <= self.max))

    def summary(self) -> str:
        if self.max is None:
            return f"The {self.noun} must be at least {self.min}."
        if self.min is None:
            return f"The {self.noun} must be at most {self.max}."
        return f"The {self.noun} must be between {self.min} and {self.max}."

    def definition(self) -> dict:
        return {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}


class Range(_Bounds):
    """A number within inclusive bounds."""

    key = "range"
    noun = "value"

    def problem(self, value: Any, context: Any = None) -> str | None:
        if not is_number(value):
            return f"{show(value)} is not a number"
        if self._within(value):
            return None
        return f"{value} is out of range (min: {self.min}, max: {self.max})"


class Length(_Bounds):
    """A string, list or map whose length is within inclusive bounds."""

    key = "length"
    noun = "length"
    _bound_kind = "integers"

    def _valid_bound(self, bound: Any) -> bool:
        return isinstance(bound, int) and not isinstance(bound, bool)

    def problem(self, value: Any, context: Any = None) -> str | None:
        if not isinstance(value, (str, list, tuple, dict)):
            return f"{show(value)} has no length"
        if self._within(len(value)):
            return None
        return f"length ({len(value)}) is out of range (min: {self.min}, max: {self.max})"


class Modulo(Constraint):
    """A number equal to ``offset`` modulo ``step``."""

    key = "modulo"

    def __init__(self, step: Any, offset: Any, description: str | None = None):
        super().__init__(description)
        if step is None or offset is None:
            raise ValueError("a modulo constraint needs both a step and an offset")
        for arg in (step, offset):
            if not is_number(arg) or int(arg) != arg:
                raise ValueError(f"the step and offset of a modulo constraint must be integers, "
                                 f"not {show(arg)}")
        step, offset = int(step), int(offset)
        if step == 0:
            raise ValueError("the step of a modulo constraint cannot be 0")
        if abs(offset) >= abs(step):
            raise ValueError("the offset of a modulo constraint must be smaller than its step "
                             "(by absolute value)")
        if step * offset < 0:
            raise ValueError("the step and offset of a modulo constraint must have the same sign")
        self.step = step
        self.offset = offset

    def problem(self, value: Any, context: Any = None) -> str | None:
        if not is_number(value):
            return f"{show(value)} is not a number"
        if value % self.step == self.offset:
            return None
        return f"{value} is not a multiple of {self.step} with an offset of {self.offset}"

    def summary(self) -> str:
        return f"The value must be a multiple of {self.step} with an offset of {self.offset}."

    def definition(self) -> dict:
        return {"step": self.step, "offset": self.offset}


class AllowedValues(Constraint):
    """The value (or, for a list, each item) is one of a fixed set.

    ``coerce`` turns each allowed value into the type of the values checked
    (a number parameter may list ``"1"``); one that cannot be turned matches
    nothing.
    """

    key = "allowed_values"

    def __init__(self, values: Any = None, description: str | None = None,
                 coerce: Callable[[Any], Any] | None = None, allowed: Any = None):
        # ``allowed=`` is the keyword Heat plug-ins use
        values = allowed if values is None else values
        super().__init__(description)
        if not isinstance(values, (list, tuple)):
            raise ValueError(f"allowed_values must be a list, not {show(values)}")
        self.values = list(values)
        self.allowed = self.values
        self._matches = [m for m in (_coerced(v, coerce) for v in self.values) if m is not _NO_MATCH]

    def problem(self, value: Any, context: Any = None) -> str | None:
        if value in self._matches if not isinstance(value, list) else all(item in self._matches for item in value):
            return None
        return f"{show(value)} is not an allowed value [{self._listed()}]"

    def _listed(self) -> str:
        return ", ".join(show(v) for v in self.values)

    def summary(self) -> str:
        return f"Allowed values: {self._listed()}"

    def definition(self) -> list:
        return list(self.values)


_NO_MATCH = object()


def _coerced(value: Any, coerce: Callable[[Any], Any] | None) -> Any:
    if coerce is None:
        return value
    try:
        return coerce(value)
    except ValueError:
        return _NO_MATCH


class AllowedPattern(Constraint):
    """A string matched, from its start to its end, by a regular expression.

    As in Heat the match is ``re.match`` that must end at the string's end;
    this differs from ``re.fullmatch`` for alternations (``a|ab`` rejects "ab").
    The author's pattern is matched within ``max_pattern_seconds`` (``stoker.patterns``).
    """

    key = "allowed_pattern"

    def __init__(self, pattern: Any, description: str | None = None):
        super().__init__(description)
        if not isinstance(pattern, str):
            raise ValueError(f"allowed_pattern must be a string, not {show(pattern)}")
        try:
            self._regex = patterns.compiled(pattern)
        except patterns.error as exc:
            raise ValueError(f"allowed_pattern {show(pattern)} is not a valid regular "
                             f"expression: {exc}") from None
        self.pattern = pattern

    def problem(self, value: Any, context: Any = None) -> str | None:
        if not isinstance(value, str):
            return f"{show(value)} is not a string"
        if self.accepts(value):
            return None
        return f'"{value}" does not match pattern "{self.pattern}"'

    def accepts(self, value: str) -> bool:
        """Heat's test; ``PatternTimeout`` (not a violation: the pattern's fault) past the time a match may take."""
        match = patterns.match(self._regex, value, "allowed_pattern")
        return match is not None and match.end() == len(value)

    def summary(self) -> str:
        return f"The value must match the pattern: {self.pattern}"

    def definition(self) -> str:
        return self.pattern


class CustomConstraint(Constraint):
    """A named check from the custom-constraint registry.

    The name is looked up at each check, so plug-ins registered after the
    template was read are found; an unknown name fails every value.
    """

    key = "custom_constraint"

    def __init__(self, name: Any, description: str | None = None):
        super().__init__(description)
        if not isinstance(name, str) or not name:
            raise ValueError(f"custom_constraint must be a constraint name, not {show(name)}")
        self.name = name

    def problem(self, value: Any, context: Any = None) -> str | None:
        check = custom.get(self.name)
        if check is None:
            return f'"{value}" does not validate {self.name} (constraint not found)'
        return check.error(value, context)

    def summary(self) -> str:
        check = custom.get(self.name)
        return (check and check.message) or f"The value must be a valid {self.name}."

    def definition(self) -> str:
        return self.name
