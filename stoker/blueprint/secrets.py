"""Secrets of a project: stored encrypted, shown masked when hidden, never logged."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from stoker import secretbox
from stoker.blueprint import secret_schemas, visibility
from stoker.blueprint.secret_files import Importer, exported
from stoker.blueprint.secret_providers import ProviderFailed, checked_options, secret_value
from stoker.blueprint.state import tenant_of
from stoker.errors import NotFound, StokerError
from stoker.store.blueprint_records import SECRETS
from stoker.store.provider_records import ProviderRecords

MASK = "******"


def secret_values(records: Any, project_id: str, deployment_row: dict, hidden_only: bool = False) -> list[str]:
    """What must never be shown: the project's secrets (hidden ones only, with ``hidden_only``) and the
    deployment's hidden inputs."""
    values = [text for row in records.list_secrets(project_id) if row["hidden"] or not hidden_only
              for text in _readable(records, row)]
    plan = secretbox.unseal(deployment_row["plan"])
    inputs = secretbox.unseal(deployment_row["inputs"])
    for name, definition in (plan.get("input_definitions") or {}).items():
        if isinstance(definition, dict) and definition.get("hidden") and name in inputs:
            values.append(inputs[name] if isinstance(inputs[name], str) else json.dumps(inputs[name]))
    return values


def _readable(records: Any, row: dict) -> list[str]:
    """The secret's value, for masking (a typed one's text and each string it holds): a provider that does not
    answer now is not asked again here (what it would give is not shown, as the operation reading it fails too)."""
    try:
        text = secret_value(records, row)
    except ProviderFailed:
        return []
    return [text] if row["schema"] is None else [text, *secret_schemas.strings_in(
        secret_schemas.read_value(row["schema"], text))]


def masker(values: list[str]):
    """``mask(text)``: every value (3 characters or more, longest first) replaced by ``******``."""
    found = sorted({v for v in values if isinstance(v, str) and len(v) >= 3}, key=len, reverse=True)

    def mask(text: str) -> str:
        if not isinstance(text, str):
            return text
        for value in found:
            if value in text:
                text = text.replace(value, MASK)
        return text

    return mask


def shows_any(value: Any, mask) -> bool:
    """Whether ``value`` (any JSON value) holds something ``mask`` would hide: in one of its strings as
    they are (JSON would escape a quote or backslash of the secret), or in its JSON text."""
    if isinstance(value, str) and mask(value) != value:
        return True
    if isinstance(value, dict) and any(shows_any(k, mask) or shows_any(v, mask) for k, v in value.items()):
        return True
    if isinstance(value, list) and any(shows_any(item, mask) for item in value):
        return True
    text = json.dumps(value, default=str)
    return mask(text) != text


def masked_values(values: dict, mask) -> dict:
    """Each value that holds something hidden shown as ``******`` whole, as Cloudify shows hidden values."""
    return {name: MASK if shows_any(value, mask) else value for name, value in values.items()}


class Secrets:
    def __init__(self, records: Any, project_id: str):
        self.records = records
        self.project_id = project_id

    def create(self, key: str, value: Any, update_if_exists: bool = False, hidden: bool = False,
               shown_to: str = "tenant", created_by: str = "admin", provider: str | None = None,
               options: Any = None, schema: Any = None) -> dict:
        """A new secret (``shown_to``: its visibility; a global one only while no other tenant holds its key),
        its value read from ``provider`` (a secrets provider's name, with its ``options``) when one is named; with
        a JSON ``schema``, typed (``secret_schemas``: any JSON value, which must match it).  Replacing one
        (``update_if_exists``) replaces its schema too."""
        schema = secret_schemas.checked_schema(key, schema)
        empty = value in (None, "")
        if empty and not provider:
            raise StokerError(f"Cannot create a secret with empty value or provider: {key}")
        text = "" if empty else secret_schemas.stored_text(key, schema, value, hidden)
        self.records.put_secret(self.project_id, key, secretbox.encrypt(text), hidden, update_if_exists,
                                visibility.checked(shown_to), created_by, schema=schema,
                                **self._provided(provider, options))
        return self.get(key)

    def _provided(self, provider: str | None, options: Any) -> dict:
        """The secret's provider columns (the provider must be one the project sees)."""
        if provider is None:
            return {} if options is None else {"provider_options": self._options(options)}
        ProviderRecords(self.records).find(self.project_id, provider)
        return {"provider_name": provider, "provider_options": self._options(options)}

    @staticmethod
    def _options(options: Any) -> str | None:
        checked = checked_options(options)
        return None if checked is None else secretbox.encrypt(json.dumps(checked))

    def _own(self, key: str) -> dict:
        """The secret, to change: another tenant's global one is changed from there only."""
        row = self.records.get_secret(self.project_id, key)
        if row is None:
            raise NotFound(f"Secret {key} not found")
        return visibility.owned(row, self.project_id, key)

    def set_visibility(self, key: str, shown_to: Any, allowed: tuple[str, ...] = visibility.WIDER) -> dict:
        """Widen the secret's visibility (``cfy secrets set-visibility|set-global``: tenant or global; ``update``
        takes any that widens)."""
        row = self._own(key)
        wanted = visibility.widened(key, row["visibility"], visibility.checked(shown_to, allowed))
        self.records.set_visibility(SECRETS, row, wanted)
        return self.get(key)

    def set_owner(self, key: str, creator: str) -> dict:
        """``cfy secrets set-owner`` (who may, and whether the user exists, is the caller's to decide)."""
        self.records.set_owner(SECRETS, self._own(key), creator)
        return self.get(key)

    def update(self, key: str, value: Any = None, hidden: bool | None = None, provider: str | None = None,
               options: Any = None) -> dict:
        """A new value (none: None or empty; a typed secret's must match its schema), hidden flag or provider."""
        row = self._own(key)
        fields: dict[str, Any] = self._provided(provider, options)
        if value not in (None, ""):
            still_hidden = row["hidden"] if hidden is None else hidden
            fields["value"] = secretbox.encrypt(secret_schemas.stored_text(key, row["schema"], value, still_hidden))
        if hidden is not None:
            fields["hidden"] = hidden
        self.records.update_secret(self.project_id, key, **fields)
        return self.get(key)

    def schema(self, key: str) -> dict | None:
        """The JSON Schema of the project's secret (a typed one's; else None)."""
        return self._own(key)["schema"]

    def get(self, key: str) -> dict:
        """The secret as ``cfy secrets get`` shows it (a hidden value is masked, a typed one decoded)."""
        row = self.records.get_secret(self.project_id, key)
        if row is None:
            raise NotFound(f"Secret {key} not found")
        value = MASK if row["hidden"] else secret_schemas.read_value(row["schema"], secret_value(self.records, row))
        options = json.loads(secretbox.decrypt(row["provider_options"])) if row["provider_options"] else None
        return {"key": row["key"], "value": value, **self._listing(row), "provider_options": options}

    @staticmethod
    def _listing(row: dict) -> dict:
        return {"is_hidden_value": row["hidden"], "created_at": row["created_at"].isoformat(),
                "updated_at": row["updated_at"].isoformat(), "visibility": row["visibility"],
                "tenant_name": tenant_of(row["project_id"]), "created_by": row["created_by"],
                "provider_name": row["provider_name"], "schema": row["schema"]}

    def list(self) -> list[dict]:
        """The project's secrets and the global ones of other projects."""
        return [{"key": row["key"], **self._listing(row)} for row in self.records.list_secrets(self.project_id)]

    def delete(self, key: str) -> None:
        self._own(key)
        self.records.delete_secret(self.project_id, key)

    def export(self, projects: Iterable[str], passphrase: str | None = None, shown_to: str | None = None,
               search: str | None = None, permitted: Callable[[dict], bool] = lambda row: True) -> list[dict]:
        """The entries of ``cfy secrets export`` (``secret_files``) of the secrets ``projects`` see (each once),
        of visibility ``shown_to``, whose key holds ``search``, that the reader is ``permitted`` (a row)."""
        rows = {row["pk"]: row for project in projects for row in self.records.list_secrets(project)}
        return exported([row for row in rows.values()
                         if (shown_to is None or row["visibility"] == shown_to)
                         and (not search or search in row["key"]) and permitted(row)], passphrase)

    def _provider_missing(self, project_id: str, name: str) -> str | None:
        """Why ``project_id`` may not read from provider ``name`` (it does not see one): None when it may."""
        try:
            ProviderRecords(self.records).find(project_id, name)
        except NotFound as exc:
            return str(exc)
        return None

    def import_(self, importer: Importer, entries: Any, passphrase: str | None = None, tenant_map: Any = None,
                override: bool = False) -> dict:
        """Store the entries of an export, all or none (``secret_files``): Cloudify's answer, the keys that were
        there already per tenant (replaced with ``override``, else left as they were)."""
        colliding: dict[str, list[str]] = {}
        rows = importer.rows(entries, self._provider_missing, passphrase, tenant_map)
        for row in self.records.import_secrets(rows, override):
            colliding.setdefault(tenant_of(row["project_id"]), []).append(row["key"])
        return {"colliding_secrets": colliding, "secrets_errors": {}}
