"""``cloudify.nodes.PasswordSecret``: a generated password, stored as a hidden secret.

As Cloudify's ``cloudify_types.password_secret``: ``length`` characters with at least
``uppercase``/``lowercase``/``digits``/``symbols`` of each group (-1 leaves a group out), the
secret named ``secret_name`` (else ``ps_<deployment>_<instance>``), runtime properties ``secret_name``
and ``password: {get_secret: NAME}`` (never the value); ``use_secret_if_exists`` takes an existing
secret instead; delete removes the secret it made (``secret_generated``; Cloudify removes a taken
one too, which loses the user's secret).  Stoker stores it hidden (Cloudify's REST default is
not): a password is shown masked, never in clear.
"""

from __future__ import annotations

import secrets
import string

from stoker.workflows.cfy_extensions.call import Call, Refused

GROUPS = {"uppercase": string.ascii_uppercase, "lowercase": string.ascii_lowercase, "digits": string.digits,
          "symbols": " " + string.punctuation}


def _settings(call: Call) -> tuple[int, dict[str, int]]:
    values = {name: call.input(name) or 0 for name in ("length", *GROUPS)}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise Refused(f"Error in create: {name} must be an integer, not {value!r}")
    return values.pop("length"), values


def creation_validation(call: Call) -> bool:
    length, minimum = _settings(call)
    if length < 6:
        raise Refused("Password length is required to be at least 6 characters")
    if any(value < -1 for value in minimum.values()):
        raise Refused("Illegal character group length provided: expecting an integer greater than 0, or -1 for "
                      "not using this character group")
    if all(value == -1 for value in minimum.values()):
        raise Refused("Could not satisfy password requirements: at least one character group should be used")
    if sum(max(value, 0) for value in minimum.values()) > length:
        raise Refused("Could not satisfy password requirements: lengths of required character groups is larger "
                      "than the password length")
    return True


def generate(length: int, minimum: dict[str, int]) -> str:
    """``length`` characters: the required ones of each group, the rest from every group not left out."""
    chosen = [secrets.choice(GROUPS[name]) for name, count in minimum.items() for _ in range(max(count, 0))]
    alphabet = "".join(GROUPS[name] for name, count in minimum.items() if count >= 0)
    if len(chosen) < length and not alphabet:
        raise Refused("Error in create: Could not satisfy password requirements: at least one character group "
                      "should be used")
    chosen += [secrets.choice(alphabet) for _ in range(length - len(chosen))]
    secrets.SystemRandom().shuffle(chosen)
    return "".join(chosen)


def create(call: Call) -> bool:
    name = call.input("secret_name")
    if call.input("use_secret_if_exists"):
        if not name:
            raise Refused("Error in create: Can't enable `use_secret_if_exists` property without providing a "
                          "secret_name")
        if call.manager.secret_exists(str(name)):
            call.runtime.update(secret_name=str(name), password={"get_secret": str(name)})
            call.log(f"Using existing password from secret `{name}`")
            return True
    if call.runtime.get("password"):  # made before an interruption
        return True
    name = str(name or f"ps_{call.deployment_id}_{call.instance.id}")
    length, minimum = _settings(call)
    if call.manager.secret_exists(name):
        raise Refused(f'Error in create: The secrets: "{name}" already exist, not updating...')
    call.manager.create_secret(name, generate(length, minimum), hidden=True)
    call.runtime.update(secret_name=name, password={"get_secret": name}, secret_generated=True)
    call.log("Created password secret.")
    return True


def delete(call: Call) -> None:
    name = call.runtime.get("secret_name")
    if name and call.runtime.get("secret_generated"):  # a secret it took (use_secret_if_exists) stays
        call.manager.delete_secret(str(name))
    for key in ("password", "secret_name", "secret_generated"):
        call.runtime.pop(key, None)
