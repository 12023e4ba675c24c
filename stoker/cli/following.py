"""Following an execution to its end: its events printed as they land (with ``--wait``), Ctrl-C asking it to
stop and, the second time, killing its scripts; ``execution start|resume``, ``install`` and ``deployment update``
follow theirs this way."""

from __future__ import annotations

import contextlib
import os
import sys

from stoker.errors import StokerError

#: events a follower reads and prints at once (bounded memory, however long the execution)
FOLLOW_PAGE = 5000
#: events a follower may be behind before it skips to the newest page (following costs what the execution costs)
FOLLOW_BACKLOG = 20_000
#: how often a follower looks for new events and the execution's end
FOLLOW_INTERVAL = 0.2
STYLES = {"task_failed": "red", "workflow_failed": "red", "task_succeeded": "green",
          "workflow_succeeded": "green", "task_rescheduled": "yellow", "workflow_cancelled": "yellow"}


def follow(service, started, deployment_id: str, wait: bool) -> dict:
    """Wait for the execution's end, printing its events as they land (with ``wait``); Ctrl-C asks
    it to stop, a second Ctrl-C kills its scripts."""
    console = _terminal_console()
    show_new = _new_lines(service, started.id, deployment_id, console) if wait else (lambda: None)
    interrupts = 0
    while True:
        try:
            return started.follow(show_new, FOLLOW_INTERVAL)
        except KeyboardInterrupt:
            interrupts += 1
            _say(console, "Cancelling the execution" + (" (killing its scripts)" if interrupts > 1 else
                                                        "; Ctrl-C again to kill its running scripts"))
            with contextlib.suppress(StokerError):  # it ended meanwhile: nothing to cancel
                service.cancel(started.id, force=interrupts > 1)


def _terminal_console():
    """rich's console on stderr when stderr is a terminal as rich tells (``TTY_COMPATIBLE``,
    ``FORCE_COLOR``, then ``isatty``); None when rich would print plain text anyway: the lines are
    then written as they are, and rich is not imported (~15 ms of a command's start)."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible == "0" or (tty_compatible != "1" and os.environ.get("FORCE_COLOR") is None
                                 and not sys.stderr.isatty()):
        return None
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 250)
    return console if console.is_terminal else None


def _say(console, text: str) -> None:
    """One message to stderr: through rich on a terminal, as it is elsewhere."""
    if console is not None:
        console.print(text)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _new_lines(service, execution_id: str, deployment_id: str, console):
    """What prints the execution's events and logs not printed yet, a page at a time (far behind:
    it skips to the last page, saying so)."""
    printed = 0

    def show_new() -> None:
        nonlocal printed
        behind = service.count_events(execution_id, include_logs=True) - printed
        if behind > FOLLOW_BACKLOG:
            _skip_note(console, behind - FOLLOW_PAGE, execution_id)
            printed += behind - FOLLOW_PAGE
        while True:
            events = service.event_lines(execution_id, since=printed, limit=FOLLOW_PAGE)
            _print_events(console, events, deployment_id)
            printed += len(events)
            if len(events) < FOLLOW_PAGE:
                return

    return show_new


def _print_events(console, events: list[dict], deployment_id: str) -> None:
    """Events as lines, written at once: coloured on a terminal, plain text (cheap) elsewhere."""
    if not events:
        return
    if console is None:
        sys.stderr.write("".join(line(event, deployment_id) + "\n" for event in events))
        sys.stderr.flush()
        return
    from rich.markup import escape

    lines = []
    for event in events:
        style = STYLES.get(event["event_type"] or "", "red" if event["level"] == "error" else "")
        text = escape(line(event, deployment_id))
        lines.append(f"[{style}]{text}[/]" if style else text)
    console.print("\n".join(lines))


def _skip_note(console, skipped: int, execution_id: str) -> None:
    note = (f"... {skipped} events not shown, to keep up with the execution "
            f"(stoker event list -e {execution_id} --include-logs lists them)")
    if console is not None:
        console.print(note, style="yellow", markup=False)
    else:
        sys.stderr.write(note + "\n")


def running(execution: dict) -> bool:
    from stoker.store.models import ACTIVE_EXECUTION

    return execution["status"] in ACTIVE_EXECUTION


def line(event: dict, deployment_id: str) -> str:
    where = event["node_instance_id"] or ""
    if event["operation"] and where:
        where += "." + event["operation"].rsplit(".", 1)[-1]
    label = event["event_type"] if event["type"] == "cloudify_event" else (event["level"] or "info").upper()
    return f"{event['timestamp']}  {label:<18} <{deployment_id}> [{where}] {event['message']}"
