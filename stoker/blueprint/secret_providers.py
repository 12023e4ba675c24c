"""Secrets providers, as Cloudify 7 reads them: a secret created with ``--provider P`` takes its value from P's
store whenever it is read (``get_secret``, ``cfy secrets get``), not from Stoker's database.

Types (Cloudify's, with its connection parameters): ``vault`` (``url``, ``token``, ``path``: HashiCorp Vault's KV
v2 engine, the secret's key read at ``/v1/secret/data/<path>[/<options' path>]``), ``cloudify`` (``host``,
``username``, ``password``, ``tenant``, and ``protocol`` (https), ``port``, ``cert``: another manager, or Stoker's
own API, the secret named by the options' ``name``, else its own key), ``local`` (the value kept here).
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from stoker import secretbox
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.errors import StokerError
from stoker.store.provider_records import ProviderRecords

#: each type's connection parameters (Cloudify's schema), then the optional ones Stoker reads too
TYPES = {"vault": ("url", "token", "path"), "cloudify": ("host", "username", "password", "tenant"), "local": ()}
OPTIONAL = {"cloudify": ("protocol", "port", "cert")}
#: parameters never shown back but to the operator
CREDENTIALS = ("token", "password")
#: seconds a provider has to answer one read
TIMEOUT = 10.0


class ProviderFailed(StokerError):
    """A provider did not give a value (unreachable, refused, no such key): Cloudify's ``failed_dependency``."""

    code = "secrets-provider-failed"
    cloudify_code = "failed_dependency"


def invalid(message: str) -> BlueprintError:
    return BlueprintError(message, code="invalid-secrets-provider")


def checked_type(kind: Any) -> str:
    if kind not in TYPES:
        raise invalid(f"Secrets Provider type `{str(kind)[:50]}` is not supported: one of {', '.join(TYPES)}")
    return kind


def checked_parameters(kind: str, given: Any) -> dict:
    """``given`` (a map of strings, or none) with only the parameters ``kind`` reads."""
    given = {} if given is None else given
    known = TYPES[kind] + OPTIONAL.get(kind, ())
    if not isinstance(given, dict) or not all(isinstance(v, (str, int)) for v in given.values()):
        raise invalid("connection_parameters is a map of strings")
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise invalid(f"a {kind} secrets provider has no connection parameter(s) {', '.join(unknown)} "
                       f"(it reads {', '.join(known) or 'none'})")
    return dict(given)


def checked_options(given: Any) -> dict | None:
    if given in (None, {}):
        return None
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise invalid("provider_options is a map of strings (a Vault path, another manager's secret name)")
    return given


def parameters_of(row: dict) -> dict:
    return json.loads(secretbox.decrypt(row["connection_parameters"]))


def _get(url: str, headers: dict, what: str, cert: str | None = None) -> dict:
    """The JSON answer of a GET, or ``ProviderFailed`` saying what failed."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ProviderFailed(f"{what}: {url[:200]} is not an http(s) URL")
    context = ssl.create_default_context(cadata=cert) if cert else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT,
                                    context=context) as answer:
            return json.loads(answer.read(1_000_001))
    except urllib.error.HTTPError as exc:
        raise ProviderFailed(f"{what}: {exc.code} {exc.reason}") from None
    except (OSError, ValueError) as exc:  # unreachable, TLS, not JSON
        raise ProviderFailed(f"{what}: {exc}") from None


def _vault(params: dict, key: str, options: dict, name: str) -> str:
    path = "/".join(p.strip("/") for p in (params.get("path"), options.get("path")) if p)
    for needed, have in (("URL", params.get("url")), ("authorization token", params.get("token")), ("secret path", path)):
        if not have:
            raise ProviderFailed(f"Secrets Provider does not have a defined {needed}: {name}")
    found = _get(f"{params['url'].rstrip('/')}/v1/secret/data/{urllib.parse.quote(path)}",
                 {"X-Vault-Token": str(params["token"])}, f"Vault provider {name}")
    data = (found.get("data") or {}).get("data") if isinstance(found, dict) else None
    if not isinstance(data, dict) or key not in data:
        raise ProviderFailed(f"Secret {key} does not exist in Vault provider {name}")
    value = data[key]
    return value if isinstance(value, str) else json.dumps(value)


def _manager_url(params: dict, path: str) -> str:
    protocol = params.get("protocol") or "https"
    port = f":{params['port']}" if params.get("port") else ""
    return f"{protocol}://{params.get('host')}{port}/api/v3.1/{path}"


def _manager_headers(params: dict) -> dict:
    login = f"{params.get('username', '')}:{params.get('password', '')}".encode("utf-8")
    return {"Authorization": "Basic " + base64.b64encode(login).decode("ascii"),
            "Tenant": str(params.get("tenant") or "default_tenant")}


def _cloudify(params: dict, key: str, options: dict, name: str) -> str:
    secret = options.get("name") or key
    found = _get(_manager_url(params, f"secrets/{urllib.parse.quote(secret, safe='')}"), _manager_headers(params),
                 f"Cloudify provider {name}", params.get("cert"))
    value = found.get("value") if isinstance(found, dict) else None
    if value is None:
        raise ProviderFailed(f"Secret {secret} has no value at Cloudify provider {name}")
    return value if isinstance(value, str) else json.dumps(value)


def fetch(provider: dict, secret: dict) -> str:
    """The value of ``secret`` (its row) from ``provider`` (its row)."""
    options = json.loads(secretbox.decrypt(secret["provider_options"])) if secret.get("provider_options") else {}
    if provider["type"] == "local":
        return secretbox.decrypt(secret["value"])
    read = _vault if provider["type"] == "vault" else _cloudify
    return read(parameters_of(provider), secret["key"], options, provider["name"])


def check(kind: str, params: dict, name: str) -> None:
    """Whether the provider answers with these credentials (``ProviderFailed`` saying why not)."""
    if kind == "vault":
        for needed in ("url", "token"):
            if not params.get(needed):
                raise ProviderFailed(f"Secrets Provider does not have a defined {needed}: {name}")
        _get(f"{params['url'].rstrip('/')}/v1/auth/token/lookup-self", {"X-Vault-Token": str(params["token"])},
             f"Vault provider {name}")
    elif kind == "cloudify":
        _get(_manager_url(params, "status"), _manager_headers(params), f"Cloudify provider {name}",
             params.get("cert"))


def secret_value(records: Any, secret: dict) -> str:
    """A secret's value (its row; ``records``: any records over the store): from its provider's store when it
    names one, else the one kept here."""
    if not secret.get("provider_name"):
        return secretbox.decrypt(secret["value"])
    return fetch(ProviderRecords(records).find(secret["project_id"], secret["provider_name"]), secret)
