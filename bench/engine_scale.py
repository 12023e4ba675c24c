"""In-process engine benchmark: create, update (no-op, 10% changed) and delete times, peak memory.

    python bench/engine_scale.py                      # every case
    python bench/engine_scale.py --case group --sizes 100

``bench/scale.py`` times the same work whole-process, as users run it; this one
calls ``Engine`` directly (no start-up, no CLI), to see the engine alone.

Each case runs in a fresh process (so peak memory is the case's own) on a
fresh SQLite database.  ``layered``: 10 layers, each resource depending on
one of the layer before; ``group``: a ResourceGroup of provider templates.
``show ms``: a ``show_stack`` of the created stack with its outputs, the mean of 5 in a row (what
a client polling the stack's state costs the server each time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


SHOWS = 5
#: an output of the flat and layered stacks: what a show reads
FIRST = {"first": {"value": {"get_resource": "r0"}}}


def flat(n: int, changed: float = 0.0) -> dict:
    resources = {f"r{i}": {"type": "OS::Heat::None",
                           "properties": {"index": i, "gen": 1 if i < n * changed else 0}}
                 for i in range(n)}
    return {"heat_template_version": "2018-08-31", "resources": resources, "outputs": FIRST}


def layered(n: int, changed: float = 0.0, layers: int = 10) -> dict:
    """``layers`` layers; each resource depends on one of the layer before."""
    per = max(1, n // layers)
    resources = {}
    for i in range(n):
        layer = i // per
        props = {"index": i, "gen": 1 if i < n * changed else 0}
        if layer:
            props["after"] = {"get_resource": f"r{(layer - 1) * per + i % per}"}
        resources[f"r{i}"] = {"type": "OS::Heat::None", "properties": props}
    # its value needs the last resource and, layer by layer, those it depends on
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"last": {"value": {"get_resource": f"r{n - 1}"}}}}


MEMBER = {
    "heat_template_version": "2018-08-31",
    "parameters": {"index": {"type": "string"}},
    "resources": {
        **{f"n{j}": {"type": "OS::Heat::None", "properties": {"index": {"get_param": "index"}}}
           for j in range(8)},
        "value": {"type": "OS::Heat::Value",
                  "properties": {"value": {"list_join": ["-", ["member", {"get_param": "index"}]]}},
                  "depends_on": [f"n{j}" for j in range(8)]},
        "last": {"type": "OS::Heat::None", "properties": {"after": {"get_attr": ["value", "value"]}}},
    },
    "outputs": {"value": {"value": {"get_attr": ["value", "value"]}}},
}


def group(n: int, changed: float = 0.0) -> dict:
    """A ResourceGroup of ``n`` members, each a provider template of 10 resources."""
    return {"heat_template_version": "2018-08-31",
            "resources": {"group": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": int(n * (1 + changed)),
                "resource_def": {"type": "member.yaml", "properties": {"index": "%index%"}}}}},
            "outputs": {"values": {"value": {"get_attr": ["group", "value"]}}}}


CASES = {"flat": flat, "layered": layered, "group": group}


def run_case(case: str, n: int) -> dict:
    """Runs inside the child process."""
    from stoker.engine.engine import Engine

    from stoker.template.template import Template

    home = tempfile.mkdtemp(prefix="stoker-bench-")
    engine = Engine(db_url=f"sqlite:///{home}/bench.db")
    timings = {}

    def build(size: int, changed: float = 0.0):
        data = CASES[case](size, changed)
        # the group's members come from a provider template in the files map
        return Template(data, {"member.yaml": json.dumps(MEMBER)}) if case == "group" else data

    def timed(label, fn):
        start = time.perf_counter()
        info = fn()
        timings[label] = time.perf_counter() - start
        status = info["stack_status"]
        if not status.endswith("COMPLETE"):
            raise SystemExit(f"{label}: {status} {info['stack_status_reason']}")

    timed("create", lambda: engine.create_stack("bench", build(n)))
    timed("show", lambda: [engine.show_stack("bench") for _ in range(SHOWS)][-1])
    timings["show"] /= SHOWS
    if case == "group":
        before = _event_count(engine)
        timed("update_10pct", lambda: engine.update_stack("bench", build(n, changed=0.1)))
        timings["scale_up_events"] = _event_count(engine) - before
    else:
        timed("update_noop", lambda: engine.update_stack("bench", build(n)))
        timed("update_10pct", lambda: engine.update_stack("bench", build(n, changed=0.1)))
    timed("delete", lambda: engine.delete_stack("bench"))
    timings["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return timings


def _event_count(engine) -> int:
    """Events of every stack in the database (nested ones included)."""
    from sqlalchemy import func, select

    from stoker.store.models import Event

    with engine.store._read() as conn:
        return conn.scalar(select(func.count()).select_from(Event.__table__))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=list(CASES), action="append")
    parser.add_argument("--sizes", type=int, nargs="+")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_case(args.child[0], int(args.child[1]))))
        return
    plan = []
    for case in args.case or ["flat", "layered"]:
        sizes = args.sizes or ([1000] if case == "group" else [1000, 10000])
        plan += [(case, n) for n in sizes]
    print(f"{'case':8} {'n':>6} {'create s':>9} {'show ms':>8} {'upd-noop':>9} {'upd-10%':>9} {'delete s':>9} "
          f"{'µs/res':>8} {'peak MB':>8}")
    for case, n in plan:
        out = subprocess.run([sys.executable, __file__, "--child", case, str(n)],
                             capture_output=True, text=True, env=os.environ)
        if out.returncode:
            print(f"{case:8} {n:>6} FAILED: {out.stderr.strip()[-500:]}")
            continue
        t = json.loads(out.stdout.strip().splitlines()[-1])
        per = t["create"] / n * 1e6
        print(f"{case:8} {n:>6} {t['create']:9.2f} {t['show'] * 1000:8.1f} {t.get('update_noop', float('nan')):9.2f} "
              f"{t.get('update_10pct', float('nan')):9.2f} {t['delete']:9.2f} {per:8.0f} {t['peak_mb']:8.0f}")
        if "scale_up_events" in t:
            print(f"{'':8} scale-up by 10% wrote {t['scale_up_events']} events "
                  f"(the {n // 10} new members and their 10 resources each need about {n // 10 * 22})")


if __name__ == "__main__":
    main()
