"""``python -m _stoker_operation module.function``: run one plugin task as Cloudify's agent would.

Runs in the plugin's own virtualenv with ``shim`` first on the path: the
operation's inputs are the task's keyword arguments (``ctx`` too, when it takes
it), what it returns is the operation's result, and Cloudify's errors mean what
they mean there: ``NonRecoverableError`` fails at once, ``OperationRetry`` and
``RecoverableError`` with ``retry_after`` ask for a retry, anything else fails
the attempt (retried while retries remain).
"""

import importlib
import inspect
import sys
import traceback

from cloudify import _client, ctx
from cloudify.exceptions import NonRecoverableError, RecoverableError
from cloudify.state import ctx_parameters


def _takes_ctx(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "ctx" or p.kind == p.VAR_KEYWORD for p in parameters)


def main(task):
    module_name, _, name = task.rpartition(".")
    function = getattr(importlib.import_module(module_name), name)
    inputs = _client.request(["operation", "inputs"]) or {}
    ctx_parameters.update(inputs)
    kwargs = dict(inputs)
    if _takes_ctx(function) and not getattr(function, "_cloudify_operation", False):
        kwargs["ctx"] = ctx
    try:
        result = function(**kwargs)
    except NonRecoverableError as exc:
        _client.request(["abort-operation", str(exc) or type(exc).__name__])
    except RecoverableError as exc:
        if exc.retry_after is None and type(exc) is RecoverableError:
            raise
        _client.request(["retry-operation", str(exc) or type(exc).__name__, exc.retry_after])
    else:
        if result is not None:
            ctx.returns(result)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except _client.OperationStopped:
        sys.exit(0)  # abort or retry: the execution knows already
    except Exception:  # noqa: BLE001  (the task's own failure: its traceback is the operation's error)
        traceback.print_exc()
        sys.exit(1)
