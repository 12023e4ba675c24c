"""Engine scale benchmark, whole-process: `stoker stack create|update|delete` as a user runs them.

    python bench/scale.py                          # the whole table (~4 min on 2 busy cores)
    python bench/scale.py --shapes chain --sizes 10000 --dbs sqlite --waits wait
    python bench/scale.py --no-also                # without the latency/update rows
    python bench/scale.py --pg-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres

Every case is a fresh ``$STOKER_HOME`` (SQLite) or a fresh PostgreSQL database, and every command
a fresh process, so the times include Python's start, imports and opening the database.
``flat`` is N independent ``OS::Heat::None``; ``chain`` makes each depend on the one before.
``update`` changes one property of one resource; ``nowait`` runs the commands without
``--wait`` and waits for the stack's action to end (reading its row), so a command that
hands the action to another process is timed to the end too.  Peak MB is the largest
peak RSS of the case's processes.  Then, unless ``--no-also``:
* latency: 10 layers x 100 ``OS::Heat::TestResource`` waiting 1 s (critical path 10 s), and
  10,000 waiting 1 s at once, with the most threads the engine process had;
* update one / all properties of a 1,000-resource stack of ``OS::Heat::Value``.
``bench/engine_scale.py`` times the engine alone, in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

STOKER = [sys.executable, "-m", "stoker"]
PG_ADMIN = os.environ.get("STOKER_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
#: the scratch databases' name prefix (a shared server: each user's own)
DB_PREFIX = os.environ.get("STOKER_BENCH_DB_PREFIX", "stoker_bench")
#: short type names keep a 10,000-resource chain under Heat's 512 KiB template limit
ENVIRONMENT = {"resource_registry": {"N": "OS::Heat::None", "T": "OS::Heat::TestResource",
                                     "V": "OS::Heat::Value"}}


# -- templates ----------------------------------------------------------------------------
def shaped(shape: str, n: int, gen: int = 0) -> dict:
    """``n`` None resources, flat or in a chain; ``gen`` is the first one's property."""
    resources = {}
    for i in range(n):
        res: dict = {"type": "N"}
        if i == 0:
            res["properties"] = {"gen": gen}
        if shape == "chain" and i:
            res["depends_on"] = f"r{i - 1}"
        resources[f"r{i}"] = res
    return {"heat_template_version": "2018-08-31", "resources": resources}


def layered_waits(layers: int, per: int) -> dict:
    resources = {}
    for layer in range(layers):
        for j in range(per):
            res: dict = {"type": "T", "properties": {"wait_secs": 1}}
            if layer:
                res["depends_on"] = f"r{layer - 1}_{j}"
            resources[f"r{layer}_{j}"] = res
    return {"heat_template_version": "2018-08-31", "resources": resources}


def values(n: int, changed: int) -> dict:
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "V", "properties": {"value": f"v{i}-{int(i < changed)}"}}
                          for i in range(n)}}


# -- running commands -----------------------------------------------------------------------
class Case:
    """A fresh database, and the stoker commands run against it."""

    def __init__(self, db: str, pg_admin: str):
        self.home = Path(tempfile.mkdtemp(prefix="stoker-bench-"))
        self.env = {**os.environ, "STOKER_HOME": str(self.home)}
        self.env.pop("STOKER_DB_URL", None)
        # an installed Stoker has its bytecode compiled; recompiling each run is not its cost
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.pg_admin, self.pg_name = pg_admin, None
        if db == "postgresql":
            self.pg_name = f"{DB_PREFIX}_{uuid.uuid4().hex[:10]}"
            with _admin(pg_admin) as conn:
                conn.execute(text(f'CREATE DATABASE "{self.pg_name}"'))
            url = make_url(pg_admin).set(database=self.pg_name).render_as_string(hide_password=False)
            self.env["STOKER_DB_URL"] = url
        self.url = self.env.get("STOKER_DB_URL") or f"sqlite:///{self.home / 'stoker.db'}"
        (self.home / "env.json").write_text(json.dumps(ENVIRONMENT))
        self.peak_mb = 0.0
        self.threads = 0
        #: CPU seconds (user + system) of the last command's process
        self.cpu = 0.0

    def file(self, name: str, data: dict) -> str:
        path = self.home / name
        path.write_text(json.dumps(data, separators=(",", ":")))
        return str(path)

    def run(self, *args: str, wait: bool = True, stack: str | None = None) -> float:
        """Seconds until the command and the action it started have ended."""
        argv = [*STOKER, *args] + (["--wait"] if wait else [])
        log = self.home / "stderr.log"
        start = time.perf_counter()
        with log.open("wb") as err:
            proc = subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=err)
            threads = 0
            while True:  # wait4: this process's own peak RSS, not the largest child's so far
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                threads = max(threads, _threads(proc.pid))
                time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"stoker {' '.join(args)} failed: {log.read_text(errors='replace').strip()[-800:]}")
        if not wait and stack:
            self._until_done(stack)
        elapsed = time.perf_counter() - start
        self.threads = max(self.threads, threads)
        self.peak_mb = max(self.peak_mb, usage.ru_maxrss / 1024)
        self.cpu = usage.ru_utime + usage.ru_stime
        return elapsed

    def timed(self, *args: str, **kwargs) -> str:
        """``wall (cpu)`` seconds of one command, as the table shows them."""
        wall = self.run(*args, **kwargs)
        return f"{wall:5.2f} ({self.cpu:4.2f})"

    def _until_done(self, stack: str) -> None:
        engine = create_engine(self.url)
        try:
            while True:
                with engine.connect() as conn:
                    row = conn.execute(text("SELECT status FROM stack WHERE name = :n ORDER BY created_at DESC"),
                                       {"n": stack}).first()
                if row is None or row[0] != "IN_PROGRESS":
                    return
                time.sleep(0.02)
        finally:
            engine.dispose()

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        if self.pg_name:
            with _admin(self.pg_admin) as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{self.pg_name}" WITH (FORCE)'))


def _admin(url: str):
    return create_engine(url, isolation_level="AUTOCOMMIT").connect()


def _threads(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# -- the cases --------------------------------------------------------------------------------
def table_case(shape: str, n: int, db: str, wait: bool, pg_admin: str) -> dict:
    """create, update one property, delete: each a fresh process; create on a new database."""
    case = Case(db, pg_admin)
    try:
        env = ["-e", str(case.home / "env.json")]
        v1, v2 = case.file("v1.json", shaped(shape, n)), case.file("v2.json", shaped(shape, n, gen=1))
        return {
            "create": case.timed("stack", "create", "s", "-t", v1, *env, wait=wait, stack="s"),
            "update": case.timed("stack", "update", "s", "-t", v2, *env, wait=wait, stack="s"),
            "delete": case.timed("stack", "delete", "s", "--yes", wait=wait, stack="s"),
            "peak_mb": case.peak_mb,
        }
    finally:
        case.close()


def latency_case(label: str, template: dict, db: str, pg_admin: str, critical: float) -> str:
    case = Case(db, pg_admin)
    try:
        t = case.file("t.json", template)
        created = case.run("stack", "create", "s", "-t", t, "-e", str(case.home / "env.json"))
        return (f"{label:34} {db:10} create {created:6.2f} s (cpu {case.cpu:.2f}; critical path {critical:g} s, "
                f"+{(created / critical - 1) * 100:.0f}%), at most {case.threads} threads, "
                f"peak {case.peak_mb:.0f} MB")
    finally:
        case.close()


def update_case(db: str, pg_admin: str, n: int = 1000) -> str:
    case = Case(db, pg_admin)
    try:
        env = ["-e", str(case.home / "env.json")]
        case.run("stack", "create", "s", "-t", case.file("v0.json", values(n, 0)), *env)
        one = case.timed("stack", "update", "s", "-t", case.file("v1.json", values(n, 1)), *env)
        every = case.timed("stack", "update", "s", "-t", case.file("v2.json", values(n, n)), *env)
        return f"{'update 1,000 OS::Heat::Value':34} {db:10} one property {one} s, all of them {every} s"
    finally:
        case.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="+", choices=["flat", "chain"], default=["flat", "chain"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 1000, 10000])
    parser.add_argument("--dbs", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"])
    parser.add_argument("--waits", nargs="+", choices=["wait", "nowait"], default=["wait", "nowait"])
    parser.add_argument("--no-also", dest="also", action="store_false", help="skip latency and update rows")
    parser.add_argument("--pg-url", default=PG_ADMIN, help="a PostgreSQL server to make databases on")
    args = parser.parse_args()
    warm_up = Case("sqlite", args.pg_url)  # writes the bytecode caches the first run would
    warm_up.run("stack", "create", "s", "-t", warm_up.file("t.json", shaped("flat", 1)),
                "-e", str(warm_up.home / "env.json"))
    warm_up.close()
    print("seconds wall (cpu: user + system of the command's process); each command a new process")
    print(f"{'shape':6} {'n':>6} {'db':10} {'mode':6} {'create':>12} {'update':>12} {'delete':>12} "
          f"{'peak MB':>8}", flush=True)
    for db in args.dbs:
        for shape in args.shapes:
            for n in args.sizes:
                for mode in args.waits:
                    t = table_case(shape, n, db, mode == "wait", args.pg_url)
                    print(f"{shape:6} {n:>6} {db:10} {mode:6} {t['create']:>12} {t['update']:>12} "
                          f"{t['delete']:>12} {t['peak_mb']:8.0f}", flush=True)
    if not args.also:
        return
    for db in args.dbs:
        print(latency_case("10 layers x 100 waiting 1 s", layered_waits(10, 100), db, args.pg_url, 10.0),
              flush=True)
        print(latency_case("10,000 waiting 1 s at once", layered_waits(1, 10000), db, args.pg_url, 1.0),
              flush=True)
        print(update_case(db, args.pg_url), flush=True)


if __name__ == "__main__":
    main()
