"""``stack create|update|delete`` without ``--wait``: the action goes on in an engine process of its own.

As ``openstack stack create`` returns once the stack is ``CREATE_IN_PROGRESS``,
the command starts ``python -m stoker.cli.detached`` (``sys.executable``: no
``stoker`` on PATH needed), hands it the request on stdin and returns as soon
as that process reports that the action has started, or fails with the error
it reports (an invalid template, a name taken, a stack held by another action)
exactly as the action run in the command would.  The engine process forks once
more and goes on in a session of its own: it survives the command, the
terminal and Ctrl-C, and holds the stack's lock (with heartbeats) until the
action ends.  ``stack cancel`` and ``stack delete`` reach it through the store.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

import click

from stoker.errors import Conflict, NotFound, Problem, StokerError, ValidationFailed

if TYPE_CHECKING:  # pragma: no cover
    from stoker.started import Started

#: errors that come back as themselves; any other is reported as a StokerError
KNOWN_ERRORS = {cls.__name__: cls for cls in (Conflict, NotFound, StokerError)}


def start(db_url: str | None, plugin_dirs: tuple[str, ...], verb: str, name: str,
          inputs: tuple = (), options: dict | None = None) -> dict:
    """Start ``engine.<verb>_stack(name, *inputs loaded, **options)`` in a detached engine
    process; return the stack (``stack_summary``) once the action shows, or raise what stopped it."""
    request = {"db_url": db_url, "plugin_dirs": list(plugin_dirs), "verb": verb, "name": name,
               "inputs": list(inputs), "options": options or {}}
    proc = subprocess.Popen([sys.executable, "-m", "stoker.cli.detached"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    out, err = proc.communicate(json.dumps(request).encode("utf-8"))
    lines = out.decode("utf-8", "replace").strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise StokerError("the engine process ended before the action started: "
                          + (err.decode("utf-8", "replace").strip()[-2000:] or f"exit status {proc.returncode}"))
    return _outcome(report)


#: signals that stop a command running an action itself (``--wait``): a kill, a closed terminal
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
#: the verb of a request to go on with an action another engine handed back
TAKE_OVER = "take_over"


@contextmanager
def handed_over_on_stop(engine: Any, name: str, settings: Any) -> Iterator[None]:
    """While this command runs an action itself: SIGTERM or SIGHUP hands the action back, as a
    stopping server does (the stack stays in progress, its resources' polls kept), and an engine
    process of its own takes it over and finishes it; then the command exits 128 + the signal."""
    received: list[int] = []

    def stop(signum: int, _frame: Any) -> None:
        received.append(signum)
        engine.stopping.set()

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not received:
        return
    signame = signal.Signals(received[0]).name
    try:
        if engine.get_record(name).status == "IN_PROGRESS":
            start(settings.db_url, settings.plugin_dirs, TAKE_OVER, name)
            click.echo(f"WARNING: stopped by {signame}: the action goes on in an engine process of its "
                       f"own (`stoker stack show {name}`)", err=True)
    except (StokerError, OSError) as exc:
        click.echo(f"ERROR: stopped by {signame}: the action was handed back, and the next action "
                   f"on {name} takes it over ({exc})", err=True)
    sys.exit(128 + received[0])


def _outcome(report: dict) -> dict:
    if "problems" in report:
        raise ValidationFailed([Problem(**{**p, "path": tuple(p["path"])}) for p in report["problems"]])
    if "usage" in report:
        error = click.ClickException(report["usage"])
        error.exit_code = report.get("exit_code", 2)
        raise error
    if "error" in report:
        raise KNOWN_ERRORS.get(report["error"], StokerError)(report["message"])
    return report["stack"]


# -- the engine process ----------------------------------------------------------------------
def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    if os.fork() > 0:  # the command reaps this one; the grandchild goes on alone
        os._exit(0)
    started = None
    try:
        started = _begin(request)
        report: dict[str, Any] = {"stack": started.state()}
    except ValidationFailed as exc:
        report = {"problems": [{**dataclasses.asdict(p), "path": list(p.path)}
                               for p in exc.problems + exc.warnings]}
    except click.ClickException as exc:
        report = {"usage": exc.format_message(), "exit_code": exc.exit_code}
    except StokerError as exc:
        report = {"error": type(exc).__name__, "message": str(exc)}
    except Exception as exc:  # noqa: BLE001 - reported to the command, never a traceback
        report = {"error": "StokerError", "message": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    sys.stdout.flush()
    _let_go_of_the_command()
    if started is not None:  # the action's thread to its end (how it ended is in the store)
        from concurrent import futures

        futures.wait([started.future])


def _begin(request: dict) -> Started:
    """The request's action under way (``Engine.begin``); its inputs are loaded in the action, so
    that their errors come back as the command's own would."""
    from stoker.cli.template_options import load_inputs
    from stoker.engine import starting
    from stoker.engine.engine import Engine
    from stoker.started import in_thread

    engine = Engine(db_url=request["db_url"], plugin_dirs=request["plugin_dirs"])
    verb, name, options = request["verb"], request["name"], request["options"]

    def action(copy: Engine) -> Any:
        if verb == TAKE_OVER:
            return copy.resume_abandoned(copy.get_record(name))
        loaded = load_inputs(*request["inputs"]) if request["inputs"] else ()
        return getattr(copy, f"{verb}_stack")(name, *loaded, **options)

    started = starting.begin(engine, action, in_thread)
    if started.id is None:  # it ended without showing (nothing to take over): the stack as it is
        started.show(engine.get_record(name, show_deleted=True).id)
    return started


def _let_go_of_the_command() -> None:
    """Close the pipes to the command (it reads them to their end) and stdin."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    main()
