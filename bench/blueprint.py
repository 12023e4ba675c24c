"""Blueprint benchmark: parse + validate of 1,000 node templates, deployment create of 10,000 instances.

    python bench/blueprint.py                 # both, whole-process (subprocess) and in-process
    python bench/blueprint.py --repeat 5
    python bench/blueprint.py --profile       # also cProfile the in-process runs

Two generated blueprints (standard types imported, plug-in operations and
script operations, functions in properties, operation inputs and outputs):

* ``templates`` -- N node templates (default 1,000): every 10th a Compute host,
  the others contained in the host before them and connected to the node
  before them; properties from get_input, get_property and concat.
* ``instances`` -- 10 node templates, a host scaled to M/10 (default 10,000
  instances in all) with a chain of nine nodes contained in it.

Measured, best and median of ``--repeat`` runs:

* parse+validate -- ``stoker blueprint validate FILE`` in a subprocess (interpreter
  start-up and imports included), and ``parse_file`` in this process;
* deployment create -- ``stoker deployment create`` in a subprocess on a SQLite
  database holding the uploaded blueprint (a fresh database each run), and
  ``Deployments.create`` in this process.

Wall time depends on how busy the machine is (2 cores, shared); each
whole-process line also shows the child's CPU time (user + system).  The
child processes may write bytecode caches (as an installed package has them),
and a warm-up run comes first.

Targets (whole-process, this machine): parse+validate of 1,000 node templates
< 0.5 s, deployment create with 10,000 instances < 3 s.

Then the workflows (``bench/workflows.py``, each case in a fresh process):
install and uninstall of 1,000 node instances whose operations are no-ops
(install < 5 s) and of 100 instances in 10 dependency layers whose scripts
each sleep 1 s (within 15% of the 10 s critical path).  ``--no-workflows``
skips them.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEAD = {"tosca_definitions_version": "cloudify_dsl_1_4", "imports": ["cloudify/types/types.yaml"],
        "plugins": {"app": {"executor": "central_deployment_agent", "install": False}}}


def templates_blueprint(count: int) -> dict:
    node_types = {"bench.App": {"derived_from": "cloudify.nodes.SoftwareComponent", "properties": {
        "port": {"type": "integer", "default": 80}, "name": {"type": "string"}, "url": {"default": ""},
        "tags": {"default": []}}}}
    nodes: dict = {}
    host = None
    for index in range(count):
        name = f"n{index:05d}"
        if index % 10 == 0:
            nodes[name] = {"type": "cloudify.nodes.Compute", "properties": {"ip": f"10.0.{index // 250}.{index % 250}"}}
            host = name
            continue
        previous = f"n{index - 1:05d}"
        nodes[name] = {
            "type": "bench.App",
            "properties": {"port": {"get_input": "port"}, "name": name,
                           "url": {"concat": ["http://", {"get_property": [host, "ip"]}, ":",
                                              {"get_input": "port"}, "/", name]},
                           "tags": [{"get_input": "env"}, "bench"]},
            "interfaces": {"cloudify.interfaces.lifecycle": {
                "create": {"implementation": "app.tasks.create", "inputs": {"name": {"get_property": ["SELF", "name"]}}},
                "configure": {"implementation": "scripts/configure.sh",
                              "inputs": {"peer": {"get_attribute": [previous, "address"]}}}}},
            "relationships": [{"type": "cloudify.relationships.contained_in", "target": host},
                              {"type": "cloudify.relationships.connected_to", "target": previous}],
        }
    return {**HEAD, "inputs": {"port": {"type": "integer", "default": 8080}, "env": {"default": "bench"}},
            "node_types": node_types, "node_templates": nodes,
            "outputs": {f"url_{i}": {"value": {"get_property": [f"n{i:05d}", "url"]}} for i in range(1, count, 50)}}


def instances_blueprint(instances: int) -> dict:
    per_host = instances // 10
    nodes = {"host": {"type": "cloudify.nodes.Compute", "capabilities": {"scalable": {"properties": {
        "default_instances": per_host, "max_instances": -1}}}}}
    below = "host"
    for level in range(1, 10):
        name = f"layer{level}"
        nodes[name] = {"type": "cloudify.nodes.SoftwareComponent",
                       "relationships": [{"type": "cloudify.relationships.contained_in", "target": below}]}
        below = name
    return {**HEAD, "node_templates": nodes,
            "outputs": {"addresses": {"value": {"get_attributes_list": ["host", "ip"]}}}}


def _stoker() -> str:
    found = shutil.which("stoker", path=str(Path(sys.executable).parent)) or shutil.which("stoker")
    if not found:
        sys.exit("the stoker command is not installed (pip install -e .)")
    return found


#: CPU seconds (user + system) of every child process run so far
_CHILD_CPU: list[float] = []


def _timed(argv: list[str], env: dict) -> float:
    """Wall seconds of one whole process; its CPU seconds go to ``_CHILD_CPU``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _CHILD_CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


def _report(label: str, times: list[float], target: float | None = None, cpu: list[float] | None = None) -> None:
    """Best and median wall time; with ``cpu``, the best CPU time too (the machine may be busy)."""
    verdict = "" if target is None else ("  (target < %.1f s: %s)" % (target, "met" if min(times) < target
                                                                        else "MISSED"))
    cpu_text = f"   cpu {min(cpu):6.3f} s" if cpu else ""
    print(f"{label:<52} best {min(times):6.3f} s   median {statistics.median(times):6.3f} s{cpu_text}{verdict}")


def _whole(argv: list[str], env: dict, repeat: int) -> tuple[list[float], list[float]]:
    wall = [_timed(argv, env) for _ in range(repeat)]
    return wall, _CHILD_CPU[-repeat:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--templates", type=int, default=1000)
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-workflows", action="store_true", help="skip the install/uninstall timings")
    args = parser.parse_args()

    from stoker.blueprint.parser import parse_file
    from stoker.engine.engine import Engine

    work = Path(tempfile.mkdtemp(prefix="stoker-bench-"))
    # as an installed package runs: compiled modules are cached (this sandbox sets PYTHONDONTWRITEBYTECODE)
    env = {**os.environ, "STOKER_HOME": str(work / "home")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["STOKER_HOME"] = env["STOKER_HOME"]
    stoker = _stoker()
    try:
        big = work / "templates.yaml"
        (work / "scripts").mkdir()
        (work / "scripts" / "configure.sh").write_text("#!/bin/sh\n")
        big.write_text(yaml.safe_dump(templates_blueprint(args.templates), sort_keys=False))
        many = work / "instances.yaml"
        many.write_text(yaml.safe_dump(instances_blueprint(args.instances), sort_keys=False))
        print(f"blueprints: {args.templates} node templates ({big.stat().st_size // 1024} KiB); "
              f"{args.instances} node instances in 10 node templates")

        _timed([stoker, "blueprint", "validate", str(big)], env)  # warm-up: writes the bytecode caches
        startup, cpu = _whole([stoker, "--version"], env, args.repeat)
        _report("interpreter start-up (stoker --version)", startup, cpu=cpu)
        wall, cpu = _whole([stoker, "blueprint", "validate", str(big)], env, args.repeat)
        _report(f"parse+validate {args.templates} templates, whole process", wall, 0.5, cpu)
        in_process = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            parse_file(big)
            in_process.append(time.perf_counter() - started)
        _report(f"parse+validate {args.templates} templates, in process", in_process)

        whole, inside, cpu = [], [], []
        for run in range(args.repeat):
            url = f"sqlite:///{work / f'create{run}.db'}"
            _timed([stoker, "--db-url", url, "blueprint", "upload", str(many), "-b", "many"], env)
            whole.append(_timed([stoker, "--db-url", url, "deployment", "create", "dep", "-b", "many"], env))
            cpu.append(_CHILD_CPU[-1])
            engine = Engine(db_url=url)
            started = time.perf_counter()
            engine.blueprints.deployments.create("again", "many")
            inside.append(time.perf_counter() - started)
            engine.close()
        _report(f"deployment create, {args.instances} instances, whole process", whole, 3.0, cpu)
        _report(f"deployment create, {args.instances} instances, in process", inside)

        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            parse_file(big)
            engine = Engine(db_url=f"sqlite:///{work / 'profile.db'}")
            engine.blueprints.upload(many, "many")
            engine.blueprints.deployments.create("dep", "many")
            profile.disable()
            engine.close()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        if not args.no_workflows:
            import workflows  # bench/workflows.py, beside this file

            workflows.report()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
