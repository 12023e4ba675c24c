"""``workflows.rest_manager``: a process's REST manager is built once, and one that is replaced is
closed (each ``stoker`` command run in one process provides anew; the loopback server the previous
one started must not serve on, a thread nobody can reach)."""

from __future__ import annotations

from stoker.workflows import rest_manager


class _Manager:
    def __init__(self) -> None:
        self.closed = False

    def grant(self, store, project_id, purpose):  # noqa: ARG002 - the protocol's signature
        raise AssertionError("not used here")

    def release(self, store, access):  # noqa: ARG002
        raise AssertionError("not used here")

    def close(self) -> None:
        self.closed = True


def test_a_replaced_manager_is_closed_and_the_new_one_built_on_first_use():
    built: list[_Manager] = []

    def make() -> _Manager:
        built.append(_Manager())
        return built[-1]

    try:
        rest_manager.provide(make)
        first = rest_manager.current()
        assert rest_manager.current() is first and len(built) == 1
        rest_manager.provide(make)
        assert first.closed
        second = rest_manager.current()
        assert second is not first and not second.closed
    finally:
        rest_manager.stop()
    assert second.closed
