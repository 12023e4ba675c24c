"""Workflow benchmark: install and uninstall times of blueprint deployments, and Stoker vs Cloudify.

    python bench/workflows.py                      # the two cases, then Stoker vs Cloudify
    python bench/workflows.py --versus             # only Stoker vs Cloudify
    python bench/workflows.py --versus --sizes 100x10,1000x10,10000x10

The cases run on a fresh SQLite database in a fresh process.  Targets (issue 10,
this 2-core machine): 1,000 node instances whose operations are no-ops installed
in < 5 s; 100 instances in 10 dependency layers whose scripts each sleep 1 s
(create and delete) installed and uninstalled within 15% of the critical path, 10 s.

Stoker vs Cloudify (issue 25): H hosts with N contained apps each (H x (1 + N)
no-op instances of ``cloudify.nodes.Root``, one ``contained_in`` each), installed
and uninstalled by cloudify-common 7.0.5's local workflow (``cloudify.workflows.local``,
in memory; ``bench/workflows_cfy.py`` in the scratch virtualenv ``.cloudify-corpus-venv``
that ``scripts/cloudify-corpus`` makes, made here when missing) and by Stoker with
every state change and event stored (SQLite): ``stoker install BLUEPRINT`` and ``stoker
uninstall`` as whole processes (start-up, upload, deployment create, the execution,
the events printed), and the executions alone in a process of their own.  Wall time
and CPU time (user + system) of each; the machine is shared, so CPU time is the
steadier figure.  Target: Stoker >= 5x faster than Cloudify, both sizes.  Both sides
may use bytecode caches (as installed packages have them); a warm-up run comes first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\nnode_templates:\n"
#: the scratch virtualenv with cloudify-common 7.0.5 (shared with scripts/cloudify-corpus)
CLOUDIFY_VENV = ROOT / ".cloudify-corpus-venv"
CLOUDIFY_PACKAGES = ["cloudify-common==7.0.5", "networkx", "pyyaml", "requests"]
#: Cloudify's own types.yaml (the standard types URL resolves to it on Cloudify's side)
TYPES_DIR = Path("/work/shared/cloudify_types")
TARGET_RATIO = 5.0


def noop_blueprint(folder: Path, instances: int = 1000) -> Path:
    text = HEADER + textwrap.indent(textwrap.dedent(f"""\
        app:
          type: cloudify.nodes.Root
          capabilities: {{scalable: {{properties: {{default_instances: {instances}}}}}}}
        """), "  ")
    return _write(folder, text, {})


def tree_blueprint(folder: Path, hosts: int, apps: int) -> Path:
    """``hosts`` no-op hosts, each with ``apps`` no-op apps contained in it; both sides read it as it is
    (DSL 1_5: Cloudify 7's types.yaml needs it)."""
    text = textwrap.dedent(f"""\
        tosca_definitions_version: cloudify_dsl_1_5
        imports: [http://www.getcloudify.org/spec/cloudify/7.0.0/types.yaml]
        node_templates:
          host:
            type: cloudify.nodes.Root
            capabilities: {{scalable: {{properties: {{default_instances: {hosts}}}}}}}
          app:
            type: cloudify.nodes.Root
            capabilities: {{scalable: {{properties: {{default_instances: {apps}}}}}}}
            relationships: [{{type: cloudify.relationships.contained_in, target: host}}]
        """)
    return _write(folder, text, {})


def sleeping_blueprint(folder: Path, layers: int = 10, per_layer: int = 10) -> Path:
    """``layers`` node templates of ``per_layer`` instances, each depending on the one before."""
    nodes = []
    for layer in range(layers):
        node = {"type": "cloudify.nodes.Root",
                "capabilities": {"scalable": {"properties": {"default_instances": per_layer}}},
                "interfaces": {"cloudify.interfaces.lifecycle": {"create": "scripts/sleep.sh",
                                                                 "delete": "scripts/sleep.sh"}}}
        if layer:
            node["relationships"] = [{"type": "cloudify.relationships.depends_on", "target": f"l{layer - 1}"}]
        nodes.append(f"  l{layer}: {json.dumps(node)}\n")
    return _write(folder, HEADER + "".join(nodes), {"scripts/sleep.sh": "sleep 1\n"})


def _write(folder: Path, text: str, scripts: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in scripts.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(body)
    (folder / "blueprint.yaml").write_text(text)
    return folder / "blueprint.yaml"


def run_case(case: str) -> dict:
    """In this process: upload, create the deployment, time install and uninstall (wall and CPU)."""
    work = Path(tempfile.mkdtemp(prefix="stoker-bench-"))
    os.environ["STOKER_HOME"] = str(work / "home")
    from stoker.engine.engine import Engine

    engine = Engine(db_url=f"sqlite:///{work / 'stoker.db'}")
    if case.startswith("tree:"):
        path = tree_blueprint(work / "bp", *_size(case[len("tree:"):]))
    else:
        path = noop_blueprint(work / "bp") if case == "noop" else sleeping_blueprint(work / "bp")
    engine.blueprints.upload(path, "bench")
    engine.blueprints.deployments.create("bench", "bench")
    result = {"case": case, "instances": len(engine.blueprints.deployments.node_instances("bench"))}
    engine.executions  # its modules imported before the clock starts
    for workflow in ("install", "uninstall"):
        started, cpu = time.perf_counter(), time.process_time()
        execution = engine.executions.start(workflow, "bench")
        result[f"{workflow}_s"] = round(time.perf_counter() - started, 3)
        result[f"{workflow}_cpu"] = round(time.process_time() - cpu, 3)
        result[f"{workflow}_status"] = execution["status"]
    engine.close()
    return result


def _size(text: str) -> tuple[int, int]:
    hosts, apps = text.lower().split("x")
    return int(hosts), int(apps)


def child_case(case: str) -> dict:
    """``run_case`` in a fresh process."""
    done = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True, text=True,
                          env=_env())
    if done.returncode != 0:
        sys.exit(f"the {case} case failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env(**extra: str) -> dict:
    """The children's environment: bytecode caches allowed, as an installed package has them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def timed(command: list, env: dict) -> dict:
    """Run ``command`` to its end: its wall time, CPU time (user + system) and peak resident MB."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed (exit {process.returncode})")
    return {"wall": time.perf_counter() - started, "cpu": usage.ru_utime + usage.ru_stime,
            "mb": usage.ru_maxrss / 1024, "started": started}


TARGETS = {"noop": ("install < 5 s", 5.0), "sleeping": ("install and uninstall within 15% of 10 s", 11.5)}


def report() -> None:
    """Both cases, each in a fresh process; one line each, with the target and whether it was met."""
    for case in ("noop", "sleeping"):
        result = child_case(case)
        text, limit = TARGETS[case]
        timed_s = [result["install_s"]] + ([result["uninstall_s"]] if case == "sleeping" else [])
        verdict = "met" if max(timed_s) < limit and result["install_status"] == "terminated" else "MISSED"
        print(f"workflows, {result['instances']:5} {case} instances: install {result['install_s']:7.3f} s, "
              f"uninstall {result['uninstall_s']:7.3f} s   (target {text}: {verdict})")


# -- Stoker vs Cloudify ---------------------------------------------------------------------------
def cloudify_python() -> Path:
    """The scratch virtualenv's python, made (a few minutes, once) when missing."""
    python = CLOUDIFY_VENV / "bin" / "python"
    if not python.exists():
        print(f"installing cloudify-common 7.0.5 into {CLOUDIFY_VENV} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(CLOUDIFY_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *CLOUDIFY_PACKAGES], check=True)
    return python


def stoker_side(hosts: int, apps: int) -> dict:
    """``stoker install BLUEPRINT`` and ``stoker uninstall`` as processes, then the executions alone."""
    work = Path(tempfile.mkdtemp(prefix="stoker-bench-versus-"))
    path = tree_blueprint(work / "bp", hosts, apps)
    env = _env(STOKER_HOME=str(work / "home"))
    stoker = [sys.executable, "-m", "stoker"]
    measured = {"install_process": timed([*stoker, "install", str(path), "-b", "bench", "-d", "bench"], env),
                "uninstall_process": timed([*stoker, "uninstall", "bench"], env)}
    alone = child_case(f"tree:{hosts}x{apps}")
    for workflow in ("install", "uninstall"):
        if alone[f"{workflow}_status"] != "terminated":
            sys.exit(f"Stoker's {workflow} of {hosts}x{apps} ended {alone[f'{workflow}_status']}")
        measured[f"{workflow}_execution"] = {"wall": alone[f"{workflow}_s"], "cpu": alone[f"{workflow}_cpu"]}
    measured["instances"] = alone["instances"]
    return measured


def cloudify_side(python: Path, types_dir: Path, hosts: int, apps: int) -> dict:
    """Cloudify's local workflow on the same blueprint: one process (parse, plan, install, uninstall)."""
    work = Path(tempfile.mkdtemp(prefix="stoker-bench-cloudify-"))
    path = tree_blueprint(work / "bp", hosts, apps)
    result = work / "result.json"
    process = timed([str(python), str(ROOT / "bench" / "workflows_cfy.py"), str(path), str(types_dir), str(result)],
                    _env())
    found = json.loads(result.read_text())
    marks = found["marks"]
    if found["installed_states"] != ["started"]:
        sys.exit(f"Cloudify's install of {hosts}x{apps} left states {found['installed_states']}")

    def between(first: str, last: str) -> dict:
        return {"wall": marks[last]["at"] - marks[first]["at"], "cpu": marks[last]["cpu"] - marks[first]["cpu"]}

    return {"instances": found["instances"], "process": process,
            # the process up to the end of install: start-up, imports, parse and plan, install
            "install_process": {"wall": marks["installed"]["at"] - process["started"],
                                "cpu": marks["installed"]["cpu"]},
            "install_execution": between("planned", "installed"),
            "uninstall_execution": between("installed", "uninstalled")}


#: (what is compared, Stoker's measurement, Cloudify's)
COMPARED = [("install, whole process", "install_process", "install_process"),
            ("install, the execution", "install_execution", "install_execution"),
            ("uninstall, the execution", "uninstall_execution", "uninstall_execution"),
            ("uninstall: stoker's process / cfy's execution", "uninstall_process", "uninstall_execution")]


def versus(sizes: list[tuple[int, int]], types_dir: Path) -> None:
    """Stoker and Cloudify side by side at each size; each line's ratio and whether it is >= 5x."""
    python = cloudify_python()
    stoker_side(2, 1), cloudify_side(python, types_dir, 2, 1)  # warm-up: bytecode caches written
    print(f"{'':46} {'Stoker':>16} {'Cloudify 7.0.5':>16} {'Stoker faster by':>20}")
    print(f"{'':46} {'wall s':>8}{'CPU s':>8} {'wall s':>8}{'CPU s':>8} {'wall':>9}{'CPU':>9}   target {TARGET_RATIO:g}x")
    for hosts, apps in sizes:
        ours, theirs = stoker_side(hosts, apps), cloudify_side(python, types_dir, hosts, apps)
        print(f"{hosts} hosts x {apps} apps = {ours['instances']} instances (Cloudify: {theirs['instances']}); "
              f"peak RSS: stoker install {ours['install_process']['mb']:.0f} MB, "
              f"Cloudify's process {theirs['process']['mb']:.0f} MB")
        for label, mine, its in COMPARED:
            a, b = ours[mine], theirs[its]
            wall, cpu = b["wall"] / a["wall"], b["cpu"] / max(a["cpu"], 1e-3)
            verdict = "met" if min(wall, cpu) >= TARGET_RATIO else ("CPU only" if cpu >= TARGET_RATIO else "MISSED")
            print(f"  {label:44} {a['wall']:8.2f}{a['cpu']:8.2f} {b['wall']:8.2f}{b['cpu']:8.2f} "
                  f"{wall:8.1f}x{cpu:8.1f}x   {verdict}")
        sys.stdout.flush()


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(run_case(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versus", action="store_true", help="only Stoker vs Cloudify")
    parser.add_argument("--sizes", default="100x10,1000x10", help="HOSTSxAPPS,... (default 100x10,1000x10)")
    parser.add_argument("--types", type=Path, default=TYPES_DIR, help="the folder of Cloudify's types.yaml")
    args = parser.parse_args()
    if not args.versus:
        report()
    versus([_size(size) for size in args.sizes.split(",")], args.types)


if __name__ == "__main__":
    main()
