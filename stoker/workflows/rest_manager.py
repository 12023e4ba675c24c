"""Where a plugin operation's ``cloudify.manager.get_rest_client()`` reaches "the manager".

On Cloudify, an agent hands each task the manager's REST address and a token
for the execution's tenant.  In Stoker the manager is Stoker's own Cloudify
REST API: whoever runs this process (the ``stoker`` command, ``stoker api``,
``stoker worker``) names, with ``provide``, what grants that access -- the
workflows cannot import the API, which imports them.  A grant is one task's:
a token of the task's project, given up (``release``) when the task ends.
Without a provider, a plugin task still runs; only its REST client has
nowhere to go.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Protocol


@dataclass(frozen=True)
class RestAccess:
    """What cloudify-common's REST client needs: the address and a token scoped to one project."""

    host: str
    port: int
    protocol: str
    token: str
    #: the grant's own id, for ``release``
    grant_id: str

    def as_context(self) -> dict:
        """The keys of cloudify-common's operation context (``ctx.rest_host`` ...) and the protocol."""
        return {"rest_host": [self.host], "rest_port": self.port, "rest_token": self.token,
                "rest_protocol": self.protocol}


class RestManager(Protocol):
    def grant(self, store: Any, project_id: str, purpose: str) -> RestAccess:
        """Access to the REST API over ``store`` for ``project_id``'s tenant, for one task."""

    def release(self, store: Any, access: RestAccess) -> None:
        """The task ended: its token stops working."""

    def close(self) -> None:
        """Stop serving (``stop``)."""


_provider: Callable[[], RestManager] | None = None
_manager: RestManager | None = None
_lock = threading.Lock()


def provide(make: Callable[[], RestManager] | None) -> None:
    """``make()`` builds this process's manager on first use (None: plugin tasks get no REST access).
    A manager built by the provider this replaces is closed: its server would serve on, unreachable."""
    global _provider, _manager
    with _lock:
        replaced, _provider, _manager = _manager, make, None
    if replaced is not None:
        replaced.close()


def current() -> RestManager | None:
    """This process's manager, built on first use; None when none was provided."""
    global _manager
    with _lock:
        if _manager is None and _provider is not None:
            _manager = _provider()
        return _manager


def stop() -> None:
    """Forget the provider and close the manager it built (a test's end: the next starts afresh)."""
    global _provider, _manager
    with _lock:
        manager, _provider, _manager = _manager, None, None
    if manager is not None:
        manager.close()
