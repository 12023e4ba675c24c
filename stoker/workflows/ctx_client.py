"""The client side of ``ctx``: the ``ctx`` command and ``from stoker import ctx``.

Standard library only: the ``ctx`` launcher runs this file with
``python -S``, so a script's ``ctx`` works whether or not ``stoker`` is on
its PATH or importable.  One request per connection over the execution's
Unix socket: ``{"token", "args"}`` in, ``{"type", "payload"}`` out, one JSON
line each.  Command-line use follows Cloudify's ctx client: arguments
starting with ``@`` are JSON (``@7``, ``@{"a": 1}``), ``-j`` prints JSON,
otherwise the answer prints as Python's ``str`` of it (nothing for null).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import MutableMapping

SOCKET_VARIABLE = "CTX_SOCKET_URL"
TOKEN_VARIABLE = "STOKER_CTX_TOKEN"
USAGE = ("usage: ctx [-j] [-t TIMEOUT] [--socket-url URL] [--json-arg-prefix P] VERB ...\n"
         "  e.g. ctx instance runtime-properties port @8080 | ctx node properties port | "
         "ctx logger info 'hello'")


class CtxError(RuntimeError):
    """The execution refused or could not answer a request."""


class OperationStopped(SystemExit):
    """The operation was ended from the script (abort-operation, retry-operation)."""


def request(args: list, socket_url: str | None = None, token: str | None = None, timeout: float = 30) -> object:
    socket_url = socket_url or os.environ.get(SOCKET_VARIABLE)
    token = token if token is not None else os.environ.get(TOKEN_VARIABLE, "")
    if not socket_url:
        raise CtxError(f"ctx: {SOCKET_VARIABLE} is not set: ctx works only inside an operation run by stoker")
    path = socket_url[len("unix://"):] if socket_url.startswith("unix://") else socket_url
    message = json.dumps({"token": token, "args": args}).encode() + b"\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(path)
            conn.sendall(message)
            chunks = []
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError as exc:
        raise CtxError(f"ctx: cannot reach the execution at {path}: {exc}") from None
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise CtxError("ctx: the execution sent no answer (did it stop?)") from None
    kind, payload = answer.get("type"), answer.get("payload")
    if kind == "error":
        raise CtxError(f"ctx: {payload.get('message')}")
    if kind == "stop_operation":
        raise OperationStopped(payload.get("message"))
    return payload


def parse(argv: list) -> tuple[dict, list]:
    """Leading options, then the request's words (``--`` ends the options)."""
    options = {"timeout": 30.0, "socket_url": None, "prefix": "@", "json": False}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            index += 1
            break
        if arg in ("-j", "--json-output"):
            options["json"] = True
        elif arg in ("-t", "--timeout", "--socket-url", "--json-arg-prefix") and index + 1 < len(argv):
            index += 1
            key = {"-t": "timeout", "--timeout": "timeout", "--socket-url": "socket_url",
                   "--json-arg-prefix": "prefix"}[arg]
            options[key] = argv[index]
        elif arg in ("-h", "--help"):
            raise SystemExit(USAGE)
        else:
            break
        index += 1
    try:
        options["timeout"] = float(options["timeout"])
    except ValueError:
        raise SystemExit(f"ctx: --timeout takes seconds, not {options['timeout']!r}") from None
    return options, argv[index:]


def json_args(words: list, prefix: str) -> list:
    out = []
    for word in words:
        if prefix and word.startswith(prefix):
            try:
                out.append(json.loads(word[len(prefix):]))
            except ValueError as exc:
                raise SystemExit(f"ctx: {word!r} is not JSON after {prefix!r}: {exc}") from None
        else:
            out.append(word)
    return out


def main(argv: list | None = None) -> int:
    options, words = parse(list(sys.argv[1:] if argv is None else argv))
    if not words:
        raise SystemExit(USAGE)
    try:
        answer = request(json_args(words, options["prefix"]), options["socket_url"], timeout=options["timeout"])
    except CtxError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    if options["json"]:
        sys.stdout.write(json.dumps(answer))
    elif answer is not None and answer != "":
        sys.stdout.write(str(answer))
    sys.stdout.flush()
    return 0


# -- Python access: ``from stoker import ctx`` -----------------------------------------------
class _RemoteMapping(MutableMapping):
    """A dict held by the execution; top-level keys read and written one request each."""

    def __init__(self, path: tuple, writable: bool):
        self._path, self._writable = path, writable

    def _all(self) -> dict:
        return request([*self._path])

    def __getitem__(self, key):
        return self._all()[key]

    #: whether this process set a value (each is stored as it is set: ``update()`` has nothing left to do)
    dirty = False

    def __setitem__(self, key, value) -> None:
        if not self._writable:
            raise TypeError(f"{' '.join(self._path)} are read-only")
        request([*self._path, [key], value])
        self.dirty = True

    def __delitem__(self, key) -> None:
        raise TypeError("runtime properties cannot be deleted through ctx; set them to null")

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


class _Entity:
    _VALUES: tuple = ()

    def __init__(self, *path: str):
        self._path = path

    def __getattr__(self, name: str):
        if name in self._VALUES:
            return request([*self._path, name])
        raise AttributeError(name)


class _Instance(_Entity):
    _VALUES = ("id", "index", "host_id")

    def __init__(self, *path: str):
        super().__init__(*path)
        self._runtime = _RemoteMapping((*path, "runtime-properties"), writable=True)

    @property
    def runtime_properties(self) -> _RemoteMapping:
        return self._runtime

    def update(self) -> None:
        """Runtime properties are stored as they are set; kept for Cloudify scripts that call it."""


class _Node(_Entity):
    _VALUES = ("id", "name", "type", "type_hierarchy")

    @property
    def properties(self) -> dict:
        return request([*self._path, "properties"])


class _Side:
    def __init__(self, side: str):
        self.instance, self.node = _Instance(side, "instance"), _Node(side, "node")


class _Named(_Entity):
    _VALUES = ("id",)


class _Logger:
    def _log(self, level: str, message: str, *args) -> None:
        request(["logger", level, message % args if args else str(message)])

    def debug(self, message, *args): self._log("debug", message, *args)
    def info(self, message, *args): self._log("info", message, *args)
    def warning(self, message, *args): self._log("warning", message, *args)
    def error(self, message, *args): self._log("error", message, *args)
    warn = warning


class _Plugin(_Entity):
    """The plugin the operation belongs to: name, package_name, package_version, properties, workdir."""

    _VALUES = ("name", "package_name", "package_version", "properties", "workdir")

    def __getattr__(self, name: str):
        if name in self._VALUES:
            return request(["plugin"]).get(name)
        raise AttributeError(name)


class _Operation(_Entity):
    _VALUES = ("name", "retry_number", "max_retries")

    @property
    def inputs(self) -> dict:
        return request(["operation", "inputs"])

    def retry(self, message: str = "", retry_after: float | None = None) -> None:
        request(["operation", "retry", message, retry_after])


class _Ctx:
    """Cloudify's ``ctx`` for Python scripts, answered by the running execution."""

    instance, node = _Instance("instance"), _Node("node")
    source, target = _Side("source"), _Side("target")
    logger, operation, plugin = _Logger(), _Operation("operation"), _Plugin("plugin")
    deployment, blueprint = _Named("deployment"), _Named("blueprint")

    @property
    def execution_id(self) -> str:
        return request(["execution-id"])

    @property
    def workflow_id(self) -> str:
        return request(["workflow-id"])

    @property
    def type(self) -> str:
        return request(["type"])

    def returns(self, value) -> None:
        request(["returns", value])

    def abort_operation(self, message: str = "") -> None:
        request(["abort-operation", message])

    def retry_operation(self, message: str = "", retry_after: float | None = None) -> None:
        request(["retry-operation", message, retry_after])

    def download_resource(self, resource_path: str, target_path: str | None = None) -> str:
        return request(["download-resource", resource_path] + ([target_path] if target_path else []))

    def get_resource(self, resource_path: str) -> str:
        """A blueprint resource's content."""
        return request(["get-resource", resource_path])

    def local_deployment_workdir(self) -> str:
        """The deployment's own work folder, kept between operations (gone with the deployment)."""
        return request(["local-deployment-workdir"])

    def __call__(self, *args):
        """``ctx('instance', 'runtime-properties', 'port')``: any request, as the command takes it."""
        return request(list(args))


ctx = _Ctx()

if __name__ == "__main__":
    sys.exit(main())
