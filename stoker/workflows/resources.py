"""Files of a blueprint's folder, never anything outside it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


class ResourceRefused(ValueError):
    """The path names nothing inside the blueprint's folder."""


def resource_path(root: Path, relative: str, folder_too: bool = False) -> Path:
    """``relative`` inside ``root``, with symbolic links followed; refused when it leaves ``root``
    (a file, or with ``folder_too`` a folder as well)."""
    if not isinstance(relative, str) or not relative or "\0" in relative:
        raise ResourceRefused(f"not a resource path: {relative!r}")
    if os.path.isabs(relative):
        raise ResourceRefused(f"resource {relative} is not a path inside the blueprint's folder")
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise ResourceRefused(f"resource {relative} is outside the blueprint's folder")
    if not (target.is_file() or (folder_too and target.is_dir())):
        raise ResourceRefused(f"resource {relative} not found in the blueprint's folder")
    return target


def download(root: Path, relative: str, target: str | None = None) -> str:
    """Copy a blueprint resource to ``target`` (default: a new temporary folder); its path."""
    source = resource_path(root, relative)
    if target:
        destination = Path(target)
    else:
        destination = Path(tempfile.mkdtemp(prefix="stoker-resource-")) / source.name
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)
    return str(destination)
