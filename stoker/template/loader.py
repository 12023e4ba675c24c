"""Turn template and environment text into plain data, safely and fast.

* YAML means what PyYAML (YAML 1.1, as Heat uses it) makes of it.  To be fast,
  rapidyaml parses first (``fastyaml``, about 7x quicker on big templates) and
  PyYAML's C loader takes over whenever that result might differ from PyYAML's
  or the text is invalid.  JSON is YAML, but a text that starts with ``{`` goes
  through ``json`` first, as Heat's client does.
* Dates stay strings: ``heat_template_version: 2016-10-14`` is a version
  name, not a ``datetime.date``.
* A size limit (Heat's ``max_template_size``, 512 KiB) and a guard against
  YAML alias bombs (a few anchors expanding to millions of nodes).
* Line numbers are not kept while loading (that would slow every load for the
  sake of the rare error); ``Source.locate(path)`` finds them afterwards.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from stoker.errors import Problem, ValidationFailed
from stoker.limits import DEFAULTS, limit

#: the default of Heat's max_template_size (``stoker.limits`` reads the configured one)
MAX_TEMPLATE_SIZE = DEFAULTS["max_template_size"]
#: an aliased document may expand to at most this many nodes (a 512 KiB text without
#: aliases holds about as many): the expanded data is stored, and read by every show
MAX_EXPANDED_NODES = 250_000

@cache
def _yaml_loaders() -> tuple[Any, Any]:
    """PyYAML's safe C loader, and ours on it (timestamps stay the strings they were
    written as).  PyYAML and rapidyaml are imported with the first YAML text: a
    command given JSON, or none (``stack delete``), never pays for them."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    Loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
    return base, Loader


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector while building big, long-lived trees.

    Loading and parsing a template allocates hundreds of thousands of
    objects that all survive; each allocation burst triggers collections
    that rescan them, which made validation time grow faster than the
    template.  Nothing built here is cyclic garbage, so pausing is safe.

    On the way out everything is moved to the oldest generation (freeze and
    unfreeze: two list splices).  Otherwise the first young collection after
    the pause would scan every object built during it -- 100 ms at 10,000
    resources -- only to promote them, and then do it again a generation up.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] >= SMALL_BUILD:
            with _FROZEN_LOCK:
                _freeze()
                if not _frozen and not _keep and not _due:
                    gc.unfreeze()
        gc.enable()


#: young objects fewer than this are left to the young collections (scanning them costs less than
#: moving them past every generation, and the startup a server froze then stays frozen)
SMALL_BUILD = 5_000
#: how many ``frozen_gc`` blocks are running (threads may run actions side by side)
_frozen = 0
#: how many ``kept_frozen`` blocks are running: while any does, what is frozen stays frozen
_keep = 0
_FROZEN_LOCK = threading.Lock()
#: objects moved past the collector's young generations (frozen, or straight to the oldest) since
#: the last full collection, and about how many objects that collection kept (before the first:
#: how many the first freeze, or a server's startup, froze)
_moved = 0
_kept = 0
#: the fewest moved objects that call for a full collection (a quarter of those kept, if more)
FULL_COLLECTION_AFTER = 100_000
#: a full collection is due: the next action runs it first (what it finds stays frozen till then)
_due = False


def _freeze() -> None:
    """``gc.freeze``, counting the young objects it moved (the collector's count of the youngest
    generation; under ``_FROZEN_LOCK``).  The process's first freeze (a command's action, most of
    what it holds alive) also counts what it froze: the floor until a full collection says how
    many objects it kept."""
    global _moved, _kept
    _moved += gc.get_count()[0]
    gc.freeze()
    if not _kept:
        _kept = gc.get_freeze_count()


def _collect_if_grown() -> None:
    """After an action: a full collection is due once enough objects went by the young generations
    (under ``_FROZEN_LOCK``).

    Moved objects are not counted by the collector's own rule for full collections (a quarter
    more long-lived objects than the last one kept), so the cyclic garbage among them stayed:
    a server whose actions overlap without pause grew ~40 KB per create.  The collection runs
    when the next action begins (``_collect_when_due``), not now: a process that ends after its
    action (every CLI command, a detached engine process) would spend a fifth of a big update's
    CPU on it just before exiting.  Nor is it due when what went by is gone already: an action's
    stacks are freed by reference counting (``Stack.drop``), so what stays frozen (the frozen
    objects still alive) did not grow by as much.
    """
    global _due, _moved
    enough = max(FULL_COLLECTION_AFTER, _kept // 4)
    if _moved > enough:
        if gc.get_freeze_count() - _kept > enough:
            _due = True
            return
        _moved = 0
    if not _frozen and not _keep:
        gc.unfreeze()


def _collect_when_due() -> None:
    """The full collection the last action's end asked for (under ``_FROZEN_LOCK``, before this
    action freezes what exists); actions still running, and a serving process's startup
    (``kept_frozen``), are frozen again after it."""
    global _moved, _kept, _due
    if not _due:
        return
    held = gc.get_freeze_count()
    gc.unfreeze()
    _kept = max(0, held - gc.collect())
    _moved, _due = 0, False
    if _frozen or _keep:
        gc.freeze()


@contextmanager
def kept_frozen():
    """While a long-running process serves (the API server), what it holds once started -- modules,
    classes, its app: most of its objects -- is frozen and stays frozen between actions, so the
    collector's full collections scan only what came later (a server's full collection over
    ~170,000 objects took ~60 ms of CPU with every thread stopped).  Small actions build and drop
    their objects through the young generations, never freezing; what a big build froze stays
    frozen until enough went by for a full collection, which freezes again what it kept."""
    global _keep, _kept
    with _FROZEN_LOCK:
        _keep += 1
        gc.collect()
        gc.freeze()
        _kept = gc.get_freeze_count()
    try:
        yield
    finally:
        with _FROZEN_LOCK:
            _keep -= 1
            if not _frozen and not _keep:
                gc.unfreeze()


@contextmanager
def frozen_gc():
    """While an action runs, the collector never rescans what existed when it began.

    The stack's definition and resources (millions of objects at 10,000
    resources) all live until the action ends; rescanning them made the
    collector a third of a big action's time.  What the action builds and
    drops is still collected as usual.
    """
    global _frozen
    with _FROZEN_LOCK:
        _collect_when_due()
        if not _keep or gc.get_count()[0] >= SMALL_BUILD:  # (kept: a big build is frozen already)
            _freeze()
        _frozen += 1
    try:
        yield
    finally:
        with _FROZEN_LOCK:
            _frozen -= 1
            _collect_if_grown()


@dataclass
class Source:
    """The text a piece of data came from, able to point at a path inside it."""

    text: str
    name: str = "<template>"
    _index: dict = field(default_factory=dict, repr=False)

    @cached_property
    def _root(self) -> Any:
        import yaml

        try:
            return yaml.compose(self.text, Loader=_yaml_loaders()[0])
        except yaml.YAMLError:
            return None

    def locate(self, path: tuple) -> tuple[int, int] | None:
        """(line, column), 1-based, of the deepest node of ``path`` that exists."""
        node = self._root
        if node is None:
            return None
        import yaml  # imported by _root

        where = (node.start_mark.line + 1, node.start_mark.column + 1)
        for step in path:
            if isinstance(node, yaml.MappingNode):
                # the last of duplicate keys is the one YAML keeps
                found = [(k, v) for k, v in node.value if k.value == str(step)]
                if not found:
                    return where
                key, node = found[-1]
                where = (key.start_mark.line + 1, key.start_mark.column + 1)
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                if not 0 <= step < len(node.value):
                    return where
                node = node.value[step]
                where = (node.start_mark.line + 1, node.start_mark.column + 1)
            else:
                return where
        return where

    def place(self, problem: Problem) -> Problem:
        """Fill in the problem's file, line and column from this source."""
        if problem.file not in (None, self.name):
            return problem  # about another file: this text cannot place it
        problem.file = self.name
        if problem.line is None:
            found = self.locate(problem.path)
            if found:
                problem.line, problem.column = found
        return problem


def _load_error(name: str, message: str, line: int | None = None, column: int | None = None):
    return ValidationFailed([Problem((), "invalid-syntax", message, name, line, column)])


class UnreadableFile(ValidationFailed):
    """A file that is missing, not a regular file, or not readable."""


def read_file(path: os.PathLike | str, max_size: int | None = None) -> bytes:
    """A regular file's bytes, at most ``max_template_size`` of them.

    Devices, FIFOs and directories are refused before anything is read
    (``/dev/zero`` would be read until memory runs out); a bigger file is
    refused after reading one byte past the limit, never whole.
    """
    most = max_size or limit("max_template_size")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not hang the open
    except OSError as exc:
        raise UnreadableFile([Problem((), "unreadable-file", f"cannot read {path}: {exc.strerror}")]) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnreadableFile([Problem((), "unreadable-file", f"cannot read {path}: not a regular file")])
    with open(fd, "rb") as handle:
        if info.st_size > most:
            raise _size_error(str(path), info.st_size, most)
        raw = handle.read(most + 1)
    if len(raw) > most:  # it grew while we looked
        raise _size_error(str(path), f"over {most}", most)
    return raw


def load(text: str | bytes, name: str = "<template>", max_size: int | None = None) -> Any:
    """Parse YAML or JSON text into plain data; raise ``ValidationFailed`` on bad input."""
    max_size = max_size or limit("max_template_size")
    if isinstance(text, bytes):
        if len(text) > max_size:
            raise _size_error(name, len(text), max_size)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _load_error(name, f"not UTF-8 text: {exc}") from None
    elif len(text) > max_size:
        size = len(text.encode("utf-8"))
        if size > max_size:
            raise _size_error(name, size, max_size)
    data = _parse(text, name)
    if "*" in text:  # aliases: shared nodes, measured once each (a plain walk would expand them)
        _check_expansion(data, name)
    else:
        check_nesting(data, name)
    return data


def check_nesting(data: Any, name: str = "<template>") -> None:
    """Refuse data nested deeper than ``max_nesting`` (everything downstream recurses into it)."""
    most = limit("max_nesting")
    if nested_deeper_than(data, most):
        raise _nesting_error(name, most)


def nested_deeper_than(data: Any, most: int) -> bool:
    """Has ``data`` more than ``most`` levels of maps and lists?  (Without recursing into it.)"""
    level = [data] if isinstance(data, (dict, list)) else []
    for _ in range(most):  # one level of containers at a time; scalars are never kept
        if not level:
            return False
        deeper = []
        for item in level:
            for child in (item.values() if type(item) is dict or isinstance(item, dict) else item):
                if type(child) in _CONTAINERS or isinstance(child, (dict, list)):
                    deeper.append(child)
        level = deeper
    return bool(level)


_CONTAINERS = frozenset((dict, list))


def _nesting_error(name: str, most: int, line: int | None = None, column: int | None = None) -> ValidationFailed:
    return _load_error(name, f"document is nested more than {most} levels deep (max_nesting)", line, column)


def _parse(text: str, name: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            with paused_gc():
                return json.loads(text)
        except ValueError:
            pass  # not JSON after all: YAML flow style, or a YAML error to report below
        except RecursionError:
            raise _nesting_error(name, limit("max_nesting")) from None
    from stoker.template import fastyaml

    try:
        with paused_gc():
            data = fastyaml.load(text)
    except RecursionError:
        raise _nesting_error(name, limit("max_nesting")) from None
    if data is not fastyaml.DECLINED:
        return data
    import yaml

    try:
        with paused_gc():
            data = _pyyaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        if "maximum nesting depth" in (exc.problem or ""):  # PyYAML >= 6.0.4 has a depth limit of its own
            raise _nesting_error(name, limit("max_nesting"), line, column) from None
        message = f"invalid YAML: {exc.problem or exc}"
        if exc.context:
            message += f" ({exc.context})"
        raise _load_error(name, message, line, column) from None
    except yaml.YAMLError as exc:
        raise _load_error(name, f"invalid YAML: {exc}") from None
    except (ValueError, UnicodeError) as exc:  # e.g. "!!int abc", "0x_", a lone surrogate
        raise _load_error(name, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise _nesting_error(name, limit("max_nesting")) from None
    return data


def _pyyaml(text: str) -> Any:
    """The reference meaning of a YAML text; raises ``yaml.YAMLError``."""
    import yaml

    return yaml.load(text, Loader=_yaml_loaders()[1])


def _size_error(name: str, size: int | str, most: int) -> ValidationFailed:
    return _load_error(name, f"template is {size} bytes, over the limit of {most} bytes (max_template_size)")


def _check_expansion(data: Any, name: str) -> None:
    """Refuse documents whose aliases expand into too many nodes.

    A safe loader shares aliased objects instead of copying them, so memory is
    fine, but anything walking the data would visit every expansion.  Count the
    expanded size with memoisation on object identity: linear in the real size.
    """
    measured: dict[int, tuple[int, int]] = {}  # id -> (expanded nodes, levels of containers)
    most = limit("max_nesting")

    def size(value: Any, depth: int = 1) -> tuple[int, int]:
        """(nodes, height) of ``value``, a container at ``depth``: both as if expanded."""
        if depth > most:  # also where a recursive alias (a node inside itself) stops
            raise _nesting_error(name, most)
        key = id(value)
        if key in measured:
            nodes, height = measured[key]
            if depth + height - 1 > most:
                raise _nesting_error(name, most)
            return nodes, height
        items = value.values() if isinstance(value, dict) else value
        total, height = 1, 1
        for item in items:
            if isinstance(item, (dict, list)):
                nodes, below = size(item, depth + 1)
                total, height = total + nodes, max(height, below + 1)
            else:
                total += 1
            if total > MAX_EXPANDED_NODES:
                raise _load_error(
                    name,
                    "YAML aliases expand to more than "
                    f"{MAX_EXPANDED_NODES} nodes; refusing a possible alias bomb",
                )
        measured[key] = (total, height)
        return total, height

    if isinstance(data, (dict, list)):
        size(data)
