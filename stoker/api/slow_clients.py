"""Bounds on what a slow or greedy client can hold: uvicorn's HTTP/1.1 protocol (h11) with a
deadline for a request's headers, one for its body, and a cap on connections per address.

uvicorn times out only idle keep-alive connections, and any byte received
cancels that timer: a client sending a header line every few seconds held a
connection (and its memory) for as long as it liked, and 1,000 of them from
one address were all held.  Here a request's headers must be complete within
``header_timeout`` seconds of the connection (or of the previous response),
its body within ``body_timeout`` seconds of its headers; otherwise the client
gets ``408`` and the connection is closed.  An address with
``max_connections_per_address`` connections open gets ``503`` for the next.

Each worker process reads the bounds from its environment (``STOKER_API_*``,
set by ``stoker api`` from its options).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

ENV_PREFIX = "STOKER_API_"


@dataclass(frozen=True)
class ClientBounds:
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_connections_per_address: int = 100

    @classmethod
    def from_env(cls) -> "ClientBounds":
        env = os.environ
        return cls(float(env.get(ENV_PREFIX + "HEADER_TIMEOUT") or cls.header_timeout),
                   float(env.get(ENV_PREFIX + "BODY_TIMEOUT") or cls.body_timeout),
                   int(env.get(ENV_PREFIX + "MAX_CONNECTIONS_PER_ADDRESS") or cls.max_connections_per_address))

    def to_env(self) -> dict[str, str]:
        return {ENV_PREFIX + "HEADER_TIMEOUT": str(self.header_timeout),
                ENV_PREFIX + "BODY_TIMEOUT": str(self.body_timeout),
                ENV_PREFIX + "MAX_CONNECTIONS_PER_ADDRESS": str(self.max_connections_per_address)}


def _reply(status: str) -> bytes:
    return f"HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode("ascii")


TIMED_OUT = _reply("408 Request Timeout")
TOO_MANY = _reply("503 Service Unavailable")


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the per-address cap above."""

    #: open connections per client address, in this worker process
    open_by_address: ClassVar[Counter] = Counter()
    _bounds: ClassVar[ClientBounds | None] = None

    @classmethod
    def bounds(cls) -> ClientBounds:
        if cls._bounds is None:
            cls._bounds = ClientBounds.from_env()
        return cls._bounds

    #: set once the server stops: responses that stream until their client goes (``audit_stream``) end then
    stopping: ClassVar[bool] = False

    def shutdown(self) -> None:
        BoundedH11Protocol.stopping = True
        super().shutdown()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_body = False
        self._address = self.client[0] if self.client else None
        if self._address is not None:
            if self.open_by_address[self._address] >= self.bounds().max_connections_per_address:
                self._address = None  # not counted: it is refused
                transport.write(TOO_MANY)
                transport.close()
                return
            self.open_by_address[self._address] += 1
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._address is not None:
            self.open_by_address[self._address] -= 1
            if self.open_by_address[self._address] <= 0:
                del self.open_by_address[self._address]
            self._address = None
        self._cancel_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY and not self._reading_body:
            self._reading_body = True
            self._set_deadline(self.bounds().body_timeout)
        elif state is not h11.IDLE and state is not h11.SEND_BODY:
            self._cancel_deadline()  # the request is in: the app takes its time

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()

    def _await_headers(self) -> None:
        self._reading_body = False
        self._set_deadline(self.bounds().header_timeout)

    def _set_deadline(self, seconds: float) -> None:
        self._cancel_deadline()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _cancel_deadline(self) -> None:
        if getattr(self, "_deadline", None) is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return
        answered = self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE)
        if not answered and (self._reading_body or self.conn.trailing_data[0]):
            self.transport.write(TIMED_OUT)  # a request was under way: say why it ends
        self.transport.close()
