"""A whole server's state as one zip, and that zip restored into an empty server (``stoker backup``, and
Cloudify's manager snapshots over the API: made, kept and restored here, their rows in
``stoker/store/manager_snapshots.py``).

The zip holds ``metadata.json`` (format, Stoker's version, the schema revision, when, each table's columns
and row count) and ``tables/NAME.jsonl``: one JSON object per row, in primary-key order, binary columns in
base64 and times in ISO 8601.  Every table of the store's metadata is in it, except those that are the
server's own rather than its content (``LEFT_OUT``: the API's users, their groups' members and tokens, live
processes and traversals, the snapshots themselves, the audit log of what was done to this server); tenants and
user groups join the restoring server's (``MERGED``).  Secrets and hidden values stay sealed with the server's key
(``stoker.secretbox``): a server with another key cannot open them, so its restore is refused up front.

A restore reads the zip's members within bounds (count, names, unpacked size: ``max_backup_size``) and
writes every row in one transaction, tables in dependency order: a failure leaves nothing.  A backup of an
older schema restores the columns both revisions have (newer ones take their defaults); a newer one is
refused.  What the old server's processes held is released (``RELEASED``): none of them runs here.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import uuid
import zipfile
import zlib
from datetime import datetime, timezone
from importlib.metadata import version
from typing import IO, Any, Iterator

from sqlalchemy import JSON, DateTime, Integer, LargeBinary, Table, bindparam, delete, func, insert, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import StatementError

from stoker import secretbox
from stoker.limits import limit
from stoker.store.db import head_revision, register_tables
from stoker.store.locks import HANDED_BACK, new_engine_id
from stoker.store.manager_snapshots import CREATED, CREATING, FAILED, UPLOADED, ManagerSnapshots, SnapshotActionError
from stoker.store.models import ACTIVE_EXECUTION, metadata, utcnow

#: the format this module writes (and the only one it reads)
FORMAT = 1
#: tables about the server itself, not what it holds: its users, their groups' members and tokens (the identity
#: stays the server's), its live processes and their traversals, its snapshots (each holds a backup), its audit log
LEFT_OUT = frozenset({"api_token", "api_user", "api_account", "api_group_user", "engine_process",
                      "dispatch_traversal", "dispatch_node", "manager_snapshot", "audit_log"})
#: tables whose rows join those the server holds (its own stay), each with the column naming what a row belongs to
#: and the table keyed by it: the tenants, which its users already name, and the user groups with their tenant
#: roles (a group the server holds keeps its own; a restored one comes without members, as users stay out)
MERGED = {"api_tenant": ("name", "api_tenant"), "api_group": ("name", "api_group"),
          "api_group_tenant": ("group_name", "api_group")}
#: rows a backup may leave out on request (Cloudify's ``include_events`` / ``include_logs``)
EVENT_TYPES = {"events": "cloudify_event", "logs": "cloudify_log"}
#: members beyond metadata.json and one per table would be no backup of ours
MAX_MEMBERS = 1000
#: Cloudify's words for a restore over a server that holds something
NOT_EMPTY = ("Snapshot restoration on a non-empty manager is not permitted. Pass the --force flag to force the "
             "restore and delete existing data from the manager")
#: what reading a damaged, encrypted or oddly compressed member raises
UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError)
_MEMBER = re.compile(r"tables/([a-z][a-z0-9_]{0,62})\.jsonl")
_BATCH = 500


class BackupError(SnapshotActionError):
    """A backup that cannot be read or restored here; nothing was written."""

    code = "backup"


def tables() -> list[Table]:
    """The tables a backup holds, in dependency order (a row's references come before it)."""
    register_tables()
    return [table for table in metadata.sorted_tables if table.name not in LEFT_OUT]


# -- writing ----------------------------------------------------------------------------------------------


def dump(engine: Engine, out: IO[bytes], include_events: bool = True, include_logs: bool = True) -> dict:
    """Write the backup of ``engine``'s database to ``out`` (one consistent read); its metadata."""
    skipped = [kind for flag, kind in ((include_events, EVENT_TYPES["events"]), (include_logs, EVENT_TYPES["logs"]))
               if not flag]
    listed: dict[str, dict] = {}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, _consistent(engine) as conn:
        for table in tables():
            query = select(table).order_by(*table.primary_key.columns)
            if table.name == "execution_event" and skipped:
                query = query.where(table.c.type.not_in(skipped))
            count = 0
            with archive.open(f"tables/{table.name}.jsonl", "w", force_zip64=True) as member:
                for row in conn.execute(query).mappings():
                    member.write(json.dumps({key: _plain(value) for key, value in row.items()}).encode() + b"\n")
                    count += 1
            listed[table.name] = {"rows": count, "columns": [column.name for column in table.columns]}
        about = {"format": FORMAT, "stoker_version": version("stoker"), "schema_revision": head_revision(),
                 "created_at": datetime.now(timezone.utc).isoformat(), "include_events": include_events,
                 "include_logs": include_logs, "tables": listed}
        archive.writestr("metadata.json", json.dumps(about, indent=1))
    return about


def _consistent(engine: Engine) -> Any:
    """A connection whose reads all see one moment (SQLite's WAL read transaction does by itself)."""
    conn = engine.connect()
    if engine.dialect.name == "postgresql":
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
    conn.begin()
    return conn


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return value.isoformat()
    return value


# -- reading ----------------------------------------------------------------------------------------------


class Backup:
    """An opened backup whose members and metadata were checked (nothing of its rows read yet)."""

    def __init__(self, source: bytes | str):
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise BackupError(f"not a Stoker backup: not a readable zip archive ({exc})") from None
        members = self.archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise BackupError(f"not a Stoker backup: {len(members)} members (at most {MAX_MEMBERS})")
        bound = limit("max_backup_size")
        if sum(member.file_size for member in members) > bound:
            raise BackupError(f"the backup unpacks to more than {bound} bytes (max_backup_size)")
        names = set()
        for member in members:
            if member.filename != "metadata.json" and not _MEMBER.fullmatch(member.filename):
                raise BackupError(f"not a Stoker backup: unexpected member {member.filename[:200]!r}")
            names.add(member.filename)
        self.metadata = self._metadata(names)

    def _metadata(self, names: set[str]) -> dict:
        if "metadata.json" not in names:
            raise BackupError("not a Stoker backup: no metadata.json")
        try:
            about = json.loads(self.archive.read("metadata.json"))
        except ValueError as exc:
            raise BackupError(f"not a Stoker backup: metadata.json is not JSON ({exc})") from None
        except UNREADABLE as exc:
            raise BackupError(f"not a Stoker backup: metadata.json cannot be read ({exc})") from None
        if not isinstance(about, dict) or about.get("format") != FORMAT or not isinstance(about.get("tables"), dict):
            raise BackupError(f"not a Stoker backup: metadata.json is not of format {FORMAT}")
        revision = about.get("schema_revision")
        if not isinstance(revision, str) or not revision.isdigit():
            raise BackupError("not a Stoker backup: metadata.json names no schema revision")
        if revision > head_revision():
            raise BackupError(f"Cannot restore a newer server's backup here: its schema revision is {revision}, "
                              f"this server's {head_revision()} (upgrade Stoker first)")
        for name, listed in about["tables"].items():
            columns = listed.get("columns") if isinstance(listed, dict) else None
            if f"tables/{name}.jsonl" not in names or not isinstance(columns, list):
                raise BackupError(f"not a Stoker backup: table {str(name)[:100]!r} is listed without its rows")
        return about

    def rows(self, table: Table) -> Iterator[dict]:
        """The rows of ``table`` the backup holds, as its columns here take them (others left out)."""
        listed = self.metadata["tables"].get(table.name)
        if listed is None:
            return
        kept = [column for column in table.columns if column.name in listed["columns"]]
        for number, line in self._lines(table.name):
            row = _parsed(table.name, number, line)
            try:
                yield {column.name: _typed(column, row[column.name]) for column in kept}
            except (ValueError, TypeError, KeyError) as exc:
                raise BackupError(f"table {table.name}, row {number}: not a row of its columns ({exc})") from None

    def sealed_sample(self) -> str | None:
        """One value sealed with the key of the server that made the backup, if it holds any."""
        secrets = metadata.tables["secret"]
        for row in self.rows(secrets):
            return row["value"]
        mark = secretbox.MARK.encode()
        for name in self.metadata["tables"]:
            for number, line in self._lines(name):
                if mark in line and (found := _find_sealed(_parsed(name, number, line))) is not None:
                    return found
        return None

    def _lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        try:
            with self.archive.open(f"tables/{name}.jsonl") as member:
                yield from enumerate(member, 1)
        except UNREADABLE as exc:
            raise BackupError(f"table {name}: its member cannot be read ({exc})") from None


def _parsed(name: str, number: int, line: bytes) -> dict:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise BackupError(f"table {name}, row {number}: not JSON ({exc})") from None
    except RecursionError:
        raise BackupError(f"table {name}, row {number}: nested too deeply") from None
    if not isinstance(row, dict):
        raise BackupError(f"table {name}, row {number}: not an object of its columns")
    return row


def _typed(column: Any, value: Any) -> Any:
    if value is None:
        return None
    kind = getattr(column.type, "impl", column.type)
    if isinstance(kind, LargeBinary):
        return base64.b64decode(value, validate=True)
    if isinstance(kind, DateTime):
        return datetime.fromisoformat(value)
    return value


def _find_sealed(value: Any) -> str | None:
    """The first sealed token inside ``value`` (walked without recursion: a row may nest deeply)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if isinstance(item.get(secretbox.MARK), str):
                return item[secretbox.MARK]
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


# -- restoring --------------------------------------------------------------------------------------------


def restore(engine: Engine, backup: Backup, force: bool = False) -> dict[str, int]:
    """Write the backup's rows into ``engine``'s database in one transaction (refused, nothing written, on a
    server that holds anything unless ``force``, which deletes it first); the rows restored per table."""
    sample = backup.sealed_sample()
    if sample is not None:
        try:
            secretbox.decrypt(sample)
        except secretbox.SecretKeyError:
            raise BackupError("The backup's secrets were sealed with another secret key than this server's: start "
                              "the server with the STOKER_SECRET_KEY of the server that made it") from None
    restored: dict[str, int] = {}
    try:
        with engine.execution_options(stoker_write=True).connect() as conn, conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('stoker-restore'))"))
            _make_room(conn, force)
            held = _held(conn)
            for table in tables():
                rows = map(_released, itertools.repeat(table.name), backup.rows(table))
                if table.name in MERGED:
                    rows = (row for row in rows if row[MERGED[table.name][0]] not in held[table.name])
                restored[table.name] = _insert(conn, table, rows)
            if conn.dialect.name == "postgresql":
                _reset_sequences(conn)
    except StatementError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise BackupError(f"the backup could not be restored, nothing was: {cause}") from None
    return restored


#: who held what in the server that made the backup: no process of this one.  Its running executions read as
#: interrupted here (to resume), its stacks' running actions as handed back (resumed as after a server's stop)
RELEASED = {"execution": {"owner": None, "heartbeat_at": None}, "stack": {"lock_owner": HANDED_BACK}}


def _released(table: str, row: dict) -> dict:
    held = RELEASED.get(table, {})
    return {**row, **{column: value for column, value in held.items() if row.get(column) is not None}}


def _make_room(conn: Connection, force: bool) -> None:
    """Refuse a server that holds anything (``force``: delete it, unless something runs)."""
    held = [table for table in tables() if table.name not in MERGED
            and conn.execute(select(table).limit(1)).first() is not None]
    if not held:
        return
    if not force:
        raise BackupError(NOT_EMPTY)
    execution = metadata.tables["execution"]
    if conn.execute(select(execution.c.id).where(execution.c.status.in_(ACTIVE_EXECUTION)).limit(1)).first():
        raise BackupError("Cannot restore a backup while executions run on this server: wait for them or cancel them")
    for table in reversed(tables()):
        if table.name not in MERGED:
            conn.execute(delete(table))


def _held(conn: Connection) -> dict[str, set]:
    """For each merged table, what the server holds before the restore (the rows naming it stay out)."""
    keys = {name: next(iter(metadata.tables[owner].primary_key.columns)) for name, (_, owner) in MERGED.items()}
    return {name: set(conn.execute(select(key)).scalars()) for name, key in keys.items()}


def _insert(conn: Connection, table: Table, rows: Iterator[dict]) -> int:
    """Insert ``rows`` in batches; a table referring to itself (a stack's parent) gets referred rows first."""
    selfish = [key.parent.name for key in table.foreign_keys if key.column.table is table]
    if selfish:
        rows = _referred_first(list(rows), selfish[0], next(iter(table.primary_key.columns)).name)
    statement = None
    batch: list[dict] = []
    count = 0
    for row in rows:
        if statement is None:
            # None in a JSON column is SQL NULL, as a column left out is, not JSON's null
            statement = insert(table).values({name: bindparam(name, type_=JSON(none_as_null=True)
                                                              if isinstance(table.c[name].type, JSON)
                                                              else table.c[name].type) for name in row})
        batch.append(row)
        if len(batch) == _BATCH:
            conn.execute(statement, batch)
            count, batch = count + len(batch), []
    if batch:
        conn.execute(statement, batch)
        count += len(batch)
    return count


def _referred_first(rows: list[dict], parent: str, key: str) -> list[dict]:
    placed: set[Any] = set()
    ordered: list[dict] = []
    while rows:
        ready = [row for row in rows if row[parent] is None or row[parent] in placed]
        if not ready:
            raise BackupError("the backup's rows refer to rows it does not hold")
        ordered += ready
        placed.update(row[key] for row in ready)
        waiting = {id(row) for row in ready}
        rows = [row for row in rows if id(row) not in waiting]
    return ordered


def _reset_sequences(conn: Connection) -> None:
    """PostgreSQL's sequences of the integer keys continue after the rows restored with their keys."""
    for table in tables():
        keys = list(table.primary_key.columns)
        if len(keys) != 1 or not isinstance(keys[0].type, Integer) or keys[0].foreign_keys:
            continue
        column = keys[0]
        top = conn.execute(select(func.max(column))).scalar()
        if top is not None:
            conn.execute(text("SELECT setval(pg_get_serial_sequence(:table, :column), :top)"),
                         {"table": table.name, "column": column.name, "top": top})


# -- Cloudify's manager snapshots: backups kept in the database -------------------------------------------


def make_snapshot(snapshots: ManagerSnapshots, snapshot_id: str, user: str, include_events: bool = True,
                  include_logs: bool = True) -> dict:
    """Make the snapshot now; its row, ``created`` or ``failed`` (with why, as Cloudify's shows it)."""
    snapshots.add(snapshot_id, user, CREATING, execution_id=str(uuid.uuid4()))
    out = io.BytesIO()
    try:
        dump(snapshots.engine, out, include_events, include_logs)
    except Exception as exc:  # whatever stopped it is the snapshot's error, not the request's
        snapshots.set(snapshot_id, status=FAILED, error=f"{type(exc).__name__}: {exc}"[:10_000])
    else:
        snapshots.set(snapshot_id, status=CREATED, archive=out.getvalue())
    return snapshots.get(snapshot_id)


def keep_upload(snapshots: ManagerSnapshots, snapshot_id: str, user: str, data: bytes) -> dict:
    """Keep an uploaded backup, refused (nothing stored) unless it reads as one."""
    if len(data) > limit("max_backup_size"):
        raise BackupError(f"the backup is larger than {limit('max_backup_size')} bytes (max_backup_size)")
    Backup(data)
    snapshots.add(snapshot_id, user, UPLOADED, archive=data)
    return snapshots.get(snapshot_id)


def restore_snapshot(snapshots: ManagerSnapshots, snapshot_id: str, force: bool = False) -> dict:
    """Restore the server from the snapshot (refused, nothing written, as ``restore`` says, or while another
    restore runs); its row, with its ``restore_execution_id``."""
    if snapshots.get(snapshot_id)["status"] == FAILED:
        raise BackupError("Failed snapshot cannot be restored")
    snapshots.claim(snapshot_id, new_engine_id())
    try:
        restore(snapshots.engine, Backup(snapshots.archive(snapshot_id)), force)
    finally:
        snapshots.set(snapshot_id, restoring=None)
    snapshots.set(snapshot_id, restore_execution_id=str(uuid.uuid4()), restored_at=utcnow())
    return snapshots.get(snapshot_id)
