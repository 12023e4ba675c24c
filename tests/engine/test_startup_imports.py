"""A command loads only what it uses: start-up is most of a small command's time.

Each case runs the real ``stoker`` entry point (``python -m stoker``) in a new
process and reports which modules it ended up importing; heavy libraries that
only some commands need must be absent from the others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: libraries a local `stack create` on SQLite with JSON output never needs
NOT_FOR_A_LOCAL_CREATE = ("sqlalchemy.orm", "yaql", "urllib.request", "http.client", "sqlalchemy.dialects.postgresql",
                          "rich", "alembic", "fastapi", "uvicorn", "celery")

#: runs `python -m stoker ARGS`, then prints the modules it imported (as JSON, on stdout's last line)
PROBE = """
import atexit, json, sys, runpy
atexit.register(lambda: print(json.dumps(sorted(sys.modules))))
sys.argv = ["stoker", *sys.argv[1:]]
runpy.run_module("stoker", run_name="__main__", alter_sys=True)
"""


def _imported(tmp_path: Path, template: str, *args: str, wait: bool = True) -> set[str]:
    (tmp_path / "t.yaml").write_text(template)
    env = {**os.environ, "STOKER_HOME": str(tmp_path / "home")}
    env.pop("STOKER_DB_URL", None)
    done = subprocess.run([sys.executable, "-c", PROBE, "stack", "create", "s", "-t", str(tmp_path / "t.yaml"),
                           *(["--wait"] if wait else []), "-f", "json", *args],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if wait:
        assert "CREATE_COMPLETE" in done.stderr
    else:
        assert json.loads(done.stdout.strip().rsplit("\n", 1)[0])["stack_status"] == "CREATE_IN_PROGRESS"
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _loaded(modules: set[str], library: str) -> bool:
    return any(m == library or m.startswith(library + ".") for m in modules)


def test_a_local_create_imports_no_library_it_does_not_use(tmp_path):
    modules = _imported(tmp_path, "heat_template_version: 2018-08-31\nresources:\n  a:\n    type: OS::Heat::None\n")
    assert "sqlalchemy.engine" in modules  # the probe sees the command's imports
    assert [lib for lib in NOT_FOR_A_LOCAL_CREATE if _loaded(modules, lib)] == []


def test_a_table_into_a_pipe_is_drawn_without_rich(tmp_path):
    modules = _imported(tmp_path, "heat_template_version: 2018-08-31\nresources:\n  a:\n    type: OS::Heat::None\n",
                        "-f", "table")
    assert not _loaded(modules, "rich")


def test_a_json_template_needs_no_yaml_parser(tmp_path):
    modules = _imported(tmp_path, '{"heat_template_version": "2018-08-31", "resources": {"a": {"type": "OS::Heat::None"}}}')
    assert [lib for lib in ("yaml", "ryml") if _loaded(modules, lib)] == []


def test_a_template_that_calls_yaql_loads_it(tmp_path):
    template = ("heat_template_version: 2018-08-31\noutputs:\n  n:\n"
                "    value: {yaql: {expression: '$.data.x + 1', data: {x: 1}}}\n"
                "resources:\n  a:\n    type: OS::Heat::None\n")
    assert _loaded(_imported(tmp_path, template), "yaql")


def test_a_create_without_wait_leaves_the_database_to_the_engine_process(tmp_path):
    """The command only starts the engine process and prints what it reports: no SQLAlchemy,
    no thread pool, no archive or packaging modules (other commands' imports) in its start."""
    modules = _imported(tmp_path, '{"heat_template_version": "2018-08-31", "resources": {"a": {"type": "OS::Heat::None"}}}',
                        wait=False)
    assert "stoker.cli.detached" in modules  # the probe sees the command's imports
    assert [lib for lib in ("sqlalchemy", "concurrent.futures", "tarfile", "packaging") if _loaded(modules, lib)] == []
