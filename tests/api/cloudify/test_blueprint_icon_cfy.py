"""``cfy blueprints set-icon BP -i ICON.png`` against ``stoker api``: the icon is kept with the blueprint and served
where a manager's file server keeps it (``/resources/blueprints/TENANT/BP/icon.png``); ``set-icon`` without a path
removes it; a file that is no PNG, or one over the size limit, is refused naming why; another tenant neither sets
nor reads it."""

from __future__ import annotations

import struct
import zlib

import pytest
import requests

from .conftest import PASSWORD, cfy_on, cloudify_server, noop_blueprint, refused_status, rest_client

pytestmark = pytest.mark.slow  # each `cfy` command is a process of its own
pytest.importorskip("cloudify_rest_client")

#: bytes an icon may have on this server (``max_blueprint_icon_size``)
ICON_LIMIT = 4000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("icons")
    users = [("admin", "default_tenant", "manager"), ("other", "other_tenant", "manager")]
    started = cloudify_server(tmp, users, env={"STOKER_MAX_BLUEPRINT_ICON_SIZE": str(ICON_LIMIT)})
    client = rest_client(started)
    for blueprint in ("shown", "refused", "mine"):
        client.blueprints.upload(str(noop_blueprint(tmp, blueprint)), blueprint)
    yield started
    started.stop()


def png(padding: int = 0) -> bytes:
    """A 1x1 PNG image (``padding`` bytes more in a text chunk)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"tEXt", b"pad\x00" + b"x" * padding) + chunk(b"IDAT", zlib.compress(b"\x00\x00"))
            + chunk(b"IEND", b""))


def _served(server, blueprint: str, user: str = "admin", tenant: str = "default_tenant",
            path_tenant: str = "default_tenant") -> requests.Response:
    return requests.get(f"{server.url}/resources/blueprints/{path_tenant}/{blueprint}/icon.png",
                        auth=(user, PASSWORD), headers={"Tenant": tenant}, timeout=30)


def test_cfy_sets_an_icon_that_is_served_back_then_removes_it(server, tmp_path):
    cfy = cfy_on(server, tmp_path)
    icon = tmp_path / "icon.png"
    icon.write_bytes(png())
    assert _served(server, "shown").status_code == 404

    assert "Blueprint `shown` has a new icon set." in cfy("blueprints", "set-icon", "shown", "-i", str(icon))
    served = _served(server, "shown")
    assert (served.status_code, served.headers["content-type"], served.content) == (200, "image/png", png())
    assert cfy("blueprints", "get", "shown").count("shown") >= 1  # the blueprint reads as before

    assert "Blueprint `shown` has its icon removed." in cfy("blueprints", "set-icon", "shown")
    assert _served(server, "shown").status_code == 404


def test_an_icon_that_is_no_png_or_too_large_is_refused_naming_why(server, tmp_path):
    cfy, client = cfy_on(server, tmp_path), rest_client(server)
    text = tmp_path / "icon.png"
    text.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    shown = cfy("blueprints", "set-icon", "refused", "-i", str(text))  # cfy prints the error and exits 0
    assert "Error: 400: a blueprint's icon is a PNG image" in shown
    assert refused_status(lambda: client.blueprints.upload_icon("refused", str(text))) == 400

    large = tmp_path / "large.png"
    large.write_bytes(png(ICON_LIMIT))
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as raised:
        client.blueprints.upload_icon("refused", str(large))
    assert raised.value.status_code == 413 and "max_blueprint_icon_size" in str(raised.value)
    assert _served(server, "refused").status_code == 404


def test_another_tenant_neither_sets_nor_reads_the_icon(server, tmp_path):
    icon = tmp_path / "icon.png"
    icon.write_bytes(png())
    rest_client(server).blueprints.upload_icon("mine", str(icon))

    other = rest_client(server, "other", "other_tenant")
    assert refused_status(lambda: other.blueprints.upload_icon("mine", str(icon))) == 404
    assert refused_status(lambda: other.blueprints.remove_icon("mine")) == 404
    assert _served(server, "mine", "other", "other_tenant", "default_tenant").status_code == 404
    assert _served(server, "mine", "other", "other_tenant", "other_tenant").status_code == 404
    assert _served(server, "mine").content == png()
