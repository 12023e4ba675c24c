"""SSH key material for the compute API's key pairs: a new key pair when the caller gives no
public key, and the fingerprint Nova shows (MD5 of the key's blob, colon-separated hex)."""

from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519


class BadPublicKey(ValueError):
    """The public key given is not an OpenSSH public key."""


def generate(comment: str) -> tuple[str, str]:
    """(public key in OpenSSH form, private key in OpenSSH PEM) of a fresh Ed25519 key."""
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return f"{public.decode()} {comment}", private


def fingerprint(public_key: str) -> str:
    """The MD5 fingerprint of an OpenSSH public key; BadPublicKey when it does not parse."""
    parts = public_key.strip().split()
    if len(parts) < 2:
        raise BadPublicKey("expected '<type> <base64 key> [comment]'")
    try:
        serialization.load_ssh_public_key(" ".join(parts[:2]).encode())
        blob = base64.b64decode(parts[1], validate=True)
    except (ValueError, binascii.Error, UnicodeEncodeError, UnsupportedAlgorithm) as exc:
        raise BadPublicKey(str(exc) or "not an OpenSSH public key") from None
    digest = hashlib.md5(blob, usedforsecurity=False).hexdigest()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))
