"""The local ``Engine`` and the remote one are the same ``StackClient`` (``stoker/client.py``): every
call a command makes has the same parameters on both, so commands never ask which they hold."""

from __future__ import annotations

import inspect

import pytest

from stoker.cli.remote import RemoteEngine
from stoker.cli.remote_dsl import RemoteExecutions
from stoker.client import ExecutionClient, StackClient
from stoker.engine.engine import Engine
from stoker.workflows.executions import Executions

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _members(protocol: type) -> list[str]:
    return sorted(name for name, value in vars(protocol).items()
                  if not name.startswith("_") and (callable(value) or isinstance(value, property)))


def _mismatch(protocol: type, implementation: type, name: str) -> str | None:
    """Why ``implementation.name`` cannot stand where ``protocol.name`` is called (None: it can)."""
    wanted, found = getattr(protocol, name), getattr(implementation, name, None)
    if found is None:
        return "missing"
    if isinstance(wanted, property):
        return None if isinstance(found, property) else "not a property"
    given = list(inspect.signature(wanted).parameters.values())[1:]
    taken = list(inspect.signature(found).parameters.values())
    taken = taken[1:] if taken and taken[0].name in ("self", "engine") else taken
    kinds = {p.kind for p in taken}
    for index, parameter in enumerate(given):
        if parameter.kind in POSITIONAL:
            if index >= len(taken) or taken[index].name != parameter.name:
                return f"parameter {index} is not {parameter.name}"
            if (parameter.default is inspect.Parameter.empty) != (taken[index].default is inspect.Parameter.empty):
                return f"{parameter.name} is optional on one side only"
        elif parameter.kind not in kinds:
            return f"takes no {parameter.kind.description}"
    extra = [p for p in taken[len([p for p in given if p.kind in POSITIONAL]):]
             if p.kind in POSITIONAL and p.default is inspect.Parameter.empty]
    return f"needs more: {[p.name for p in extra]}" if extra else None


@pytest.mark.parametrize("protocol, implementation", [
    (StackClient, Engine), (StackClient, RemoteEngine),
    (ExecutionClient, Executions), (ExecutionClient, RemoteExecutions),
], ids=["engine", "remote-engine", "executions", "remote-executions"])
def test_both_clients_take_every_call_the_commands_make(protocol, implementation):
    problems = {name: why for name in _members(protocol) if (why := _mismatch(protocol, implementation, name))}
    assert problems == {}


def test_the_check_sees_a_client_that_differs():
    class Short:
        def delete_stack(self, name_or_id: str, wait: bool) -> dict:
            return {}

    assert _mismatch(StackClient, Short, "delete_stack") == "needs more: ['wait']"
    assert _mismatch(StackClient, Short, "show_stack") == "missing"


def test_a_remote_service_refuses_what_the_server_does_not_serve_in_one_line():
    from stoker.errors import StokerError

    remote = RemoteEngine("http://127.0.0.1:1/v1/p")
    with pytest.raises(StokerError, match="secrets is not served over --url yet"):
        remote.blueprints.secrets  # noqa: B018 - the read is the call
