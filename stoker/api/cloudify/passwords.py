"""Users' passwords, hashed with scrypt (the standard library's memory-hard KDF), never kept in clear."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

#: scrypt's cost: 16 MiB of memory and ~50 ms per check, as OWASP suggests for interactive logins
N, R, P = 2 ** 14, 8, 1
#: the longest password accepted (scrypt hashes any length; this bounds the work a request causes)
MAX_PASSWORD = 1024


def hash_password(password: str) -> str:
    if not password or len(password) > MAX_PASSWORD:
        raise ValueError(f"a password is 1 to {MAX_PASSWORD} characters")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=N, r=R, p=P)
    return "$".join(["scrypt", str(N), str(R), str(P), _b64(salt), _b64(digest)])


def check_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt" or not password or len(password) > MAX_PASSWORD:
            return False
        expected = base64.b64decode(digest)
        found = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r),
                               p=int(p), dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(found, expected)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
