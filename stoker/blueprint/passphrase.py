"""The passphrase cipher of ``cfy secrets export -p`` / ``import -p``, so a file moves between Cloudify and Stoker.

Cloudify derives 64 bytes from the passphrase (PBKDF2-HMAC-SHA256, 100,000 rounds, its fixed salt ``salt_``)
and writes each value as a Fernet token whose HMAC-SHA256 key is the first half and whose AES key is the second:
Fernet's layout (version 0x80, timestamp, IV, AES-CBC with PKCS7 padding, HMAC of all that, url-safe base64)
with AES-256 where Fernet has AES-128.  The token is built here from the primitives: Fernet's class takes
only 32-byte keys.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import struct
import time
from functools import lru_cache

from stoker.errors import StokerError

_SALT, _ROUNDS, _VERSION = b"salt_", 100_000, b"\x80"


class WrongPassphrase(StokerError):
    """A value that this passphrase did not encrypt (or that is no token at all)."""

    code = "wrong-passphrase"


@lru_cache(maxsize=8)
def key_of(passphrase: str) -> tuple[bytes, bytes]:
    """(signing key, encryption key) of ``passphrase``, as Cloudify derives them."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    derived = PBKDF2HMAC(algorithm=hashes.SHA256(), length=64, salt=_SALT, iterations=_ROUNDS).derive(
        passphrase.encode())
    return derived[:32], derived[32:]


def encrypt(text: str, passphrase: str) -> str:
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    signing, encryption = key_of(passphrase)
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(text.encode()) + padder.finalize()
    encryptor = Cipher(algorithms.AES(encryption), modes.CBC(iv)).encryptor()
    body = _VERSION + struct.pack(">Q", int(time.time())) + iv + encryptor.update(padded) + encryptor.finalize()
    return base64.urlsafe_b64encode(body + hmac.digest(signing, body, "sha256")).decode()


def decrypt(token: str, passphrase: str) -> str:
    """The text ``token`` holds; ``WrongPassphrase`` when its HMAC does not match (another passphrase, an
    edited file) or it is no token."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    signing, encryption = key_of(passphrase)
    try:
        data = base64.urlsafe_b64decode(token.encode() if isinstance(token, str) else b"")
    except (binascii.Error, ValueError):
        data = b""
    body, mac = data[:-32], data[-32:]
    if len(body) < 41 or (len(body) - 25) % 16 or body[:1] != _VERSION \
            or not hmac.compare_digest(mac, hmac.digest(signing, body, "sha256")):
        raise WrongPassphrase("the value was not encrypted with this passphrase")
    decryptor = Cipher(algorithms.AES(encryption), modes.CBC(body[9:25])).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        plain = unpadder.update(decryptor.update(body[25:]) + decryptor.finalize()) + unpadder.finalize()
        return plain.decode()
    except (ValueError, UnicodeDecodeError):
        raise WrongPassphrase("the value was not encrypted with this passphrase") from None
