"""Servers for the Cloudify API tests: token auth, users made with ``stoker user create``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ..forked_cli import ForkedCli
from ..helpers import start_server

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PASSWORD = "s3cret-Pass"
#: a blueprint of one node that runs nothing
NOOP = """tosca_definitions_version: cloudify_dsl_1_4
imports: [cloudify/types/types.yaml]
node_templates:
  app: {type: cloudify.nodes.Root}
"""


def add_user(db_url: str, tmp: Path, name: str, tenant: str, role: str) -> None:
    from stoker.cli.api_cmds import user

    secret = tmp / f"password-{name}"
    secret.write_text(PASSWORD + "\n")
    done = CliRunner().invoke(user, ["create", name, "--password-file", str(secret), "--tenant", tenant,
                                     "--role", role, "--db-url", db_url], catch_exceptions=False)
    assert done.exit_code == 0, done.output


def cloudify_server(tmp: Path, users: list[tuple[str, str, str]], extra: tuple[str, ...] = (),
                    env: dict[str, str] | None = None):
    db_url = f"sqlite:///{tmp / 'stoker.db'}"
    from stoker.store.db import open_store

    open_store(db_url).close()
    for name, tenant, role in users:
        add_user(db_url, tmp, name, tenant, role)
    return start_server(tmp, db_url, auth="token", extra=extra, env=env)


def admin_server(tmp_path_factory, name: str):
    """A module's server (yielded, then stopped) with the one user admin, running local scripts."""
    started = cloudify_server(tmp_path_factory.mktemp(name), [("admin", "default_tenant", "manager")],
                              extra=("--allow-local-resources",))
    yield started
    started.stop()


def noop_blueprint(tmp: Path, name: str = "bp") -> Path:
    """``NOOP`` written to ``tmp/name/blueprint.yaml``."""
    path = tmp / name / "blueprint.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NOOP)
    return path


def refused_status(call) -> int:
    """The HTTP status of the client error ``call()`` raises."""
    from cloudify_rest_client.exceptions import CloudifyClientError

    with pytest.raises(CloudifyClientError) as raised:
        call()
    return raised.value.status_code


def rest_client(server, user: str = "admin", tenant: str = "default_tenant", timeout: tuple | None = None):
    """cloudify-rest-client on ``server`` as ``user`` (its password is ``PASSWORD``) in ``tenant``; ``timeout``:
    (connect, read) seconds, the client's (5, 300) if none."""
    from cloudify_rest_client import CloudifyClient

    return CloudifyClient(host="127.0.0.1", port=int(server.url.rsplit(":", 1)[1]), username=user,
                          password=PASSWORD, tenant=tenant, timeout=timeout)


def cfy_in(tmp: Path, name: str = "cfy") -> ForkedCli:
    """The real ``cfy`` with a profile folder of its own, ``tmp/name`` (``cfy(*args)`` runs one command)."""
    from ..helpers import child_env

    return ForkedCli("cfy", {**child_env(tmp), "CFY_WORKDIR": str(tmp / name)}, tmp / f"{name}-output")


def cfy_on(server, tmp: Path, user: str = "admin", tenant: str = "default_tenant"):
    """``cfy`` with a profile of its own (under ``tmp``) on ``server`` as ``user`` in ``tenant``: ``run(*args,
    ok=True)`` runs one command, asserts whether it succeeded, and returns what it printed (with ``--json``,
    its standard output alone: the JSON, without the warnings cfy writes to its standard error)."""
    cfy = cfy_in(tmp, "cfy" if (user, tenant) == ("admin", "default_tenant") else f"cfy-{user}-{tenant}")

    def run(*args: str, ok: bool = True) -> str:
        done = cfy(*args)
        assert (done.returncode == 0) == ok, f"cfy {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout if "--json" in args else done.stdout + done.stderr

    run("profiles", "use", "127.0.0.1", "--rest-port", server.url.rsplit(":", 1)[1], "-u", user, "-p",
        PASSWORD, "-t", tenant)
    return run


class Here:
    """``here(*args)``: ``stoker --db-url URL ...`` in this process, on a SQLite database of its own
    (``db_url``) holding blueprint ``bp`` (``NOOP``)."""

    def __init__(self, tmp: Path):
        self.db_url = f"sqlite:///{tmp / 'stoker.db'}"
        (tmp / "bp.yaml").write_text(NOOP)
        assert self("blueprint", "upload", str(tmp / "bp.yaml"), "-b", "bp").exit_code == 0

    def __call__(self, *args: str):
        from stoker.cli import main

        return CliRunner().invoke(main, ["--db-url", self.db_url, *args], catch_exceptions=False)


@pytest.fixture
def here(tmp_path, monkeypatch) -> Here:
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    return Here(tmp_path)
