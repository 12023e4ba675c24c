"""Archives made in memory for the tests that hand servers and commands hostile ones."""

from __future__ import annotations

import io
import zipfile


def zipped(members: dict[str, bytes | str]) -> bytes:
    """A zip holding ``members`` (name -> content) as named, ``..`` and all, deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()
