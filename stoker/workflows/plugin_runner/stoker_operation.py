"""``python stoker_operation.py module.function``: one plugin task, run by cloudify-common as its agent runs it.

Runs in the plugin's own virtualenv, where the real cloudify-common is
installed (no Stoker code is importable there).  The task goes through
cloudify-common's own ``OperationHandler``: ``ctx`` is its ``CloudifyContext``
(node, instance with dirty-tracked runtime properties stored by ``update()``
and at the end, source/target, plugin, operation, logger, resources), the
inputs are the keyword arguments and ``cloudify.state.ctx_parameters``.  The
context reads and writes through a local endpoint whose storage is the
running execution, reached over the ``ctx`` socket (``ctx_client.py``, loaded
by path).  Errors mean what they mean on a manager: ``NonRecoverableError``
fails at once, ``OperationRetry``/``ctx.operation.retry()`` and a
``RecoverableError`` with ``retry_after`` ask for a retry, anything else fails
the attempt (retried while retries remain).  ``cloudify.manager.get_rest_client()``
reaches Stoker's Cloudify REST API with the task's own token, as an agent's
task reaches its manager: the address and token come with the task, and are
set where cloudify-common looks for them (the context and ``REST_*``).
"""

import importlib.util
import os
import sys
import traceback

_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "ctx_client.py")
_spec = importlib.util.spec_from_file_location("_stoker_ctx_client", _CLIENT)
_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_client)

import certifi  # noqa: E402  (requests' own: cloudify-common depends on it)
from cloudify import context, dispatch, exceptions, manager  # noqa: E402  (after the client: no Stoker import)
from cloudify.endpoint import LocalEndpoint  # noqa: E402
from cloudify.logs import CloudifyPluginLoggingHandler  # noqa: E402
from cloudify_rest_client.nodes import Node  # noqa: E402

_LEVELS = {"debug": "debug", "info": "info", "warning": "warning", "error": "error", "critical": "error"}


def _log_out(log, **_kwargs):
    _client.request(["logger", _LEVELS.get(log.get("level"), "info"), log["message"]["text"]])


class _ExecutionStorage:
    """What cloudify-common's local endpoint asks its storage for, answered by the running execution."""

    def __init__(self, task):
        self.task = task

    def get_node(self, node_id):
        return Node(self.task["nodes"][node_id])

    def get_node_instance(self, node_instance_id):
        return self.task["instances"][node_instance_id]

    def update_node_instance(self, node_instance_id, runtime_properties=None, state=None, version=None):
        _client.request(["update-instance", node_instance_id, dict(runtime_properties or {})])
        self.task["instances"][node_instance_id]["runtime_properties"] = dict(runtime_properties or {})

    def download_resource(self, resource_path, target_path=None):
        return _client.request(["download-resource", resource_path] + ([target_path] if target_path else []))

    def get_resource(self, resource_path):
        with open(self.download_resource(resource_path), "rb") as data:
            return data.read()

    def get_provider_context(self):
        return {}

    def get_workdir(self):
        return self.task["workdir"]


class _ExecutionEndpoint(LocalEndpoint):
    """The local endpoint, with instances as the execution keeps them and logs and events sent to it."""

    def get_node_instance(self, node_instance_id):
        found = self.storage.get_node_instance(node_instance_id)
        return manager.NodeInstance(node_instance_id, found["node_id"], runtime_properties=found["runtime_properties"],
                                    state=found.get("state"), version=found.get("version", 1),
                                    host_id=found.get("host_id"), relationships=found.get("relationships"),
                                    index=found.get("index"))

    def get_logging_handler(self):
        return CloudifyPluginLoggingHandler(self.ctx, out_func=_log_out)

    def send_plugin_event(self, message=None, args=None, additional_context=None):
        _client.request(["logger", "info", message % args if args else str(message)])


def _reach_manager(context, rest):
    """The manager's address and the task's token where cloudify-common's ``get_rest_client`` reads them."""
    context.update(rest_host=rest["rest_host"], rest_port=rest["rest_port"], rest_token=rest["rest_token"])
    os.environ.update(REST_HOST=",".join(rest["rest_host"]), REST_PORT=str(rest["rest_port"]),
                      REST_PROTOCOL=rest["rest_protocol"])
    # read even over http (get_local_rest_certificate): the CA bundle requests verifies https with
    os.environ.setdefault("LOCAL_REST_CERT_FILE", certifi.where())


def main(task_name):
    task = _client.request(["plugin-task"])
    task["context"].update({"local": True, "storage": _ExecutionStorage(task), "task_name": task_name})
    if task.get("rest"):
        _reach_manager(task["context"], task["rest"])
    context.LocalEndpoint = _ExecutionEndpoint  # the context makes its endpoint from this name
    handler = dispatch.OperationHandler(task["context"], [], dict(task["inputs"]))
    try:
        result = handler.handle()
    except dispatch._WrappedTaskError as wrapped:  # the task's own exception, its traceback kept
        return _failed(wrapped.wrapped_exc, wrapped.wrapped_tb)
    except exceptions.OperationRetry as retry:  # ctx.operation.retry()
        return _failed(retry, "")
    if result is not None:
        _client.request(["returns", result])
    return 0


def _failed(exc, trace):
    if isinstance(exc, exceptions.NonRecoverableError):
        _client.request(["abort-operation", str(exc) or type(exc).__name__])
    elif isinstance(exc, exceptions.RecoverableError) and (exc.retry_after is not None
                                                           or isinstance(exc, exceptions.OperationRetry)):
        _client.request(["retry-operation", str(exc) or type(exc).__name__, exc.retry_after])
    sys.stderr.write(trace)
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except _client.OperationStopped:
        sys.exit(0)  # abort or retry: the execution knows already
    except Exception:  # noqa: BLE001  (a failure before the task ran: its traceback is the operation's error)
        traceback.print_exc()
        sys.exit(1)
