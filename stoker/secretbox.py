"""Encryption at rest for secrets and hidden values (Fernet: AES-128-CBC + HMAC).

The key is ``$STOKER_SECRET_KEY`` (a Fernet key, as ``stoker secret-key``
would print) or, failing that, ``$STOKER_HOME/secret.key``, made 0600 on
first use.  Every process sharing a database must use the same key: set
``STOKER_SECRET_KEY`` on all of them when the database is shared.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache

from stoker.errors import StokerError
from stoker.home import stoker_home

#: what an encrypted value looks like in a JSON column: {MARK: token}
MARK = "$stoker-encrypted"
_MAKING_KEY = threading.Lock()


class SecretKeyError(StokerError):
    code = "secret-key"


@lru_cache(maxsize=4)
def _fernet(key: bytes):
    from cryptography.fernet import Fernet  # imported on first use: start-up stays fast

    try:
        return Fernet(key)
    except ValueError:
        raise SecretKeyError("STOKER_SECRET_KEY is not a valid key (32 url-safe base64-encoded bytes)") from None


def _key() -> bytes:
    if key := os.environ.get("STOKER_SECRET_KEY"):
        return key.strip().encode()
    path = stoker_home(create=True) / "secret.key"
    with _MAKING_KEY:
        if not path.exists():
            _make_key(path)
    return path.read_bytes().strip()


def _make_key(path) -> None:
    """Write a new key whole, then link it into place: of processes racing to make the
    key (API workers), one wins and the others read its key, never a half-written one."""
    from cryptography.fernet import Fernet

    draft = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(draft, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(Fernet.generate_key())
    try:
        os.link(draft, path)
    except FileExistsError:
        pass  # another process made it first: its key is the key
    finally:
        os.unlink(draft)


def encrypt(text: str) -> str:
    return _fernet(_key()).encrypt(text.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return _fernet(_key()).decrypt(token.encode("ascii")).decode("utf-8")
    except InvalidToken:
        raise SecretKeyError("cannot decrypt a stored secret: the key differs from the one it was "
                             "stored with (STOKER_SECRET_KEY or $STOKER_HOME/secret.key)") from None


def seal(value: object) -> dict:
    """A JSON value encrypted into a JSON-storable marker object."""
    import json

    return {MARK: encrypt(json.dumps(value))}


def unseal(value: object) -> object:
    """The inverse of ``seal``; anything not sealed comes back as it is."""
    import json

    if isinstance(value, dict) and len(value) == 1 and MARK in value:
        return json.loads(decrypt(value[MARK]))
    return value
