"""Errors of the blueprint layer: each names its place (a dotted path, and file:line:col when known)."""

from __future__ import annotations

from stoker.errors import Problem, StokerError


class BlueprintError(StokerError):
    """A blueprint, its inputs or a function in it is wrong; ``path`` says where."""

    code = "invalid-blueprint"

    def __init__(self, message: str, path: str = "", code: str | None = None):
        self.message = message
        self.path = path
        if code:
            self.code = code
        super().__init__(f"{path}: {message}" if path else message)

    def problem(self) -> Problem:
        return Problem(tuple(self.path.split(".")) if self.path else (), self.code, self.message)


class FunctionFailed(BlueprintError):
    """An intrinsic function got bad arguments or could not be evaluated."""

    code = "function-failed"

    def __init__(self, function: str, message: str, path: str = ""):
        self.function = function
        #: the message alone, without the function's name and place
        self.reason = message
        super().__init__(f"{function}: {message}", path)


class InputError(BlueprintError):
    """A deployment input is missing, unknown, of the wrong type or breaks a constraint."""

    code = "invalid-input"
