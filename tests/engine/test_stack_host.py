"""``Engine`` is what ``StackHost`` says a stack's host is, and what ``ActionHost`` says a dispatcher
drives: every member, with the same parameters.

The Protocol is only read by type checkers; this keeps it true to the class it describes.
"""

from __future__ import annotations

import inspect

import pytest

from stoker.engine.engine import Engine
from stoker.engine.host import ActionHost, StackHost


def _members(protocol: type) -> dict[str, object]:
    names = set(protocol.__annotations__) | {n for n, v in vars(protocol).items() if inspect.isfunction(v)}
    return {name: getattr(protocol, name, None) for name in names if not name.startswith("_")}


@pytest.mark.parametrize("protocol", [StackHost, ActionHost])
def test_the_engine_has_every_member_of_the_protocol(tmp_path, protocol):
    engine = Engine(db_url=f"sqlite:///{tmp_path / 's.db'}")
    try:
        for name, declared in _members(protocol).items():
            assert hasattr(engine, name), name
            if inspect.isfunction(declared):
                wanted = list(inspect.signature(declared).parameters)[1:]
                assert list(inspect.signature(getattr(engine, name)).parameters) == wanted, name
    finally:
        engine.close()
