"""A blueprint's icon (``cfy blueprints set-icon``): a PNG image, which Cloudify's console shows beside it.
Checked before it is kept, as a file the server hands back to browsers must be what it says."""

from __future__ import annotations

from stoker.errors import StokerError

#: a PNG file's first bytes, then its first chunk's length and type: the image header
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HEADER_CHUNK = b"\x00\x00\x00\x0dIHDR"


class IconRefused(StokerError):
    code = "invalid-icon"
    cloudify_code = "bad_parameters_error"


def checked(icon: bytes) -> bytes:
    """``icon``, refused unless it is a PNG image."""
    if not icon.startswith(PNG_SIGNATURE + HEADER_CHUNK):
        raise IconRefused("a blueprint's icon is a PNG image: this file is not one (it does not start with PNG's "
                          "signature and image header)")
    return icon
