"""``Stoker::Local::Command``: shell commands run on the machine running Stoker."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any, Callable

from stoker.constraints import Range
from stoker.errors import StokerError
from stoker.resources import attributes, processes, properties
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus

PROPERTIES = (CREATE_CMD, UPDATE_CMD, DELETE_CMD, ENVIRONMENT, CWD, TIMEOUT, TRIGGERS) = (
    "create", "update", "delete", "environment", "cwd", "timeout", "triggers",
)
OUTPUTS = (STDOUT, STDERR, EXIT_CODE) = ("stdout", "stderr", "exit_code")
#: changes to these run the update command; the others are only remembered
RERUN_ON = (CREATE_CMD, UPDATE_CMD, ENVIRONMENT, CWD, TRIGGERS)
#: how much of stdout/stderr is kept (the end of it), and shown in a failure
KEEP_CHARS, REASON_CHARS = 1_000_000, 2000


class CommandFailed(StokerError):
    code = "command-failed"


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False


def run_command(command: str, env: dict[str, str], cwd: str | None, timeout: float,
                started: Callable[[subprocess.Popen, dict], None] = lambda proc, record: None) -> Outcome:
    """Run ``command`` with ``/bin/sh -c``; after ``timeout`` seconds kill it
    and everything it started (it runs in a process group of its own).
    ``started`` is given the process and its record (``processes.start``),
    so that others can kill it too."""
    proc, record = processes.start(["/bin/sh", "-c", command], env, cwd)
    started(proc, record)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc)
        out, err = proc.communicate()
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    return Outcome(proc.returncode, _text(out), _text(err), timed_out)


def kill_group(proc: subprocess.Popen) -> None:
    processes.kill_group(proc.pid)


def _text(output: bytes) -> str:
    return output.decode("utf-8", "replace")[-KEEP_CHARS:]


def _env_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class LocalCommand(Resource):
    """Runs shell commands on the local machine when it is created, updated, deleted.

    ``create`` runs on create; ``update`` (default: ``create`` again) runs
    when the commands, ``environment``, ``cwd`` or ``triggers`` change, so
    changing ``triggers`` forces a re-run; ``delete`` runs on delete.  A
    non-zero exit or a timeout fails the resource.  The attributes hold the
    output and exit code of the last command run.
    """

    support_status = SupportStatus(version="1.0.0")
    acts_on_host = True
    run_in_thread = True  # the handlers wait for the command

    properties_schema = {
        CREATE_CMD: properties.Schema(
            properties.Schema.STRING, "Command run by /bin/sh -c when the resource is created.",
            required=True, update_allowed=True,
        ),
        UPDATE_CMD: properties.Schema(
            properties.Schema.STRING,
            "Command run on update (default: the create command).", update_allowed=True,
        ),
        DELETE_CMD: properties.Schema(
            properties.Schema.STRING, "Command run when the resource is deleted.",
            update_allowed=True,
        ),
        ENVIRONMENT: properties.Schema(
            properties.Schema.MAP,
            "Variables added to the commands' environment (values that are not strings "
            "are passed as JSON).",
            default={}, update_allowed=True,
        ),
        CWD: properties.Schema(
            properties.Schema.STRING,
            "Directory the commands run in (default: Stoker's working directory).",
            update_allowed=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.NUMBER, "Seconds a command may run before it is killed.",
            default=300, update_allowed=True, constraints=[Range(min=0.1)],
        ),
        TRIGGERS: properties.Schema(
            properties.Schema.ANY,
            "Any value; changing it re-runs the update command.", update_allowed=True,
        ),
    }

    attributes_schema = {
        STDOUT: attributes.Schema("Standard output of the last command run.",
                                  type=attributes.Schema.STRING),
        STDERR: attributes.Schema("Standard error of the last command run.",
                                  type=attributes.Schema.STRING),
        EXIT_CODE: attributes.Schema("Exit code of the last command run "
                                     "(negative: killed by that signal).",
                                     type=attributes.Schema.INTEGER),
    }

    _process: subprocess.Popen | None = None  # the command running now, if any

    def handle_create_cancel(self, token: Any) -> None:
        """The stack action was cancelled or timed out (Heat's ``handle_<action>_cancel``): the
        command running is killed, so the handler waiting for it ends."""
        if self._process is not None:
            kill_group(self._process)

    handle_update_cancel = handle_delete_cancel = handle_create_cancel

    def _run(self, command: str, which: str) -> None:
        env = dict(os.environ)
        env.update({str(k): _env_value(v) for k, v in (self.properties[ENVIRONMENT] or {}).items()})
        timeout = self.properties[TIMEOUT]
        try:
            outcome = run_command(command, env, self.properties[CWD], timeout, started=self._started)
        finally:
            self._process = None
            self.data_delete(processes.PROCESS_KEY)
        for key in OUTPUTS:
            self.data_set(key, getattr(outcome, key))
        if outcome.timed_out:
            raise CommandFailed(f"the {which} command timed out after {timeout:g} seconds "
                                f"and was killed{_tail(outcome.stderr)}")
        if outcome.exit_code != 0:
            raise CommandFailed(f"the {which} command exited with status "
                                f"{outcome.exit_code}{_tail(outcome.stderr)}")

    def _started(self, proc: subprocess.Popen, record: dict) -> None:
        """Keep the running command, here and in the store (for whoever takes over if we die)."""
        self._process = proc
        self.data_set(processes.PROCESS_KEY, record)

    def handler_cut_short(self) -> bool:
        """A command still recorded: its handler's process died while it ran (``_run`` forgets it)."""
        return processes.PROCESS_KEY in self.data()

    def handle_create(self) -> None:
        self.resource_id_set(self.physical_resource_name())
        self._run(self.properties[CREATE_CMD], CREATE_CMD)

    def handle_update(self, json_snippet: Any, tmpl_diff: dict, prop_diff: dict) -> None:
        if any(name in prop_diff for name in RERUN_ON):
            command = self.properties[UPDATE_CMD]
            self._run(command or self.properties[CREATE_CMD], UPDATE_CMD if command else CREATE_CMD)

    def handle_delete(self) -> None:
        if self.properties[DELETE_CMD]:
            self._run(self.properties[DELETE_CMD], DELETE_CMD)

    def _resolve_attribute(self, name: str) -> Any:
        return self.data().get(name) if name in OUTPUTS else None


def _tail(stderr: str) -> str:
    stderr = stderr.strip()
    if not stderr:
        return ""
    if len(stderr) > REASON_CHARS:
        stderr = "..." + stderr[-REASON_CHARS:]
    return f": {stderr}"


def resource_mapping() -> dict:
    return {"Stoker::Local::Command": LocalCommand}
