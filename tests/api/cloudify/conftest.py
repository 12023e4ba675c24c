"""Servers for the Cloudify API tests: token auth, users made with ``stoker user create``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ..helpers import start_server

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PASSWORD = "s3cret-Pass"


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
