"""``Stoker::Local::File``: a file on the machine running Stoker."""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from typing import Any

from stoker.constraints import AllowedPattern
from stoker.resources import attributes, properties
from stoker.resources.exceptions import UpdateReplace
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus

PATH, CONTENT, MODE, RETAIN = "path", "content", "mode", "retain"
SIZE, SHA256 = "size", "sha256"
#: resource data: the directories the create made for the file, deepest first
MADE_DIRS = "made_dirs"


def write_atomically(path: str, content: str, mode: int) -> None:
    """Make ``path`` hold ``content`` with permissions ``mode``, all at once.

    The data goes to a temporary file beside it that is renamed over it, so
    readers see the old file or the new one, never half of one.  The
    temporary name is fixed (see ``temporary_path``) so that a write cut
    short by a crash leaves nothing that ``remove`` would not clean up.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = temporary_path(path)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8"))
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def missing_parents(path: str) -> list[str]:
    """The directories above ``path`` that do not exist yet, deepest first."""
    missing = []
    parent = os.path.dirname(path)
    while parent and not os.path.exists(parent):
        missing.append(parent)
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    return missing


def remove_empty(directories: list[str]) -> None:
    """Remove each directory (deepest first) that is empty; stop at the first that is not."""
    for directory in directories:
        try:
            os.rmdir(directory)
        except FileNotFoundError:
            continue
        except OSError:  # not empty (something else lives there now), or not ours to remove
            return


def temporary_path(path: str) -> str:
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.stoker-tmp")


def remove(path: str) -> None:
    """Remove ``path`` (and any temporary file of an interrupted write); missing is fine."""
    _remove(temporary_path(path))
    _remove(path)


def _remove(path: str) -> None:
    with suppress(FileNotFoundError):
        os.remove(path)


class LocalFile(Resource):
    """A file on the local machine, written from the template.

    Writes ``content`` to ``path`` (parent directories are created; a
    relative path is taken from the directory Stoker runs in) with
    permissions ``mode``.  Changing the content or mode rewrites the file in
    place; changing the path replaces it.  Deleting the resource removes the
    file unless ``retain`` is true, and then the directories its create made,
    those that are empty.
    """

    support_status = SupportStatus(version="1.0.0")
    acts_on_host = True
    run_in_thread = False

    properties_schema = {
        PATH: properties.Schema(
            properties.Schema.STRING,
            "Where the file goes; relative paths start at Stoker's working directory. "
            "Changing it to another file replaces the resource.",
            required=True, update_allowed=True,
        ),
        CONTENT: properties.Schema(
            properties.Schema.STRING, "What the file holds (written as UTF-8).",
            default="", update_allowed=True,
        ),
        MODE: properties.Schema(
            properties.Schema.STRING, 'Permissions of the file, in octal (e.g. "0600").',
            default="0644", update_allowed=True,
            constraints=[AllowedPattern("[0-7]{3,4}", "mode must be 3 or 4 octal digits, like 0644")],
        ),
        RETAIN: properties.Schema(
            properties.Schema.BOOLEAN, "Keep the file when the resource is deleted.",
            default=False, update_allowed=True,
        ),
    }

    attributes_schema = {
        PATH: attributes.Schema("The absolute path of the file.", type=attributes.Schema.STRING),
        SHA256: attributes.Schema("SHA-256 of the file's content (hex).",
                                  cache_mode=attributes.Schema.CACHE_NONE,
                                  type=attributes.Schema.STRING),
        SIZE: attributes.Schema("Size of the file in bytes.",
                                cache_mode=attributes.Schema.CACHE_NONE,
                                type=attributes.Schema.INTEGER),
    }

    def _path(self) -> str:
        """The file's absolute path: fixed at create, computed if create never got that far."""
        return self.resource_id or os.path.abspath(self.properties[PATH])

    def _write(self) -> None:
        write_atomically(self._path(), self.properties[CONTENT], int(self.properties[MODE], 8))

    def handle_create(self) -> None:
        self.resource_id_set(self._path())
        self.data_set(MADE_DIRS, missing_parents(self._path()))
        self._write()

    def plan_update(self, definition: Any, new_props: Any):
        """A path naming another file forces replacement (another spelling of it does not)."""
        plan = super().plan_update(definition, new_props)
        if plan is not None and PATH in plan.prop_diff and self.resource_id is not None \
                and os.path.abspath(plan.prop_diff[PATH]) != self.resource_id:
            plan.forcing.append(PATH)
        return plan

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        if PATH in prop_diff and os.path.abspath(prop_diff[PATH]) != self.resource_id:
            raise UpdateReplace(self.name)  # another file (not just another spelling)
        if CONTENT in prop_diff or MODE in prop_diff:
            self._write()

    def handle_delete(self) -> None:
        if not self.properties[RETAIN]:
            remove(self._path())
            remove_empty(self.data().get(MADE_DIRS) or [])

    def handle_check(self) -> None:
        if not os.path.isfile(self._path()):
            raise FileNotFoundError(f"{self._path()} does not exist")

    def get_live_state(self, resource_properties: dict) -> dict:
        """The file as it is now, for ``stack update --converge``: its mode, and its content when it
        is still what was written (None when it changed or is gone: the content is not read into
        the store)."""
        try:
            with open(self._path(), "rb") as f:
                same = f.read(len(str(resource_properties.get(CONTENT) or "").encode("utf-8")) + 1) == \
                    str(resource_properties.get(CONTENT) or "").encode("utf-8")
            mode = os.stat(self._path()).st_mode & 0o7777
        except (FileNotFoundError, NotADirectoryError):
            return {CONTENT: None}
        applied = str(resource_properties.get(MODE) or "0644")
        return {CONTENT: resource_properties.get(CONTENT) if same else None,
                MODE: applied if int(applied, 8) == mode else f"{mode:04o}"}

    def _resolve_attribute(self, name: str) -> Any:
        if name == PATH:
            return self._path()
        if name not in (SHA256, SIZE):
            return None
        try:
            with open(self._path(), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        return hashlib.sha256(data).hexdigest() if name == SHA256 else len(data)

    def _show_resource(self) -> dict:
        return {name: self._resolve_attribute(name) for name in (PATH, SHA256, SIZE)}


def resource_mapping() -> dict:
    return {"Stoker::Local::File": LocalFile}
