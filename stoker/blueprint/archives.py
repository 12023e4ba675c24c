"""A blueprint's files kept with it: packed at upload, unpacked safely, materialised for scripts.

An uploaded blueprint is stored as one tar.gz of its folder (the blueprint row's ``archive``), so
an edit of the folder after upload changes nothing that runs, and every worker reading the store
runs the same scripts.  Archives from clients (``cfy blueprints upload`` sends a tar.gz; a zip
works too) are untrusted: members with ``..``, absolute paths, links or device files are refused,
and the files' sizes and count are bounded as they are read, so a bomb stops at the limit.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.home import stoker_home
from stoker.limits import limit

CHUNK = 1 << 16


def _refuse(message: str) -> BlueprintError:
    return BlueprintError(message, code="invalid-archive")


def safe_name(name: str) -> str:
    """The member's relative path, or a refusal naming it."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise _refuse(f"archive member {name!r} has an absolute path")
    if ".." in path.parts:
        raise _refuse(f"archive member {name!r} points outside the archive (..)")
    return str(path)


class _Budget:
    """What is left of the size and file-count limits while unpacking."""

    def __init__(self) -> None:
        self.bytes, self.files = limit("max_blueprint_size"), limit("max_blueprint_files")

    def file(self, name: str, declared: int) -> None:
        self.files -= 1
        if self.files < 0:
            raise _refuse(f"the archive has more than {limit('max_blueprint_files')} files (max_blueprint_files)")
        self.take(name, declared)

    def take(self, name: str, size: int) -> None:
        self.bytes -= size
        if self.bytes < 0:
            raise _refuse(f"the archive's files are larger than {limit('max_blueprint_size')} bytes unpacked, "
                          f"at {name!r} (max_blueprint_size)")


def _copy(source: io.BufferedIOBase, target: Path, name: str, budget: _Budget) -> None:
    with open(target, "wb") as out:
        while chunk := source.read(CHUNK):
            budget.take(name, len(chunk))
            out.write(chunk)


def _tar_members(archive: tarfile.TarFile, budget: _Budget) -> Iterator[tuple[str, tarfile.TarInfo]]:
    for member in archive:  # one header at a time: a bomb is refused before its data is read
        name = safe_name(member.name)
        if member.isdir():
            yield name, member
        elif member.isfile():
            budget.file(name, member.size)
            yield name, member
        else:
            raise _refuse(f"archive member {member.name!r} is a link or a special file; only files and folders "
                          "are accepted")


def unpack(data: bytes, dest: Path) -> None:
    """Unpack a tar (any compression) or zip archive into the empty folder ``dest``."""
    budget = _Budget()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = safe_name(info.filename)
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    raise _refuse(f"archive member {info.filename!r} is a symbolic link")
                target = dest / name
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                budget.file(name, info.file_size)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source:
                    _copy(source, target, name, budget)
        return
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise _refuse(f"the blueprint archive is neither a tar nor a zip archive ({exc})") from None
    try:
        with archive:
            for name, member in _tar_members(archive, budget):
                target = dest / name
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None
                _copy(source, target, name, budget)
    except (tarfile.TarError, EOFError, OSError, zipfile.BadZipFile) as exc:
        raise _refuse(f"the blueprint archive is damaged ({exc})") from None


def root_of(unpacked: Path) -> Path:
    """The blueprint's folder in an unpacked archive: its one top folder, as ``cfy`` packs it, else the top."""
    entries = list(unpacked.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else unpacked


def pack(folder: Path) -> bytes:
    """The files under ``folder`` as a tar.gz (names relative to it), within the blueprint limits.

    Symbolic links are refused: what runs must be what was uploaded, not what a link finds later.
    """
    budget = _Budget()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for current, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                path = Path(current) / name
                relative = path.relative_to(folder).as_posix()
                if path.is_symlink():
                    raise _refuse(f"{path} is a symbolic link: a blueprint's folder is uploaded as files only")
                if path.is_file():
                    budget.file(relative, path.stat().st_size)
                elif not path.is_dir():
                    continue
                archive.add(path, arcname=relative, recursive=False)
    return buffer.getvalue()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def materialise(sha256: str, load: Callable[[], bytes]) -> Path:
    """The files of the archive with this digest as a folder under ``$STOKER_HOME/blueprint-files``:
    unpacked once per content (``load()`` reads the archive only then)."""
    base = stoker_home(create=True) / "blueprint-files"
    target = base / sha256
    if target.is_dir():
        return target
    data = load()
    if digest(data) != sha256:
        raise _refuse(f"the stored blueprint archive does not match its digest {sha256}")
    base.mkdir(mode=0o700, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=base, prefix=".unpacking-"))
    try:
        unpack(data, scratch)
        try:
            scratch.rename(target)
        except OSError:  # another process unpacked the same archive meanwhile
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target
