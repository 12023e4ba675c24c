"""The ``stoker`` command: a thin shell over the template layer and ``stoker.Engine``."""

from __future__ import annotations

import atexit
import gc
import os

import click

from stoker.cli.group import StokerGroup
from stoker.workflows import rest_manager


class _Settings:
    """Global options; the engine is opened only by commands that need it."""

    def __init__(self, db_url: str | None, plugin_dirs: tuple[str, ...], broker: str | None = None):
        self.db_url = db_url
        self.plugin_dirs = plugin_dirs
        self.broker = broker
        #: set by ``--url`` (cli/remote.py): commands go to that server
        self.remote = None
        self._engine = None

    def engine(self):
        if self.remote is not None:
            return self.remote
        if self._engine is None:
            from stoker.template.loader import paused_gc

            # the engine's imports (SQLAlchemy's ~10 MB of code and classes) all live on:
            # the collector rescanning them while they load cost ~10 ms a command
            with paused_gc():
                from stoker.dispatch import dispatcher
                from stoker.engine.engine import Engine

            # each broken plug-in, once per command that looks a resource type up
            self._engine = Engine(db_url=self.db_url, plugin_dirs=self.plugin_dirs, dispatch=dispatcher(self.broker),
                                  warn=lambda problem: click.echo(f"WARNING: plug-in {problem}", err=True))
        return self._engine

    def close(self) -> None:
        """The command ended: its database connections go with it (a command run in-process, as
        tests and embedding programs do, would otherwise keep them open)."""
        if self._engine is not None:
            self._engine.close()


def _loopback_manager(broker: str | None):
    """The command's user runs what it likes here: executions a plugin starts may run scripts too
    (``stoker worker`` provides its own, held to the API's settings), where the command's own run
    (``--broker``: on the workers)."""
    from stoker.api.app import loopback_manager

    return loopback_manager(allow_local_resources=True, broker=broker)


@click.group(cls=StokerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db-url", envvar="STOKER_DB_URL", help="SQLAlchemy URL of the state database "
              "(default: SQLite in $STOKER_HOME).")
@click.option("--plugin-dir", "plugin_dirs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Folder of resource plug-ins; repeat for several.")
@click.option("--broker", default=None, help="Celery broker URL: stack actions and workflow executions run on "
              "`stoker worker` processes (default: $STOKER_BROKER_URL, then broker_url in stoker.conf; none: in-process).")
@click.option("--inventory", type=click.Path(dir_okay=False), default=None,
              help="Cloud inventory (flavors, images, networks...) that OpenStack constraints are checked "
              "against, and faults to inject (default: $STOKER_INVENTORY, then inventory in stoker.conf).")
@click.version_option(package_name="stoker")
@click.pass_context
def main(ctx: click.Context, db_url: str | None, plugin_dirs: tuple[str, ...], broker: str | None,
         inventory: str | None) -> None:
    """Stoker runs OpenStack Heat (HOT) templates locally, no cloud needed."""
    from stoker.limits import LimitSettingError, check_settings

    try:
        check_settings()
    except LimitSettingError as exc:
        click.echo(f"ERROR: {exc}", err=True)
        ctx.exit(1)
    ctx.obj = _Settings(db_url or os.environ.get("STOKER_DB_URL"), plugin_dirs, broker)
    ctx.call_on_close(ctx.obj.close)
    # plugin tasks run here reach the REST API on a loopback port
    rest_manager.provide(lambda: _loopback_manager(broker))
    if inventory is not None:
        os.environ["STOKER_INVENTORY"] = os.path.abspath(inventory)  # detached engines inherit it
    if inventory is not None or os.environ.get("STOKER_INVENTORY"):
        from stoker.resources.openstack.inventory import InventoryError, current

        try:
            current()  # a bad file is refused here, in one line, not deep inside an action
        except InventoryError as exc:
            raise click.ClickException(str(exc)) from None


#: each command's module, imported when the command runs (or help lists it): a command pays only for
#: its own imports (``stoker install`` imports none of the HOT, plug-in catalog or API machinery)
COMMANDS = {
    "template": ("template_cmds", "template"),
    "stack": ("stack_cmds", "stack", "abandon_cmds", "snapshot_cmds"),  # these two add ``stack snapshot|abandon...``
    "resource": ("resource_type_cmds", "resource"),
    "blueprint": ("blueprint_cmds", "blueprint"),
    "deployment": ("deployment_cmds", "deployment", "group_cmds"),  # group_cmds adds ``deployment group ...``
    "node": ("deployment_cmds", "node"),
    "node-instance": ("deployment_cmds", "node_instance"),
    "workflow": ("deployment_cmds", "workflow"),
    "plugin": ("plugin_cmds", "plugin"),
    "secret": ("secret_cmds", "secret"),
    "execution": ("execution_cmds", "execution", "group_cmds"),  # and ``execution group ...``
    "event": ("execution_cmds", "event"),
    "install": ("execution_cmds", "install"),
    "uninstall": ("execution_cmds", "uninstall"),
    "api": ("api_cmds", "api"),
    "worker": ("worker_cmds", "worker"),
    "token": ("api_cmds", "token"),
    "user": ("api_cmds", "user"),
    "user-group": ("user_group_cmds", "user_group"),
    "backup": ("backup_cmds", "backup"),
}
#: groups cfy users know by their plural too (``stoker blueprints list``): the same group under a second name
PLURAL = ("blueprint", "deployment", "node", "node-instance", "plugin", "secret", "execution", "event", "workflow")
for _name, (_module, _attribute, *_also) in COMMANDS.items():
    _entry = (f"stoker.cli.{_module}", _attribute, tuple(f"stoker.cli.{other}" for other in _also))
    main.lazy[_name] = _entry
    if _name in PLURAL:
        main.lazy[_name + "s"] = _entry

from stoker.cli.remote import install_remote  # noqa: E402

install_remote(main)


def run() -> None:
    """The ``stoker`` executable: ``main``, then a quick exit.

    At exit Python's collector would walk every object once more (~70 ms after
    a command, most of it SQLAlchemy's); the process ends anyway, so they are
    frozen out of its reach and left to the OS.  Registered first, the freeze
    runs after every other exit handler (tempfile and weakref finalizers too).
    """
    atexit.register(gc.freeze)
    main(prog_name="stoker")
