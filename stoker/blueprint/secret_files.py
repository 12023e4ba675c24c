"""The file of ``cfy secrets export`` / ``import`` (and ``stoker secret export`` / ``import``): a JSON list, one
entry per secret, in Cloudify's fields, so a file moves between a Cloudify manager, a ``stoker api`` server and a
local Stoker.

An entry: ``key``, ``value``, ``visibility``, ``tenant_name``, ``is_hidden_value``, ``encrypted`` (the value
encrypted with the export's passphrase, ``passphrase.py``), ``provider`` (the name of the secrets provider the value
is read from) and ``provider_options`` (its options, a map, which Cloudify's import reads so; Cloudify's own export
writes them encrypted with its manager's key, which no other server can open), and for a typed secret ``schema``
(Cloudify's export leaves it out, its import reads it; the value is the JSON text).  Without a passphrase the values
are in clear, as Cloudify writes them.  An import checks every entry first, in Cloudify's words per entry (its
position in the list), and stores nothing when one is wrong: a wrong passphrase, a missing field, a tenant the
caller may not write, a provider the tenant does not see, a value its schema refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import json

from stoker import secretbox
from stoker.blueprint import passphrase as cipher
from stoker.blueprint import secret_schemas
from stoker.blueprint.secret_providers import checked_options
from stoker.blueprint.state import tenant_of
from stoker.errors import StokerError
from stoker.store.models import utcnow
from stoker.store.plugin_packages import VISIBILITIES

#: the fields every entry needs, in the order Cloudify names the missing ones (one read from a provider may
#: have no value, as on Cloudify)
NEEDED = ("key", "is_hidden_value", "visibility", "tenant_name", "value", "encrypted")
VALUE_FIELDS = ("value", "encrypted")
#: the longest key a secret may have (the column's)
LONGEST_KEY = 255
#: the shortest passphrase ``cfy`` takes (checked here too: the API may be called without ``cfy``)
SHORTEST_PASSPHRASE = 8


class ImportRefused(StokerError):
    """At least one entry is wrong; ``errors``: its position (from 0) -> field -> why, as Cloudify reports them."""

    code = "secrets-import"

    def __init__(self, errors: dict[int, dict[str, Any]]):
        self.errors = errors
        told = "; ".join(f"secret {place + 1}: " + ", ".join(f"{field}: {why}" for field, why in wrong.items())
                         for place, wrong in sorted(errors.items())[:20])
        super().__init__(f"No secret was imported: {told}")


def checked_passphrase(given: Any) -> str | None:
    if given is None:
        return None
    if not isinstance(given, str) or len(given) < SHORTEST_PASSPHRASE:
        raise StokerError(f"Passphrase must contain at least {SHORTEST_PASSPHRASE} characters.")
    return given


def exported(rows: list[dict], passphrase: str | None) -> list[dict]:
    """The entries of ``rows`` (stored secrets: their values encrypted at rest), values in clear or, with
    ``passphrase``, encrypted with it."""
    passphrase = checked_passphrase(passphrase)
    entries = []
    for row in rows:
        value = secretbox.decrypt(row["value"])
        options = json.loads(secretbox.decrypt(row["provider_options"])) if row["provider_options"] else None
        entries.append({"key": row["key"], "value": cipher.encrypt(value, passphrase) if passphrase else value,
                        "visibility": row["visibility"], "tenant_name": tenant_of(row["project_id"]),
                        "is_hidden_value": row["hidden"], "encrypted": bool(passphrase),
                        "provider": row["provider_name"], "provider_options": options,
                        **({} if row["schema"] is None else {"schema": row["schema"]})})
    return entries


class NotWritable(StokerError):
    """A tenant an import may not write: unknown, or the caller may not create secrets there."""


@dataclass
class Importer:
    """How entries become rows: ``project_of(tenant)`` the project to write (or why it may not be written:
    ``NotWritable``), ``global_refused`` why the caller may not make a global secret (None: it may),
    ``owner_refused(creator)`` why an entry's ``creator`` may not be kept (None: it is), ``created_by`` the
    creator of an entry naming none."""

    project_of: Callable[[str], str]
    global_refused: str | None
    owner_refused: Callable[[str], str | None]
    created_by: str

    def rows(self, entries: Any, provider_missing: Callable[[str, str], str | None], passphrase: Any = None,
             tenant_map: Any = None) -> list[dict]:
        """The rows to store, each value encrypted at rest; ``ImportRefused`` naming every wrong entry.
        ``provider_missing(project, name)``: why a project may not read from that secrets provider (None: it
        may)."""
        if not isinstance(entries, list):
            raise StokerError(f"secrets_list parameter is expected to be of type list but is of type "
                              f"{type(entries).__name__}")
        if tenant_map is not None and not (isinstance(tenant_map, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in tenant_map.items())):
            raise StokerError("tenant_map is a map of tenant names: {\"FROM\": \"TO\", ...}")
        passphrase = checked_passphrase(passphrase)
        rows, errors = [], {}
        for place, entry in enumerate(entries):
            if not isinstance(entry, dict):
                errors[place] = {"entry": "Not a map of the secret's fields"}
                continue
            wrong: dict[str, Any] = {}
            row = self._row(entry, provider_missing, passphrase, tenant_map or {}, wrong)
            if wrong:
                errors[place] = wrong
            else:
                rows.append(row)
        if errors:
            raise ImportRefused(errors)
        return rows

    def _row(self, entry: dict, provider_missing: Callable[[str, str], str | None], passphrase: str | None,
             tenant_map: dict, wrong: dict) -> dict:
        """The row of ``entry``, or (anything wrong) each problem put in ``wrong``, by field."""
        provider = entry.get("provider") or None
        missing = [f for f in NEEDED if (entry.get(f) is None or (isinstance(entry[f], str) and not entry[f].strip()))
                   and not (provider and f in VALUE_FIELDS)]
        key = entry.get("key")
        if key is not None and not (isinstance(key, str) and 0 < len(key) <= LONGEST_KEY):
            wrong["key"] = f"Not a key (a text of 1 to {LONGEST_KEY} characters)"
        hidden, encrypted = (_boolean(entry, name, wrong) for name in ("is_hidden_value", "encrypted"))
        shown_to = entry.get("visibility")
        if shown_to is not None and shown_to not in VISIBILITIES:
            wrong["visibility"] = "Not a valid visibility"
        elif shown_to == "global" and self.global_refused:
            wrong["visibility"] = self.global_refused
        project = None
        if entry.get("tenant_name") is not None:
            tenant = tenant_map.get(entry["tenant_name"], entry["tenant_name"])
            try:
                project = self.project_of(str(tenant))
            except NotWritable as refused:
                wrong["tenant_name"] = str(refused)
        provided = _provided(project, provider, entry.get("provider_options"), provider_missing, wrong)
        creator = entry.get("creator")
        if creator is not None and (refused := self.owner_refused(str(creator))):
            wrong["creator"] = refused
        value = entry.get("value")
        if value is not None and not isinstance(value, str):
            wrong["value"] = "Not a string"
        elif encrypted and value:
            value = _opened(value, passphrase, wrong)
        schema = _typed(key, entry.get("schema"), value, hidden, wrong)
        if missing:
            wrong["missing secret fields"] = missing
        if wrong:
            return {}
        now = utcnow()
        return {"project_id": project, "key": key, "value": secretbox.encrypt(value or ""), "hidden": hidden,
                "visibility": shown_to, "created_by": str(creator or self.created_by), "created_at": now,
                "updated_at": now, "schema": schema, **provided}



def _provided(project: str | None, provider: Any, options: Any, provider_missing: Callable[[str, str], str | None],
              wrong: dict) -> dict:
    """The provider columns of an entry: its provider (one the project sees) and options (a map, or its JSON
    text)."""
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except ValueError:
            wrong["provider_options"] = ("Not a map (options Cloudify exported are encrypted with its manager's "
                                         "key: give them as a map)")
            return {}
    try:
        options = checked_options(options)
    except StokerError as exc:
        wrong["provider_options"] = str(exc)
        return {}
    if provider is None:
        return {"provider_name": None, "provider_options": None}
    if not isinstance(provider, str):
        wrong["provider"] = "Not a secrets provider's name"
    elif project is not None and (refused := provider_missing(project, provider)):
        wrong["provider"] = refused
    return {"provider_name": provider,
            "provider_options": None if options is None else secretbox.encrypt(json.dumps(options))}


def _typed(key: Any, schema: Any, value: Any, hidden: bool, wrong: dict) -> dict | None:
    """A typed entry's schema (checked, with its value's JSON text against it), or None (untyped)."""
    if schema is None or not isinstance(key, str):
        return None
    try:
        schema = secret_schemas.checked_schema(key, schema)
        if schema is not None and isinstance(value, str) and value:
            secret_schemas.stored_text(key, schema, _decoded(key, value), hidden)
    except StokerError as exc:
        wrong["schema"] = str(exc)
    return schema


def _decoded(key: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise secret_schemas.ValueRefused(f"Error validating secret value of `{key}`: not JSON (a typed "
                                          "secret's value is its JSON text)") from None


def _boolean(entry: dict, name: str, wrong: dict) -> bool:
    value = entry.get(name)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if value is not None and not isinstance(value, bool):
        wrong[name] = "Not boolean"
    return bool(value)


def _opened(value: str, passphrase: str | None, wrong: dict) -> str | None:
    if not passphrase:
        wrong["No passphrase"] = "The secret is encrypted but no passphrase was given"
        return None
    try:
        return cipher.decrypt(value, passphrase)
    except cipher.WrongPassphrase:
        wrong["value"] = "The value cannot be decrypted with the given passphrase"
        return None
