"""``stoker worker``: a Celery worker process running Stoker's resource actions."""

from __future__ import annotations

import os

import click

from stoker.cli.group import pass_settings


@click.command("worker")
@click.option("--db-url", "db_url", default=None, help="State database, PostgreSQL (default: the global --db-url).")
@click.option("--broker", default=None, help="Celery broker URL, e.g. amqp://guest:guest@HOST:5672// or "
              "redis://HOST:6379/0 (default: $STOKER_BROKER_URL, then broker_url in stoker.conf).")
@click.option("--concurrency", default=None, type=click.IntRange(1, 256),
              help="Processes running tasks at once (default: the number of CPUs).")
@click.option("--queues", default=None, help="Comma-separated queues to take work from (default: stoker).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="warning", show_default=True)
@pass_settings
def worker(settings, db_url, broker, concurrency, queues, log_level):
    """Run resource actions of stacks started with a broker (`stoker --broker ... stack create`, `stoker api`).

    Start one or more on every machine; they share the PostgreSQL database and the broker.
    """
    from stoker.api.app import loopback_manager
    from stoker.dispatch import broker_url, queue_name
    from stoker.dispatch.distributed import check_database
    from stoker.dispatch.worker import make_worker_app
    from stoker.engine.engine import Engine
    from stoker.workflows import rest_manager

    url = db_url or getattr(settings, "db_url", None) or os.environ.get("STOKER_DB_URL")
    broker = broker_url(broker)
    if not url or broker is None:
        raise click.UsageError("stoker worker needs --db-url (PostgreSQL) and --broker "
                               "(or $STOKER_DB_URL and $STOKER_BROKER_URL)")
    plugin_dirs = tuple(getattr(settings, "plugin_dirs", ()) or ())
    probe = Engine(db_url=url, plugin_dirs=plugin_dirs)  # migrate once, before the processes fork
    try:
        check_database(probe)
    except Exception as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        probe.close()
    app = make_worker_app(broker, url, plugin_dirs)
    # executions a plugin starts through its REST client follow the API's settings ([api] in stoker.conf)
    # and run on the workers, as the API's do: enqueued to the first queue this worker takes
    first_queue = queue_name(queues).split(",")[0]
    rest_manager.provide(lambda: loopback_manager(allow_local_resources=False, broker=broker, queue=first_queue))
    argv = ["worker", "--queues", queue_name(queues), "--loglevel", log_level.upper(), "--pool", "prefork",
            "--without-gossip", "--without-mingle", "--hostname", f"stoker-{os.getpid()}@%h"]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    app.worker_main(argv)
