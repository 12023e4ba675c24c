"""``stoker api`` (serve Heat's and Cloudify's REST APIs), ``stoker token create|list|revoke`` and
``stoker user create|list|delete`` (Cloudify's users)."""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import click

from stoker.cli.formatting import format_option, show_list, show_record
from stoker.cli.group import pass_settings
from stoker.limits import MAX_TOKEN_DAYS


def db_url_of(settings, given: str | None) -> str:
    """--db-url, else the root command's (or the environment's, run on its own), else the default."""
    from stoker.store.db import default_url

    return given or getattr(settings, "db_url", None) or os.environ.get("STOKER_DB_URL") or default_url()


@click.command("api")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8004, show_default=True, type=int, help="Port to listen on (Heat's is 8004).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes.")
@click.option("--auth", "auth_mode", type=click.Choice(["auto", "token", "noauth"]), default="auto",
              show_default=True,
              help="auto: no authentication on a loopback address, tokens anywhere else. "
                   "noauth on another address must be asked for explicitly.")
@click.option("--db-url", "db_url", default=None, help="State database (default: the global --db-url).")
@click.option("--max-body-size", type=int, default=None, help="Largest JSON body in bytes (default 1 MiB).")
@click.option("--header-timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds a client has to send a request's headers (408 after).")
@click.option("--body-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds a client has to send a request's body once its headers are in (408 after).")
@click.option("--max-connections-per-address", type=click.IntRange(min=1), default=100, show_default=True,
              help="Connections one client address may hold open at once, per worker (503 past it).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="info", show_default=True)
@click.option("--debug", is_flag=True, help="Put tracebacks into 500 error bodies.")
@click.option("--broker", default=None, help="Celery broker: stack actions and executions run on `stoker worker` processes "
              "(default: the global --broker, $STOKER_BROKER_URL, broker_url in stoker.conf; none: in-process).")
@click.option("--allow-local-resources", is_flag=True,
              help="Let every project use resource types that act on this host (Stoker::Local::*); "
                   "off by default: they can read the database and run commands as the server. "
                   "[api] local_resource_projects in stoker.conf allows chosen projects only.")
@pass_settings
def api(settings, host, port, workers, auth_mode, db_url, max_body_size, header_timeout, body_timeout,
        max_connections_per_address, log_level, debug, broker, allow_local_resources):
    """Serve OpenStack Heat's Orchestration API v1 (/v1/{tenant_id}/...) and Cloudify's REST API v3.1 (/api/v3.1).

    python-heatclient and `openstack stack ...` work against it:
    `openstack --os-auth-type none --os-endpoint http://HOST:PORT/v1/PROJECT stack list`.
    """
    from stoker.api.app import settings_to_env
    from stoker.api.auth import is_loopback, resolve_mode
    from stoker.api.slow_clients import ClientBounds
    from stoker.store.db import open_store

    mode = resolve_mode(auth_mode, host)
    if mode == "noauth" and not is_loopback(host):
        click.echo(f"WARNING: serving {host} without authentication (--auth noauth): anyone who "
                   "can reach it acts on every project", err=True)
    url = db_url_of(settings, db_url)
    open_store(url).close()  # migrate once, before the workers start
    plugin_dirs = tuple(getattr(settings, "plugin_dirs", ()) or ())
    broker = broker or getattr(settings, "broker", None)
    _check_shared(url, broker)
    os.environ.update(settings_to_env(url, mode, plugin_dirs, max_body_size, debug=debug, broker=broker,
                                      allow_local_resources=allow_local_resources))
    os.environ.update(ClientBounds(header_timeout, body_timeout, max_connections_per_address).to_env())
    click.echo(f"Stoker API on http://{host}:{port}/v1/{{tenant_id}} and Cloudify's on http://{host}:{port}/api/v3.1 "
               f"(auth: {mode}, workers: {workers})", err=True)
    serve("stoker.api.app:app_from_env", host, port, workers, log_level)


def _check_shared(url: str, broker: str | None) -> None:
    """With a broker, actions run on workers elsewhere: the database must be one they share."""
    from sqlalchemy.engine import make_url

    from stoker.dispatch import broker_url

    if broker_url(broker) and make_url(url).get_backend_name() != "postgresql":
        raise click.UsageError("with a broker, the API and the workers share a PostgreSQL database: "
                               "give --db-url postgresql+psycopg://...")


#: seconds a stopping server gives requests in flight before it cancels them (its running
#: actions are handed back to the next server meanwhile, see stoker/api/background.py)
SHUTDOWN_GRACE = 5


def serve(app: str, host: str, port: int, workers: int, log_level: str) -> None:
    """Run uvicorn; with several workers, on a socket that is TCP by protocol too.

    uvicorn binds the socket it shares with its workers as ``socket(AF_INET)``
    (protocol 0), and asyncio only turns Nagle's algorithm off (TCP_NODELAY)
    for sockets whose protocol says TCP: every response then waits ~40 ms for
    the client's delayed ACK.  Binding it ourselves avoids that.
    """
    import inspect
    import socket

    import uvicorn

    from stoker.api.slow_clients import BoundedH11Protocol

    options = dict(factory=True, host=host, port=port, workers=workers, log_level=log_level, http=BoundedH11Protocol,
                   access_log=log_level == "debug", proxy_headers=False,
                   timeout_graceful_shutdown=SHUTDOWN_GRACE)
    if workers <= 1:
        uvicorn.run(app, **options)
        return
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app, **options)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    if "target" in inspect.signature(Multiprocess).parameters:  # uvicorn < 0.30
        Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
    else:
        Multiprocess(config, sockets=[sock]).run()


@click.group("token")
def token() -> None:
    """Tokens for `stoker api` (each belongs to one project)."""


def _tokens(settings, db_url: str | None):
    from stoker.api.auth import TokenStore
    from stoker.store.db import open_store

    store = open_store(db_url_of(settings, db_url))
    return TokenStore(store.engine)


@token.command("create")
@click.option("--project", required=True, help="The project (tenant_id) the token acts for.")
@click.option("--description", default="", help="What the token is for.")
@click.option("--expires-in", "expires_in", type=click.IntRange(1, MAX_TOKEN_DAYS), default=None,
              help="Expire after this many days (default: never).")
@click.option("--db-url", "db_url", default=None, help="State database (default: the global --db-url).")
@format_option(default="value")
@pass_settings
def token_create(settings, project, description, expires_in, db_url, fmt):
    """Issue a token for PROJECT; it is printed once and stored only as a hash."""
    try:
        issued = _tokens(settings, db_url).create(project, description,
                                                  None if expires_in is None else timedelta(days=expires_in))
    except ValueError as exc:
        click.echo(f"ERROR: {exc}", err=True)
        sys.exit(1)
    if fmt == "value":
        click.echo(issued.token)
        return
    show_record({"id": issued.id, "token": issued.token, "project": issued.project_id,
                 "expires_at": issued.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ") if issued.expires_at else None},
                fmt)


@token.command("list")
@click.option("--project", default=None, help="Only this project's tokens.")
@click.option("--db-url", "db_url", default=None)
@format_option()
@pass_settings
def token_list(settings, project, db_url, fmt):
    """List tokens (never the tokens themselves)."""
    rows = _tokens(settings, db_url).list(project)
    show_list(rows, ["id", "project", "description", "created_at", "expires_at", "revoked"], fmt)


@token.command("revoke")
@click.argument("token_id")
@click.option("--db-url", "db_url", default=None)
@pass_settings
def token_revoke(settings, token_id, db_url):
    """Revoke the token with id TOKEN_ID (servers refuse it from their next request on)."""
    if not _tokens(settings, db_url).revoke(token_id):
        click.echo(f"ERROR: no active token with id {token_id}", err=True)
        sys.exit(1)
    click.echo(f"Token {token_id} revoked")


@click.group("user")
def user() -> None:
    """Users of Cloudify's REST API on `stoker api` (cfy profiles use ... -u NAME -p PASSWORD -t TENANT)."""


def _users(settings, db_url: str | None):
    from stoker.api.cloudify.users import UserStore

    return UserStore(_tokens(settings, db_url).engine)


@user.command("create")
@click.argument("name")
@click.option("--password-file", required=True, type=click.File("r"),
              help="A file holding the password (its first line; '-' reads stdin): never on the command line.")
@click.option("--tenant", required=True, help="The tenant (Stoker project) the user belongs to; repeat the "
              "command for another tenant. default_tenant is the project 'default'.")
@click.option("--role", type=click.Choice(["viewer", "user", "manager"]), default="user", show_default=True,
              help="viewer reads; user also runs workflows, manages blueprints and deployments; "
                   "manager also manages secrets and plugins.")
@click.option("--db-url", "db_url", default=None)
@pass_settings
def user_create(settings, name, password_file, tenant, role, db_url):
    """Add user NAME to TENANT with ROLE (the password is stored hashed with scrypt)."""
    password = password_file.readline().rstrip("\r\n")
    try:
        _users(settings, db_url).create(name, password, tenant, role)
    except ValueError as exc:
        click.echo(f"ERROR: {exc}", err=True)
        sys.exit(1)
    click.echo(f"User {name} is a {role} in tenant {tenant}")


@user.command("list")
@click.option("--db-url", "db_url", default=None)
@format_option()
@pass_settings
def user_list(settings, db_url, fmt):
    """Users, with their tenants and roles (never their passwords)."""
    rows = [{**r, "created_at": r["created_at"].strftime("%Y-%m-%dT%H:%M:%SZ")}
            for r in _users(settings, db_url).rows()]
    show_list(rows, ["name", "tenant", "role", "created_at"], fmt)


@user.command("delete")
@click.argument("name")
@click.option("--db-url", "db_url", default=None)
@pass_settings
def user_delete(settings, name, db_url):
    """Remove user NAME from every tenant (refused for the last operator, the manager of default_tenant)."""
    try:
        deleted = _users(settings, db_url).delete(name)
    except ValueError as exc:
        click.echo(f"ERROR: {exc}", err=True)
        sys.exit(1)
    if not deleted:
        click.echo(f"ERROR: no user {name}", err=True)
        sys.exit(1)
    click.echo(f"User {name} deleted")
