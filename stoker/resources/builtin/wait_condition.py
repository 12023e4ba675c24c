"""``OS::Heat::WaitConditionHandle`` and ``OS::Heat::WaitCondition``.

A wait condition holds up a stack until something outside the engine says
"done" -- typically a script the stack started, which runs the handle's
``curl_cli`` with ``--data '{"status": "SUCCESS"}'`` added.  Where the stack
lives decides that command line, so that it works wherever it is run:

- in a ``stoker api`` server: Heat's token handle, ``curl -i -X POST -H
  'X-Auth-Token: <the handle's token>' ... <API URL>/v1/<project>/stacks/
  <name>/<id>/resources/<handle>/signal`` (the token admits that one signal);
- from the ``stoker`` command: ``<this Python> -m stoker --db-url <the database>
  stack resource signal <stack id> <handle>``, which needs no ``stoker`` on PATH.

The signal may come from another process than the one creating the stack:
``Engine.signal`` stores it in the handle's data, and the wait condition
reads the handle's row from the store each time it looks.
"""

from __future__ import annotations

import json
import secrets
import shlex
import sys
import time
from typing import Any

from stoker.constraints import AllowedValues, Range
from stoker.errors import StokerError
from stoker.functions.references import GetResource
from stoker.resources import attributes, properties
from stoker.resources.builtin._common import signal_url
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus

#: seconds between two looks at the handle's signals
POLL_INTERVAL = 0.2
#: resource data key of a handle's token (the API admits a signal carrying it)
HANDLE_TOKEN_KEY = "token"

STATUSES = (STATUS_FAILURE, STATUS_SUCCESS) = ("FAILURE", "SUCCESS")
#: the keys of one stored signal (plus its ``id``, the key it is stored under)
SIGNAL_KEYS = (DATA, REASON, STATUS, UNIQUE_ID) = ("data", "reason", "status", "id")


class InvalidSignal(StokerError, ValueError):
    """A signal that is not ``{id, data, status, reason}`` (each optional)."""

    code = "invalid-signal"


class WaitConditionFailure(Exception):
    """A FAILURE signal arrived; the text is the reasons of all of them (as Heat's)."""

    def __init__(self, handle: "WaitConditionHandle"):
        super().__init__(";".join(handle.get_status_reason(STATUS_FAILURE)))


class WaitConditionTimeout(Exception):
    """Not enough SUCCESS signals in time: ``1 of 2 received - reasons`` (as Heat's)."""

    def __init__(self, count: int, handle: "WaitConditionHandle"):
        reasons = handle.get_status_reason(STATUS_SUCCESS)
        message = f"{len(reasons)} of {count} received"
        if reasons:
            message += " - " + ";".join(reasons)
        super().__init__(message)


class WaitConditionHandle(Resource):
    """Receives the signals a wait condition waits for.

    Each signal is a map with optional keys ``status`` (``SUCCESS``, the
    default, or ``FAILURE``), ``reason`` (default ``Signal N received``),
    ``data`` (anything, default null) and ``id`` (default N, the signal's
    number): a later signal with the same ``id`` replaces the earlier one.
    A signal that is not a map is taken as the ``data`` of a SUCCESS.

    Heat's signal transports all become Stoker's one: the ``curl_cli``
    command (see the module's docstring), or ``Engine.signal``.  ``token`` is
    a random string generated at create; a server takes it as the
    ``X-Auth-Token`` of a signal to this handle.
    """

    support_status = SupportStatus(version="2014.2")
    run_in_thread = False

    SIGNAL_TRANSPORT = "signal_transport"
    SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                         "ZAQAR_SIGNAL", "TOKEN_SIGNAL")
    ATTRIBUTES = (TOKEN, ENDPOINT, CURL_CLI, SIGNAL) = ("token", "endpoint", "curl_cli", "signal")
    STATUS_FAILURE, STATUS_SUCCESS = STATUS_FAILURE, STATUS_SUCCESS
    #: resource data keys
    SIGNALS_KEY, TOKEN_KEY = "signals", HANDLE_TOKEN_KEY

    properties_schema = {
        SIGNAL_TRANSPORT: properties.Schema(
            properties.Schema.STRING,
            "How the client signals the handle (accepted for Heat templates; with Stoker "
            "every transport is the curl_cli command).",
            default="TOKEN_SIGNAL", constraints=[AllowedValues(list(SIGNAL_TRANSPORTS))],
            support_status=SupportStatus(version="6.0.0"),
        ),
    }

    attributes_schema = {
        TOKEN: attributes.Schema(
            "A random token generated for this handle; a server takes it as the X-Auth-Token "
            "of a signal to it.",
            cache_mode=attributes.Schema.CACHE_NONE, type=attributes.Schema.STRING,
        ),
        ENDPOINT: attributes.Schema(
            "The URL to POST signals to (with the token) when the stack lives in a server; "
            "from the stoker command, a stoker:// URL naming the handle.",
            cache_mode=attributes.Schema.CACHE_NONE, type=attributes.Schema.STRING,
        ),
        CURL_CLI: attributes.Schema(
            "The command that signals this handle; add --data '{\"status\": \"SUCCESS\"}' "
            "(or FAILURE, with a reason) to it.",
            cache_mode=attributes.Schema.CACHE_NONE, type=attributes.Schema.STRING,
        ),
        SIGNAL: attributes.Schema(
            "JSON map of what a client needs to signal this handle: endpoint, token, command.",
            cache_mode=attributes.Schema.CACHE_NONE, type=attributes.Schema.STRING,
        ),
    }

    # -- the life cycle ---------------------------------------------------------------
    def handle_create(self) -> None:
        # data first, then the id: both go out in the same write, so a process
        # that sees the handle created also sees its token
        self.data_set(self.TOKEN_KEY, secrets.token_urlsafe(32))
        self.resource_id_set(self.physical_resource_name())

    def handle_signal(self, details: Any = None) -> str:
        """Record one signal; returns Heat's event text ``status:S reason:R``."""
        if self.action in (self.INIT, self.DELETE) or self.resource_id is None:
            raise InvalidSignal(f"The wait condition handle {self.name} cannot take signals "
                                f"while {self.action}_{self.status}")
        signals = self.signals()
        entry = normalise_signal(details, len(signals) + 1)
        unique_id = str(entry.pop(UNIQUE_ID))
        signals[unique_id] = entry
        self.data_set(self.SIGNALS_KEY, signals)
        return f"status:{entry[STATUS]} reason:{entry[REASON]}"

    # -- what the wait condition reads ------------------------------------------------
    def signals(self) -> dict:
        """``{id: {data, reason, status}}`` for every signal, fresh from the store.

        Another process may have stored a signal since this object was loaded;
        the fresh copy also becomes this object's data (without marking it
        changed, so this process never writes back an old copy).
        """
        if self.id is not None and getattr(self.stack, "store", None) is not None:
            row = self.stack.store.get_resource(self.id)
            stored = (row.data or {}).get(self.SIGNALS_KEY)
            if stored is not None:
                self._data[self.SIGNALS_KEY] = stored
            else:
                self._data.pop(self.SIGNALS_KEY, None)
        return {k: dict(v) for k, v in (self._data.get(self.SIGNALS_KEY) or {}).items()}

    def get_status(self) -> list[str]:
        """The status of every signal received."""
        return [entry[STATUS] for entry in self.signals().values()]

    def get_status_reason(self, status: str) -> list[str]:
        """The reasons of the signals with ``status``."""
        return [entry[REASON] for entry in self.signals().values() if entry[STATUS] == status]

    def all_data(self) -> dict:
        """``{id: data}`` of every signal."""
        return {key: entry.get(DATA) for key, entry in self.signals().items()}

    def clear_signals(self) -> None:
        self.data_set(self.SIGNALS_KEY, {})

    # -- attributes ---------------------------------------------------------------------
    def _engine(self) -> Any:
        return getattr(self.stack, "engine", None)

    def _endpoint(self) -> str:
        return signal_url(self)

    def _command(self) -> str:
        engine = self._engine()
        if getattr(engine, "api_url", None):
            return shlex.join(["curl", "-i", "-X", "POST", "-H", f"X-Auth-Token: {self.data().get(self.TOKEN_KEY)}",
                               "-H", "Content-Type: application/json", "-H", "Accept: application/json",
                               self._endpoint()])
        database = ["--db-url", engine.db_url_for_others()] if engine is not None else []
        return shlex.join([sys.executable, "-m", "stoker", *database, "stack", "resource", "signal",
                           str(self.stack.id), self.name])

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.TOKEN:
            return self.data().get(self.TOKEN_KEY)
        if name == self.ENDPOINT:
            return self._endpoint()
        if name == self.CURL_CLI:
            return self._command()
        if name == self.SIGNAL:
            return json.dumps({"endpoint": self._endpoint(), "token": self.data().get(self.TOKEN_KEY),
                               "command": self._command()})
        return None

    def _show_resource(self) -> Any:
        return {"signals": self.signals()}


def normalise_signal(details: Any, number: int) -> dict:
    """One signal as stored, Heat's defaults filled in; ``InvalidSignal`` if malformed."""
    if details is None:
        entry: dict = {}
    elif isinstance(details, dict):
        entry = dict(details)
    else:
        entry = {DATA: details}
    unknown = sorted(set(map(str, entry)) - set(SIGNAL_KEYS))
    if unknown:
        raise InvalidSignal(f"Metadata format invalid: unknown keys {', '.join(unknown)} "
                            f"(a signal may have {', '.join(SIGNAL_KEYS)})")
    entry.setdefault(REASON, f"Signal {number} received")
    entry.setdefault(DATA, None)
    entry.setdefault(UNIQUE_ID, number)
    entry.setdefault(STATUS, STATUS_SUCCESS)
    if entry[STATUS] not in STATUSES:
        raise InvalidSignal(f"Metadata format invalid: status must be SUCCESS or FAILURE, "
                            f"not {entry[STATUS]!r}")
    return entry


class WaitCondition(Resource):
    """Waits for ``count`` SUCCESS signals on a handle, for at most ``timeout`` seconds.

    Any FAILURE signal fails it, with the signals' reasons.  Its ``data``
    attribute is a JSON string mapping each signal's id to its data.
    Changing ``count`` waits again (in place) until that many signals have
    arrived; deleting the wait condition clears the handle's signals, as Heat.

    The handle is found from the ``handle`` property: a ``get_resource`` in
    the template names it directly; any other value is matched against the
    references (``get_resource`` values) of the stack's resources, then
    their names.
    """

    support_status = SupportStatus(version="2014.2")
    run_in_thread = False

    PROPERTIES = (HANDLE, TIMEOUT, COUNT) = ("handle", "timeout", "count")
    DATA_ATTR = "data"

    properties_schema = {
        HANDLE: properties.Schema(
            properties.Schema.STRING,
            "A reference to the wait condition handle used to signal this wait condition.",
            required=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.NUMBER,
            "The number of seconds to wait for the correct number of signals to arrive.",
            required=True, constraints=[Range(1, 43200)],
        ),
        COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of success signals that must be received before the stack "
            "creation process continues.",
            default=1, constraints=[Range(min=1)], update_allowed=True,
        ),
    }

    attributes_schema = {
        DATA_ATTR: attributes.Schema(
            "JSON string containing data associated with wait condition signals sent to the handle.",
            cache_mode=attributes.Schema.CACHE_NONE, type=attributes.Schema.STRING,
        ),
    }

    # -- the handle ---------------------------------------------------------------------
    def _handle(self) -> Resource | None:
        """The handle resource, or None when the stack has no such resource."""
        resources = getattr(self.stack, "resources", {}) or {}
        raw = self.t.properties.get(self.HANDLE) if isinstance(self.t.properties, dict) else None
        if isinstance(raw, GetResource):
            name = raw.static_resource_name()
            if name is not None:
                return resources.get(name)
        reference = self.properties[self.HANDLE]
        for resource in resources.values():
            if resource is not self and resource.resource_id is not None \
                    and resource.FnGetRefId() == reference:
                return resource
        return resources.get(reference)

    def _valid_handle(self) -> WaitConditionHandle:
        handle = self._handle()
        if not isinstance(handle, WaitConditionHandle):
            name = handle.name if handle is not None else self.properties[self.HANDLE]
            raise ValueError(f"{name} is not a valid wait condition handle.")
        return handle

    # -- waiting: the token is the deadline (time.monotonic) -----------------------------
    def _start(self) -> float:
        self._valid_handle()
        return time.monotonic() + float(self.properties[self.TIMEOUT])

    def _done(self, deadline: float) -> bool:
        handle = self._valid_handle()
        statuses = handle.get_status()
        if any(status != STATUS_SUCCESS for status in statuses):
            raise WaitConditionFailure(handle)
        count = self.properties[self.COUNT]
        if len(statuses) >= count:
            return True
        if time.monotonic() >= deadline:
            raise WaitConditionTimeout(count, handle)
        return False

    def poll_delay(self, token: Any) -> float | None:
        if isinstance(token, float):
            return max(0.0, min(POLL_INTERVAL, token - time.monotonic()))
        return None

    def handle_create(self) -> float:
        return self._start()

    def check_create_complete(self, token: float) -> bool:
        return self._done(token)

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> float:
        return self._start()

    def check_update_complete(self, token: float) -> bool:
        return self._done(token)

    def handle_delete(self) -> None:
        try:
            handle = self._handle()
        except Exception:  # no definition left (a retired resource): nothing to clear
            return
        if isinstance(handle, WaitConditionHandle) and handle.resource_id is not None \
                and handle.action != handle.DELETE:
            handle.clear_signals()

    # -- attributes ---------------------------------------------------------------------
    def _resolve_attribute(self, name: str) -> Any:
        if name != self.DATA_ATTR:
            return None
        handle = self._handle()
        if not isinstance(handle, WaitConditionHandle):
            return ""
        return json.dumps(handle.all_data())


def resource_mapping() -> dict:
    return {
        "OS::Heat::WaitConditionHandle": WaitConditionHandle,
        "OS::Heat::WaitCondition": WaitCondition,
    }
