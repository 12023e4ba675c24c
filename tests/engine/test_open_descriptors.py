"""A process that runs many projects' actions or many commands keeps its descriptors flat.

An engine acting for many projects (the API server, a worker) opens its database once:
``Engine.for_project`` copies the engine for one request's project; the copies must share the
one connection pool, or each copy of an engine whose database was not opened yet opens a pool of
its own and its connections stay open after the copy is gone — a long-running server (or a test
process) then runs out of file descriptors.  And a ``stoker`` command run in-process (tests,
programs embedding the CLI) closes the database it opened when it ends.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from stoker.cli import main
from stoker.engine.engine import Engine

ONE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")


@needs_proc
def test_per_project_copies_share_one_database(tmp_path):
    engine = Engine(db_url=f"sqlite:///{tmp_path / 'stoker.db'}")
    try:
        first = engine.for_project("p0")
        first.create_stack("s", ONE)
        before = _open_descriptors()
        for index in range(1, 40):
            project = engine.for_project(f"p{index}")
            project.create_stack("s", ONE)
            assert [stack["stack_name"] for stack in project.list_stacks()] == ["s"]
            assert project.store is first.store
        assert _open_descriptors() <= before
    finally:
        engine.close()


@needs_proc
def test_commands_run_in_process_close_their_database(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    template = tmp_path / "one.yaml"
    template.write_text("heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::None}\n")
    runner = CliRunner()

    def stoker(*args: str) -> str:
        done = runner.invoke(main, list(args), catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done.output

    stoker("stack", "create", "s0", "-t", str(template), "--wait")
    before = _open_descriptors()
    for index in range(1, 20):
        stoker("stack", "create", f"s{index}", "-t", str(template), "--wait")
        assert f"s{index}" in stoker("stack", "list")
    assert _open_descriptors() <= before


@needs_proc
@pytest.mark.sqlite_only
def test_a_pool_thread_keeps_one_event_loop_for_its_actions_and_closes_it_when_it_ends(engine):
    """A server's action thread runs action after action on one event loop (not a new one each
    time); what an action leaves running is cancelled as ``asyncio.run`` would; the loop and its
    descriptors go when the thread ends."""
    import asyncio

    from stoker.engine import running
    from stoker.engine.group_commit import LingeringThreads

    engine.create_stack("warm", ONE)
    before = _open_descriptors()
    loops = []

    async def leaves_a_task() -> None:
        loops.append(asyncio.get_running_loop())
        asyncio.get_running_loop().create_task(asyncio.sleep(3600))

    pool = LingeringThreads("stoker-action", 1)
    for index in range(3):
        pool.submit(engine.create_stack, f"s{index}", ONE).result()
        pool.submit(running.run, leaves_a_task()).result()
    assert len(loops) == 3 and all(loop is loops[0] for loop in loops)
    assert not asyncio.all_tasks(loops[0]) and not loops[0].is_closed()
    assert [s["stack_status"] for s in engine.list_stacks()] == ["CREATE_COMPLETE"] * 4
    pool.shutdown(wait=True)
    assert loops[0].is_closed()
    assert _open_descriptors() <= before
