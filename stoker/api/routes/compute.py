"""Nova's key pairs (``/cloud/{tenant_id}/compute/v2.1/os-keypairs``): the part of the compute API a
Heat user's tools call before a stack (make a key pair, list, show, delete), so a cloud in a box
needs no Nova.  A key pair made here joins the cloud that ``nova.keypair`` checks while it exists.

Bodies and errors are Nova's (``{"keypair": ...}``, ``{"itemNotFound": {"code", "message"}}``);
a key pair made without a public key gets a fresh Ed25519 one, its private key returned once.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from stoker.api import ssh_keys
from stoker.api.body import json_object
from stoker.api.request_context import Ctx, context, empty, reply
from stoker.errors import Conflict, NotFound

router = APIRouter(prefix="/cloud/{tenant_id}/compute/v2.1", tags=["cloud: compute"])

#: Nova's rule for a key pair's name (2.1): letters, digits, spaces, '_' and '-', 1 to 255 of them
NAME = re.compile(r"[A-Za-z0-9 _-]{1,255}")
KEY_TYPES = ("ssh", "x509")
#: the microversion answered (the base one: what novaclient's "2.1" asks)
VERSION_HEADERS = {"OpenStack-API-Version": "compute 2.1", "X-OpenStack-Nova-API-Version": "2.1"}


def _error(status: int, kind: str, message: str) -> Response:
    return reply({kind: {"code": status, "message": message}}, status, VERSION_HEADERS)


def _bad(message: str) -> Response:
    return _error(400, "badRequest", message)


@router.get("/os-keypairs", summary="List key pairs (Nova)")
def list_keypairs(ctx: Ctx = Depends(context)) -> Response:
    keypairs = ctx.state.keypairs.list(ctx.project)
    return reply({"keypairs": [{"keypair": {key: kp[key] for key in ("name", "public_key", "fingerprint")}}
                               for kp in keypairs]}, headers=VERSION_HEADERS)


@router.post("/os-keypairs", summary="Create or import a key pair (Nova)")
def create_keypair(ctx: Ctx = Depends(context), body: dict = Depends(json_object)) -> Response:
    given = body.get("keypair")
    if not isinstance(given, dict):
        return _bad("The request body must hold a 'keypair' map.")
    name, public_key, key_type = given.get("name"), given.get("public_key"), given.get("type", "ssh")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return _bad("Keypair data is invalid: the name must be 1 to 255 letters, digits, spaces, '_' or '-'.")
    if key_type not in KEY_TYPES:
        return _bad(f"Keypair data is invalid: type must be one of {', '.join(KEY_TYPES)}.")
    if public_key is not None and not isinstance(public_key, str):
        return _bad("Keypair data is invalid: public_key must be a string.")
    private_key = None
    if public_key is None:
        public_key, private_key = ssh_keys.generate(name.replace(" ", "-"))
    try:
        fingerprint = ssh_keys.fingerprint(public_key)
    except ssh_keys.BadPublicKey as exc:
        return _bad(f"Keypair data is invalid: failed to generate fingerprint ({exc}).")
    try:
        made = ctx.state.keypairs.create(ctx.project, name, public_key, fingerprint, key_type, ctx.project)
    except Conflict as exc:
        return _error(409, "conflictingRequest", str(exc))
    shown = {key: made[key] for key in ("name", "public_key", "fingerprint", "user_id")}
    if private_key is not None:
        shown["private_key"] = private_key
    return reply({"keypair": shown}, headers=VERSION_HEADERS)


@router.get("/os-keypairs/{name}", summary="Show a key pair (Nova)")
def show_keypair(name: str, ctx: Ctx = Depends(context)) -> Response:
    try:
        found = ctx.state.keypairs.get(ctx.project, name)
    except NotFound as exc:
        return _error(404, "itemNotFound", str(exc))
    return reply({"keypair": {**found, "deleted": False, "deleted_at": None, "updated_at": None}},
                 headers=VERSION_HEADERS)


@router.delete("/os-keypairs/{name}", summary="Delete a key pair (Nova)")
def delete_keypair(name: str, ctx: Ctx = Depends(context)) -> Response:
    try:
        ctx.state.keypairs.delete(ctx.project, name)
    except NotFound as exc:
        return _error(404, "itemNotFound", str(exc))
    return empty(202)


@router.api_route("/{path:path}", methods=["GET", "POST", "PUT", "DELETE"], include_in_schema=False)
def not_served(path: str, ctx: Ctx = Depends(context)) -> Response:
    """The rest of Nova's API, in Nova's words (novaclient reads nothing else)."""
    return _error(404, "itemNotFound", f"The compute API of a cloud in a box serves os-keypairs only, not /{path}.")
