"""Cloudify's side of scripts/cloudify-corpus: run in a virtualenv with cloudify-common 7.0.5.

``python cloudify_corpus_cfy.py TYPES_DIR PLUGINS_DIR < paths`` prints one JSON line per
blueprint path read: ``{"path", "ok", "error"}`` and, when it parses, the plan's summary
(``summary`` below, the same shape Stoker's side makes). The standard types URL and
``plugin:NAME`` imports resolve to the same local files Stoker is given.

Where every operation is a no-op or a script, install then uninstall run with
``cloudify.workflows.local`` (``run``): scripts are not run (corpus scripts reach out
to clouds and hosts), the script runner records which operation each node instance
got instead, in order; the states after each workflow are recorded too.
"""

import contextlib
import glob
import json
import os
import re
import sys
import tempfile
from urllib.parse import parse_qs

import script_runner.tasks
from cloudify.state import current_ctx
from cloudify.workflows import local
from dsl_parser import parser, tasks
from dsl_parser.import_resolver.default_import_resolver import DefaultImportResolver
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import parse as parse_version
import yaml

from cloudify_corpus_runs import plugins_to_install, sequences, simple_inputs

TYPES_URL = re.compile(r"(getcloudify\.org|cloudify\.co)/spec/cloudify/[^/]+/types\.yaml$|cloudify/types/types\.yaml$")


class LocalResolver(DefaultImportResolver):
    """Standard types and plugins from local folders; anything else is refused (no network)."""

    def __init__(self, types_dir, plugins_dir):
        super().__init__(rules=[], fallback=False)
        self.types_dir, self.plugins_dir = types_dir, plugins_dir
        self.catalog = {}  # as the manager's: package name -> [(version, folder)], from each folder's YAMLs
        for folder in sorted(os.scandir(plugins_dir), key=lambda entry: entry.name):
            text = "\n".join(open(path).read() for path in glob.glob(os.path.join(folder.path, "plugin*.yaml")))
            if text:
                named = re.search(r"^\s+package_name:\s*['\"]?([^'\"\s]+)", text, re.MULTILINE)
                name = named.group(1) if named else folder.name
                self.catalog.setdefault(name, []).append((plugin_version(text), folder.path))

    def fetch_import(self, import_url, dsl_version=None, **kwargs):
        version = str(dsl_version or "").replace("cloudify_dsl_", "")
        if TYPES_URL.search(import_url) or re.search(r"cloudify/types/types_\d_\d\.yaml$", import_url):
            # as the manager's resources: types_1_4.yaml for 1_4 if there is one, else types.yaml
            for name in (f"types_{version}.yaml", "types.yaml"):
                if os.path.exists(os.path.join(self.types_dir, name)):
                    with open(os.path.join(self.types_dir, name)) as handle:
                        return handle.read()
        if import_url.startswith("plugin:"):
            name, _, query = import_url[len("plugin:"):].strip().partition("?")
            wanted = parse_qs(query).get("version") or []
            matching = [(v, folder) for v, folder in self.catalog.get(name, []) if v in version_specifier(wanted)]
            if not matching:
                raise RuntimeError(f"No matching version was found for plugin {name} and version(s) {wanted}.")
            found = self._plugin_yamls_for_dsl_version(loading_yamls(max(matching)[1]), version)
            with open(found[0]) as handle:
                return handle.read()
        if "://" in import_url and not import_url.startswith("file:"):
            raise RuntimeError(f"not fetched: {import_url}")
        return super().fetch_import(import_url, **kwargs)

    def retrieve_plugin(self, import_url, **kwargs):
        return None


def loading_yamls(folder):
    """A folder of links to the plugin YAMLs of ``folder`` that load: a broken one (cloudify-openstack-plugin's
    plugin_1_4.yaml) is left out, as Stoker's side leaves it out of the plugin it uploads."""
    kept = tempfile.mkdtemp(prefix="cloudify-corpus-plugin-")
    for path in glob.glob(os.path.join(folder, "plugin*.yaml")):
        try:
            with open(path) as handle:
                yaml.safe_load(handle)
        except yaml.YAMLError:
            continue
        os.symlink(path, os.path.join(kept, os.path.basename(path)))
    return kept


def version_specifier(wanted):
    """``?version=`` as the manager's catalog reads it: specifiers (``>=1,<2``), a bare version exact."""
    specifier = SpecifierSet()
    for spec in (v.strip() for values in wanted for v in values.split(",")):
        try:
            specifier &= SpecifierSet(spec)
        except InvalidSpecifier:
            specifier &= SpecifierSet(f"==={spec}")
    return specifier


def plugin_version(text):
    """The package_version plugin YAMLs declare (what a wagon of them would say), 0.0.0 without one."""
    found = re.search(r"^\s+package_version:\s*['\"]?([^'\"\s]+)", text, re.MULTILINE)
    return parse_version(found.group(1) if found else "0.0.0")


NAME_TESTS = {"contains": lambda v, a: a in v, "starts_with": str.startswith, "ends_with": str.endswith,
              "equals_to": lambda v, a: v == a}


class AnyValue:
    """What a manager answers about its objects, as Stoker's side takes them: every secret exists, and
    a deployment_id/node_id/... input's value names an object, one meeting the constraints
    (valid_values, name_pattern) it is given."""

    def get(self, type_name, value, **filters):
        for name, argument in filters.items():
            if name == "valid_values" and value not in argument:
                return []
            if name.endswith("_specs") and not all(NAME_TESTS[test](str(value), str(text))
                                                   for test, text in argument.items() if test in NAME_TESTS):
                return []
        return [value]

    def has_deployment_id(self):
        return False

    def has_blueprint_id(self):
        return False


def summary(plan):
    deployment = tasks.prepare_deployment_plan(plan, inputs=_inputs(plan), get_secret_method=lambda name: "x",
                                               values_getter=AnyValue())
    counts = {}
    for instance in deployment["node_instances"]:
        counts[instance["node_id"]] = counts.get(instance["node_id"], 0) + 1
    return {"nodes": {n["name"]: [n["type"], counts.get(n["name"], 0)] for n in deployment["nodes"]},
            "relationships": sorted([n["name"], r["target_id"], r["type"]] for n in deployment["nodes"]
                                    for r in n.get("relationships", [])),
            "outputs": sorted(deployment.get("outputs", {})), "capabilities": sorted(deployment.get("capabilities", {})),
            "plugins": plugins_to_install(plan)}


SCRIPT_TASK = "script_runner.tasks.run"
_calls = []


def _record(*_args, **_kwargs):
    """The script runner, as the comparison runs it: which operation ran on which instance."""
    ctx = current_ctx.get_ctx()
    if ctx.type == "relationship-instance":
        side = "source" if ctx._context["related"]["is_target"] else "target"
        _calls.append([ctx.source.instance.id, ctx.source.node.id,
                       f"{ctx.operation.name}@{side}->{ctx.target.node.id}"])
    else:
        _calls.append([ctx.instance.id, ctx.node.id, ctx.operation.name])


script_runner.tasks.run = _record


def runnable(plan):
    """Every operation a no-op or a script: both sides can run it without plugins or hosts."""
    operations = [op for node in plan["nodes"] for op in node.get("operations", {}).values()]
    operations += [op for node in plan["nodes"] for rel in node.get("relationships", [])
                   for side in ("source_operations", "target_operations") for op in rel.get(side, {}).values()]
    return all(not op.get("operation") or op["operation"] == SCRIPT_TASK for op in operations)


def run(path, resolver, plan):
    """install then uninstall with cloudify.workflows.local: status, instance states, operations per node."""
    env = local.init_env(path, name="corpus", inputs=_inputs(plan), resolver=resolver)
    result = {"inputs": _inputs(plan)}
    for workflow in ("install", "uninstall"):
        _calls.clear()
        try:
            with contextlib.redirect_stdout(sys.stderr):  # its events and logs: stdout is for the results
                env.execute(workflow, task_retries=0, task_retry_interval=0)
            status = "terminated"
        except Exception as exc:  # noqa: BLE001  (a failed workflow is a result too)
            status = f"failed: {type(exc).__name__}: {exc}"[:200]
        states = {}
        for instance in env.storage.get_node_instances():
            # an instance no workflow touched: no state in local storage, "uninitialized" on a manager
            states.setdefault(instance.node_id, []).append(instance.state or "uninitialized")
        result[workflow] = {"status": status.split(":")[0], "states": {k: sorted(v) for k, v in states.items()},
                            "operations": sequences(_calls)}
    return result


def _inputs(plan):
    return simple_inputs(plan["inputs"], lambda d: "default" not in d)


def main():
    resolver = LocalResolver(sys.argv[1], sys.argv[2])
    for line in sys.stdin:
        path = line.strip()
        result = {"path": path}
        try:
            plan = parser.parse_from_path(path, resolver=resolver, validate_version=True)
            result["ok"] = True
            try:
                result["summary"] = summary(plan)
            except Exception as exc:  # noqa: BLE001  (a plan that cannot be made is a verdict too)
                result["summary_error"] = f"{type(exc).__name__}: {exc}"[:300]
            if "summary" in result and runnable(plan):
                try:
                    result["run"] = run(path, resolver, plan)
                except Exception as exc:  # noqa: BLE001  (cannot run: not compared)
                    result["run_error"] = f"{type(exc).__name__}: {exc}"[:300]
        except Exception as exc:  # noqa: BLE001
            result.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        print(json.dumps(result, default=list), flush=True)


if __name__ == "__main__":
    main()
