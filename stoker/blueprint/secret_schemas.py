"""Typed secrets, as Cloudify 7 keeps them (``cfy secrets create KEY --schema '{"type": "object"}'``): the value is
any JSON value, checked against the secret's JSON Schema when it is stored (created, updated, imported) and kept as
its JSON text, encrypted like every value; reads through the API give the value decoded, ``get_secret`` the text
(and ``get_secret: [KEY, path...]`` the part it names), as Cloudify's do.

A schema that is not JSON Schema (or too large, or naming a ``$ref`` it does not hold) is a 400; a value that does
not match it a 409 (Cloudify's ``conflict_error``), the error naming the secret, never a hidden value.
``jsonschema`` (a tenth of a second to import) is imported by the first typed secret a command meets.
"""

from __future__ import annotations

import json
from typing import Any

from stoker.errors import Conflict, StokerError
from stoker.limits import limit

#: the longest message of jsonschema's quoted in an error (it may repeat the value or the schema)
LONGEST_REASON = 300


class InvalidSchema(StokerError):
    """A secret's schema is not one it can be checked against: Cloudify's ``bad_parameters_error``."""

    code = "invalid-secret-schema"
    cloudify_code = "bad_parameters_error"


class ValueRefused(Conflict):
    """A secret's value does not match its schema: Cloudify's 409 ``conflict_error``."""

    code = "secret-value-refused"
    cloudify_code = "conflict_error"


def _cut(text: str) -> str:
    return text if len(text) <= LONGEST_REASON else text[:LONGEST_REASON] + "..."


def _validator(key: str, schema: dict) -> type:
    """The validator of the schema's draft (its ``$schema``; none, or one jsonschema does not know: the latest)."""
    import jsonschema

    if not isinstance(schema.get("$schema", ""), str):
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: $schema is the URI of a draft (a string)")
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def checked_schema(key: str, schema: Any) -> dict | None:
    """``schema`` as it is kept (none: None), or ``InvalidSchema`` saying what is wrong with it."""
    if schema in (None, {}):
        return None
    if not isinstance(schema, dict):
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: a JSON object is expected, "
                            f"not {type(schema).__name__}")
    size, most = len(json.dumps(schema)), limit("max_secret_schema_size")
    if size > most:
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: {size} bytes, over the {most} a schema may "
                            "have (max_secret_schema_size)")
    from jsonschema.exceptions import SchemaError

    try:
        _validator(key, schema).check_schema(schema)
    except SchemaError as exc:
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: {_cut(exc.message)}") from None
    except RecursionError:
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: nested too deeply") from None
    return schema


def _mismatch(key: str, error: Any, hidden: bool) -> ValueRefused:
    """The refusal of a value: jsonschema's reason, or (a hidden value, which the reason may quote) the rule the
    value breaks and where."""
    if not hidden:
        return ValueRefused(f"Error validating secret value of `{key}`: {_cut(error.message)}")
    where = "".join(f"[{json.dumps(step)}]" for step in error.absolute_path)
    return ValueRefused(f"Error validating secret value of `{key}`: the value{where} does not meet the schema's "
                        f"`{error.validator}`: {_cut(json.dumps(error.validator_value, default=str))}")


def stored_text(key: str, schema: dict | None, value: Any, hidden: bool = False) -> str:
    """The text a secret keeps for ``value``: a typed one's JSON, once it matches ``schema`` (a checked one);
    an untyped one's value, which is a string."""
    if schema is None:
        if not isinstance(value, str):
            raise StokerError(f"The value of secret `{key}` is a {type(value).__name__}: an untyped secret's "
                              "value is a string (give a schema, cfy's --schema, for a typed value)")
        return value
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    try:
        error = best_match(_validator(key, schema)(schema).iter_errors(value))
    except Unresolvable as exc:
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: cannot resolve {_cut(str(exc))}") from None
    except RecursionError:
        raise InvalidSchema(f"Invalid secret JSON schema of `{key}`: its references loop") from None
    if error is not None:
        raise _mismatch(key, error, hidden)
    return json.dumps(value)


def read_value(schema: dict | None, text: str) -> Any:
    """A secret's value as the API shows it: a typed one's decoded (text a provider gave that is not JSON: as
    it is)."""
    if schema is None:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def strings_in(value: Any) -> list[str]:
    """The strings a decoded value holds (not its keys: names, not secrets), to be masked where a hidden value
    could show alone."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in strings_in(item)] if isinstance(value, list) else []
