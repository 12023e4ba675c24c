"""Driver of scripts/cloudify-corpus: Cloudify's verdict and Stoker's on real blueprints, side by side.

Runs in Stoker's .venv. Every blueprint (a YAML file with ``tosca_definitions_version:
cloudify_dsl_``) under the folders given is validated by Stoker (``parse_file``) and by
cloudify-common's ``dsl_parser`` (scripts/cloudify_corpus_cfy.py in its own virtualenv),
both with the same plugin YAMLs (``--plugins DIR``: one folder per plugin, named as
``plugin:NAME`` imports name it, uploaded into a scratch Stoker catalog) and the same
standard types. Where both accept, both make the deployment plan (an input without a
default gets its type's simplest value) and the node types, instance counts, relationships,
output and capability names and the plugins to install (deployment, workflow, host agent) are
compared. Where every operation is a no-op or a script,
install then uninstall run on both sides (``cloudify.workflows.local`` and Stoker's
engine), scripts recorded rather than run, and the outcome, the instances' states after
each workflow and the operations each instance got, in order, are compared. Prints the
agreement per stage and each disagreement.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cloudify_corpus_runs import plugins_to_install, sequences, simple_inputs  # noqa: E402


BLUEPRINT = re.compile(r"""^tosca_definitions_version:\s*['"]?cloudify_dsl_""", re.MULTILINE)
#: a plugin's own YAML (plugin.yaml, plugin_1_5.yaml, v2_plugin.yaml): imported, not a blueprint
PLUGIN_YAML = re.compile(r"(v\d+_)?plugin(_\d_\d+)?\.ya?ml")


def find_blueprints(roots: list[Path]) -> list[Path]:
    found = []
    for root in roots:
        for path in sorted([root] if root.is_file() else root.rglob("*.y*ml")):
            try:
                head = path.read_text(errors="replace")[:4000]
            except OSError:
                continue
            if BLUEPRINT.search(head) and not PLUGIN_YAML.fullmatch(path.name):
                found.append(path.resolve())
    return found


def stoker_side(path: Path) -> dict:
    from stoker.blueprint.deployment import prepare
    from stoker.blueprint.parser import parse_file
    from stoker.errors import ValidationFailed

    result: dict = {"path": str(path)}
    try:
        plan = parse_file(path)
    except ValidationFailed as exc:
        return {**result, "ok": False, "error": str(exc.problems[0])[:300]}
    except Exception as exc:  # noqa: BLE001  (a crash is a verdict too, and shown)
        return {**result, "ok": False, "error": f"CRASH {type(exc).__name__}: {exc}"[:300]}
    result["ok"] = True
    inputs = simple_inputs(plan["inputs"], lambda d: d.get("default") is None and d.get("required", True))
    try:
        dep = prepare(plan, inputs, secret_exists=lambda name: True)
    except Exception as exc:  # noqa: BLE001
        return {**result, "summary_error": f"{type(exc).__name__}: {exc}"[:300]}
    counts: dict = {}
    for instance in dep["node_instances"]:
        counts[instance["node_id"]] = counts.get(instance["node_id"], 0) + 1
    result["summary"] = {
        "nodes": {n["name"]: [n["type"], counts.get(n["name"], 0)] for n in dep["nodes"]},
        "relationships": sorted([n["name"], r["target_id"], r["type"]] for n in dep["nodes"] for r in n["relationships"]),
        "outputs": sorted(dep["outputs"]), "capabilities": sorted(dep["capabilities"]),
        "plugins": plugins_to_install(plan)}
    return result


class StokerRuns:
    """install then uninstall on Stoker's engine, scripts recorded rather than run (as on Cloudify's side)."""

    def __init__(self) -> None:
        from stoker.engine.engine import Engine
        from stoker.workflows import operations

        self.engine = Engine(db_url=f"sqlite:///{os.environ['STOKER_HOME']}/corpus.db")
        self.calls: list = []
        operations.run_script = self._record
        self.count = 0

    async def _record(self, server, ctx, script, timeout=None, timeout_recoverable=False):
        if ctx.source is not None:
            self.calls.append([ctx.source.instance.id, ctx.source.node.id,
                               f"{ctx.operation.name}@{ctx.acting_side}->{ctx.target.node.id}"])
        else:
            self.calls.append([ctx.instance.id, ctx.node.id, ctx.operation.name])

    def run(self, path: Path, inputs: dict) -> dict:
        self.count += 1
        name = f"corpus-{self.count}"
        try:
            self.engine.blueprints.upload(path, name)
            self.engine.blueprints.deployments.create(name, name, inputs)
        except Exception as exc:  # noqa: BLE001  (refused where Cloudify ran: a disagreement, shown)
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}
        result: dict = {}
        for workflow in ("install", "uninstall"):
            self.calls.clear()
            try:
                status = self.engine.executions.start(workflow, name, {"task_retries": 0,
                                                                       "task_retry_interval": 0})["status"]
            except Exception as exc:  # noqa: BLE001
                status = f"failed: {type(exc).__name__}: {exc}"[:200]
            states: dict = {}
            for instance in self.engine.blueprints.deployments.node_instances(name):
                states.setdefault(instance["node_id"], []).append(instance["state"])
            result[workflow] = {"status": status.split(":")[0], "states": {k: sorted(v) for k, v in states.items()},
                                "operations": sequences(self.calls)}
        return result


def upload_plugins(plugins: Path) -> None:
    from stoker.blueprint.plugin_catalog import PluginCatalog
    from stoker.home import stoker_home

    from stoker.blueprint.blueprint_errors import BlueprintError

    catalog = PluginCatalog(stoker_home(create=True) / "plugins")
    for folder in sorted(p for p in plugins.iterdir() if p.is_dir()):
        package = versioned_package(folder)
        usable = []
        for path in sorted(folder.glob("plugin*.yaml")):
            try:
                catalog.upload(package, [path])  # each on its own: a broken one is left out, and said
                usable.append(path)
            except BlueprintError as exc:
                print(f"plugin YAML left out: {exc}", file=sys.stderr)
        if usable:
            catalog.upload(package, usable)


def versioned_package(folder: Path) -> Path:
    """``folder`` itself when its YAMLs say the plugin's version; else (a test plugin, its version
    in the wagon a manager gets) a wagon holding only its name and version 0.0.0, as setuptools
    gives a package without one."""
    text = "\n".join(path.read_text(errors="replace") for path in folder.glob("plugin*.yaml"))
    if "package_version:" in text:
        return folder
    wagon = Path(tempfile.mkdtemp(prefix="cloudify-corpus-wagon-")) / f"{folder.name}.wgn"
    metadata = json.dumps({"package_name": folder.name, "package_version": "0.0.0"}).encode()
    with tarfile.open(wagon, "w:gz") as archive:
        info = tarfile.TarInfo(f"{folder.name}/package.json")
        info.size = len(metadata)
        archive.addfile(info, io.BytesIO(metadata))
    return wagon


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--cfy-python", required=True, help="python of a virtualenv with cloudify-common")
    parser.add_argument("--types", type=Path, default=Path("/work/shared/cloudify_types"))
    parser.add_argument("--plugins", type=Path, default=Path("/work/shared/cloudify_plugins"))
    parser.add_argument("--show", type=int, default=40, help="disagreements to print per stage")
    args = parser.parse_args()
    os.environ["STOKER_HOME"] = tempfile.mkdtemp(prefix="cloudify-corpus-")
    upload_plugins(args.plugins)
    blueprints = find_blueprints(args.paths)
    cfy = subprocess.run([args.cfy_python, str(HERE / "cloudify_corpus_cfy.py"), str(args.types), str(args.plugins)],
                         input="\n".join(map(str, blueprints)), capture_output=True, text=True)
    theirs = {r["path"]: r for r in map(json.loads, (line for line in cfy.stdout.splitlines()
                                                      if line.startswith('{"path"')))}
    ours = {str(p): stoker_side(p) for p in blueprints}
    same_verdict, verdicts, plans, same_plan = 0, [], [], 0
    for path in map(str, blueprints):
        mine, cloudify = ours[path], theirs.get(path, {"ok": False, "error": "no answer"})
        if mine["ok"] == cloudify["ok"]:
            same_verdict += 1
        else:
            verdicts.append((path, cloudify.get("error", "accepted"), mine.get("error", "accepted")))
        if mine["ok"] and cloudify["ok"] and "summary" in cloudify:
            if mine.get("summary") == json.loads(json.dumps(cloudify["summary"])):
                same_plan += 1
            else:
                plans.append((path, cloudify["summary"], mine.get("summary") or mine.get("summary_error")))
    both = same_plan + len(plans)
    runner, same_run, runs = StokerRuns(), 0, []
    for path in map(str, blueprints):
        cloudify = theirs.get(path, {})
        if ours[path]["ok"] and "run" in cloudify:
            mine = runner.run(Path(path), cloudify["run"].pop("inputs"))
            if mine == cloudify["run"]:
                same_run += 1
            else:
                runs.append((path, cloudify["run"], mine))
    ran = same_run + len(runs)
    print(f"blueprints: {len(blueprints)}")
    print(f"validate: same verdict on {same_verdict}/{len(blueprints)} "
          f"({100 * same_verdict / max(len(blueprints), 1):.1f}%)")
    print(f"plan: same on {same_plan}/{both} ({100 * same_plan / max(both, 1):.1f}%) of those both accept")
    print(f"install+uninstall: same on {same_run}/{ran} ({100 * same_run / max(ran, 1):.1f}%) of those both can "
          "run (every operation a no-op or a script)")
    for path, cloudify_says, stoker_says in verdicts[:args.show]:
        print(f"\nVERDICT {path}\n  cloudify: {cloudify_says}\n  stoker:   {stoker_says}")
    for path, cloudify_plan, stoker_plan in plans[:args.show]:
        print(f"\nPLAN {path}\n  cloudify: {json.dumps(cloudify_plan)[:400]}\n  stoker:   {json.dumps(stoker_plan)[:400]}")
    for path, cloudify_run, stoker_run in runs[:args.show]:
        print(f"\nRUN {path}\n  cloudify: {json.dumps(cloudify_run)[:600]}\n  stoker:   {json.dumps(stoker_run)[:600]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
