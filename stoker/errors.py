"""Errors that users see.

Every problem Stoker reports names a *place*: a path into the template
(``resources.web.properties.port``) and, where the source text is known, the
file, line and column.  A ``Problem`` is one such report; ``ValidationFailed``
carries all of them at once, because users should fix a whole template in one
run, not one error per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

Path = tuple  # a tuple of str keys and int indexes
#: the code of a use of a parameter whose value was refused: reported once, at the parameter
REJECTED_PARAMETER = "rejected-parameter"
#: codes of a value over ``max_value_size`` (``functions/sizes.py``): a function's result, a stored
#: value; and of a yaql expression over its limits (``functions/yaql_function.py``)
RESULT_TOO_LARGE, VALUE_TOO_LARGE, YAQL_LIMIT = "result-too-large", "value-too-large", "yaql-limit"
SIZE_LIMIT_CODES = frozenset({RESULT_TOO_LARGE, VALUE_TOO_LARGE, YAQL_LIMIT})


def format_path(path: Iterable[Any]) -> str:
    """``('resources', 'web', 'properties')`` -> ``resources.web.properties``."""
    return ".".join(str(p) for p in path)


@dataclass
class Problem:
    """One error (or warning) at one place."""

    path: Path
    code: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    severity: str = "error"

    def as_dict(self) -> dict:
        return {
            "path": format_path(self.path),
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line:
                where += f":{self.line}:{self.column or 1}"
            where += ": "
        place = format_path(self.path)
        return f"{where}{place}: {self.message}" if place else f"{where}{self.message}"


class StokerError(Exception):
    """Base of every error Stoker raises on purpose."""

    code = "error"


class FunctionError(StokerError):
    """An intrinsic function got bad arguments or could not compute its result.

    ``path`` is where the function sits in the template; it is filled in by
    whoever knows it (the function node knows its own path).
    """

    def __init__(self, message: str, code: str = "invalid-function-arguments", path: Path = ()):
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = tuple(path)

    def problem(self) -> Problem:
        return Problem(self.path, self.code, self.message)

    def __str__(self) -> str:
        return f"{format_path(self.path)}: {self.message}" if self.path else self.message


class ValidationFailed(StokerError):
    """A template, environment or set of parameters is invalid.

    Holds every problem found, so the user sees them all at once.
    """

    code = "validation-failed"

    def __init__(self, problems: list[Problem]):
        self.problems = [p for p in problems if p.severity == "error"]
        self.warnings = [p for p in problems if p.severity != "error"]
        super().__init__("\n".join(str(p) for p in self.problems) or "validation failed")

    @classmethod
    def single(cls, path: Path, code: str, message: str) -> "ValidationFailed":
        return cls([Problem(tuple(path), code, message)])


class ResourcePending(StokerError):
    """A value needs a resource that does not exist (yet).

    Raised while resolving without an engine (``stoker template resolve``), or
    before a resource has been created.
    """

    code = "resource-pending"

    def __init__(self, resource: str):
        super().__init__(f"needs resource {resource!r}")
        self.resource = resource


class NotFound(StokerError):
    code = "not-found"


class Conflict(StokerError):
    """An action cannot start now (another is in progress, or a state forbids it)."""

    code = "conflict"


class IllegalAction(StokerError):
    """A change Cloudify refuses as an illegal action (its 400 ``illegal_action_error``): a visibility
    narrowed, a global resource changed from another tenant."""

    code = "illegal-action"
    cloudify_code = "illegal_action_error"


@dataclass
class Problems:
    """Collects problems while a template is checked from top to bottom."""

    items: list[Problem] = field(default_factory=list)

    def add(self, path: Iterable[Any], code: str, message: str, severity: str = "error") -> None:
        self.extend([Problem(tuple(path), code, message, severity=severity)])

    def warn(self, path: Iterable[Any], code: str, message: str) -> None:
        self.add(path, code, message, severity="warning")

    def unknown_keys(self, path: tuple, given: Iterable[Any], allowed: Any, where: str = "") -> None:
        """An ``unknown-key`` error at each key of ``given`` not ``allowed`` (``where``: " in a node ...")."""
        for key in given:
            if key not in allowed:
                self.add(path + (key,), "unknown-key", f"unknown key '{key}'{where}")

    def extend(self, problems: Iterable[Problem]) -> None:
        """Add problems; one already reported at the same place is not repeated, and
        a use of a parameter whose value was refused is not reported again."""
        seen = {(p.path, p.code, p.message) for p in self.items}
        for problem in problems:
            key = (problem.path, problem.code, problem.message)
            if key not in seen and problem.code != REJECTED_PARAMETER:
                seen.add(key)
                self.items.append(problem)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity != "error"]

    def raise_if_errors(self) -> None:
        if self.errors:
            raise ValidationFailed(self.items)

    def extend_as_create_time(self, problems: Iterable[Problem]) -> None:
        """Add errors Heat finds only when the stack is created, as warnings: ``template
        validate`` gives Heat's verdict yet still shows them, each at its place.  A value
        over a size limit stays an error: the create refuses it before starting, and so
        does validate."""
        self.extend(Problem(p.path, p.code, f"{p.message} (an error at create)", p.file, p.line, p.column,
                            severity="warning") if p.severity == "error" and p.code not in SIZE_LIMIT_CODES
                    else p for p in problems)


class DatabaseUnavailable(StokerError):
    """The state database cannot be opened (a bad URL, a missing folder or driver, a server away)."""

    code = "database-unavailable"


class DatabaseAway(DatabaseUnavailable):
    """The database server did not answer: a worker retries its task until it is back."""


class StaleWrite(StokerError):
    """A resource changed since the writer read it: another worker got there first."""

    code = "stale-write"


class GivenUp(Exception):
    """Whoever waited for this work stopped waiting (the API answered 503): the work stops.

    Not a ``StokerError`` on purpose: no check may turn it into a problem and go on.
    """
