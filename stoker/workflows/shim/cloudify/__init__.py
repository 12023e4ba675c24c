"""``from cloudify import ctx`` for the Python scripts of Cloudify blueprints, run by Stoker.

``ctx`` is Stoker's (``stoker/workflows/ctx_client.py``, loaded by path so
no ``stoker`` import is needed).  An uncaught ``NonRecoverableError`` aborts
the operation (no retries), an ``OperationRetry``/``RecoverableError`` with
``retry_after`` asks for a retry after that many seconds, as in Cloudify.
"""

import importlib.util
import os
import sys

_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "ctx_client.py")
_spec = importlib.util.spec_from_file_location("_stoker_ctx_client", _CLIENT)
_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_client)
ctx = _client.ctx


def _tell_stoker(kind, value, traceback):
    from cloudify.exceptions import NonRecoverableError, RecoverableError

    try:
        if isinstance(value, NonRecoverableError):
            _client.request(["abort-operation", str(value)])
        elif isinstance(value, RecoverableError) and value.retry_after is not None:
            _client.request(["retry-operation", str(value), value.retry_after])
    except (SystemExit, _client.CtxError):
        pass  # the answer to an abort or a retry is "stop": that is what happens next anyway
    _previous_hook(kind, value, traceback)


_previous_hook = sys.excepthook
sys.excepthook = _tell_stoker
