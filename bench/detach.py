"""How long the ``stoker`` command keeps the user waiting, with and without ``--wait``.

    python bench/detach.py                 # SQLite in a temporary directory
    python bench/detach.py --secs 5 --runs 3

For a stack whose one resource takes ``--secs`` seconds to create, prints the median wall
time of: ``stack list`` (the cost of starting the command at all), ``stack create`` without
``--wait`` (returns at CREATE_IN_PROGRESS), ``stack create --wait``, and ``stack delete
--wait`` run while the create is still going (the create is cancelled, then the stack deleted).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secs", type=float, default=5.0, help="seconds the resource takes to create")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "STOKER_HOME": tmp, "STOKER_DB_URL": f"sqlite:///{tmp}/bench.db"}
        template = Path(tmp) / "slow.json"
        template.write_text(json.dumps({"heat_template_version": "2018-08-31", "resources": {"slow": {
            "type": "OS::Heat::TestResource",
            "properties": {"action_wait_secs": {"create": args.secs, "delete": 0}}}}}))

        def stoker(*argv: str) -> float:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "stoker", *argv], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"stoker {' '.join(argv)} failed:\n{done.stderr}")
            return time.perf_counter() - started

        times: dict[str, list[float]] = {"stack list": [], "create (no --wait)": [], "create --wait": [],
                                         "delete --wait during the create": []}
        for run in range(args.runs):
            times["stack list"].append(stoker("stack", "list"))
            times["create (no --wait)"].append(stoker("stack", "create", f"bg{run}", "-t", str(template)))
            times["delete --wait during the create"].append(stoker("stack", "delete", f"bg{run}", "--yes", "--wait"))
            times["create --wait"].append(stoker("stack", "create", f"fg{run}", "-t", str(template), "--wait"))
            stoker("stack", "delete", f"fg{run}", "--yes", "--wait")
        print(f"one resource taking {args.secs:g} s to create; median of {args.runs} runs")
        for what, seconds in times.items():
            print(f"  {what:34} {statistics.median(seconds):6.2f} s")


if __name__ == "__main__":
    main()
