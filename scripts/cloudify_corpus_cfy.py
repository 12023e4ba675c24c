"""Cloudify's side of scripts/cloudify-corpus: run in a virtualenv with cloudify-common 7.0.5.

``python cloudify_corpus_cfy.py TYPES_DIR PLUGINS_DIR < paths`` prints one JSON line per
blueprint path read: ``{"path", "ok", "error"}`` and, when it parses, the plan's summary
(``summary`` below, the same shape Stoker's side makes). The standard types URL and
``plugin:NAME`` imports resolve to the same local files Stoker is given.
"""

import json
import os
import re
import sys

from dsl_parser import parser, tasks
from dsl_parser.import_resolver.default_import_resolver import DefaultImportResolver

TYPES_URL = re.compile(r"(getcloudify\.org|cloudify\.co)/spec/cloudify/[^/]+/types\.yaml$|cloudify/types/types\.yaml$")


class LocalResolver(DefaultImportResolver):
    """Standard types and plugins from local folders; anything else is refused (no network)."""

    def __init__(self, types_dir, plugins_dir):
        super().__init__(rules=[], fallback=False)
        self.types_dir, self.plugins_dir = types_dir, plugins_dir

    def fetch_import(self, import_url, dsl_version=None, **kwargs):
        version = str(dsl_version or "").replace("cloudify_dsl_", "")
        if TYPES_URL.search(import_url) or re.search(r"cloudify/types/types_\d_\d\.yaml$", import_url):
            # as the manager's resources: types_1_4.yaml for 1_4 if there is one, else types.yaml
            for name in (f"types_{version}.yaml", "types.yaml"):
                if os.path.exists(os.path.join(self.types_dir, name)):
                    with open(os.path.join(self.types_dir, name)) as handle:
                        return handle.read()
        if import_url.startswith("plugin:"):
            name = import_url[len("plugin:"):].split("?")[0]
            found = self._plugin_yamls_for_dsl_version(os.path.join(self.plugins_dir, name), version)
            if not found:
                raise RuntimeError(f"plugin {name} is not in {self.plugins_dir}")
            with open(found[0]) as handle:
                return handle.read()
        if "://" in import_url and not import_url.startswith("file:"):
            raise RuntimeError(f"not fetched: {import_url}")
        return super().fetch_import(import_url, **kwargs)

    def retrieve_plugin(self, import_url, **kwargs):
        return None


def summary(plan):
    deployment = tasks.prepare_deployment_plan(plan, inputs=_inputs(plan))
    counts = {}
    for instance in deployment["node_instances"]:
        counts[instance["node_id"]] = counts.get(instance["node_id"], 0) + 1
    return {"nodes": {n["name"]: [n["type"], counts.get(n["name"], 0)] for n in deployment["nodes"]},
            "relationships": sorted({(n["name"], r["target_id"], r["type"]) for n in deployment["nodes"]
                                     for r in n.get("relationships", [])}),
            "outputs": sorted(deployment.get("outputs", {})), "capabilities": sorted(deployment.get("capabilities", {}))}


def _inputs(plan):
    """A value for each input without a default: its type's simplest value."""
    simple = {"integer": 1, "float": 1.0, "boolean": True, "list": [], "dict": {}}
    return {name: simple.get(d.get("type"), "x") for name, d in plan["inputs"].items() if "default" not in d}


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
        except Exception as exc:  # noqa: BLE001
            result.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        print(json.dumps(result, default=list), flush=True)


if __name__ == "__main__":
    main()
