"""The versions document at ``/`` and ``/v1/{tenant_id}/build_info``."""

from __future__ import annotations

from importlib import metadata

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from stoker.api.request_context import Ctx, context, reply

router = APIRouter(tags=["info"])


def _version() -> str:
    try:
        return metadata.version("stoker")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _versions(request: Request) -> dict:
    root = str(request.base_url).rstrip("/")
    return {"versions": [{"id": "v1.0", "status": "CURRENT",
                          "links": [{"rel": "self", "href": f"{root}/v1/"}]}]}


@router.get("/", summary="API versions (300 Multiple Choices, as Heat)")
def versions(request: Request) -> Response:
    return reply(_versions(request), 300)


@router.get("/v1/{tenant_id}/build_info", summary="Build information")
def build_info(ctx: Ctx = Depends(context)) -> Response:
    revision = f"stoker-{_version()}"
    return reply({"api": {"revision": revision}, "engine": {"revision": revision}})
