"""Cloudify's side of ``bench/workflows.py --versus``: run in a virtualenv with cloudify-common 7.0.5.

``python workflows_cfy.py BLUEPRINT TYPES_DIR RESULT_JSON``: the blueprint through
Cloudify's local workflow (``cloudify.workflows.local``, every state in memory, as
``cfy init`` + ``cfy executions start`` without a manager): ``init_env`` (parse,
plan, node instances), then ``install`` and ``uninstall``.  Writes each phase's
monotonic clock readings and the process's CPU time at each (the parent compares
them with its own clock: ``time.perf_counter`` is the system's monotonic clock).
The standard types URL resolves to TYPES_DIR/types.yaml; nothing is fetched.
"""

import json
import os
import sys
import time


def mark(marks, name):
    marks[name] = {"at": time.perf_counter(), "cpu": time.process_time()}


def main():
    blueprint, types_dir, result = sys.argv[1:4]
    marks = {}
    mark(marks, "started")
    from cloudify.workflows import local
    from dsl_parser.import_resolver.default_import_resolver import DefaultImportResolver

    class LocalTypes(DefaultImportResolver):
        def __init__(self):
            super().__init__(rules=[], fallback=False)

        def fetch_import(self, import_url, **kwargs):
            if import_url.endswith("/types.yaml"):
                with open(os.path.join(types_dir, "types.yaml")) as handle:
                    return handle.read()
            raise RuntimeError(f"not fetched: {import_url}")

        def retrieve_plugin(self, import_url, **kwargs):
            return None

    mark(marks, "imported")
    env = local.init_env(blueprint, name="bench", resolver=LocalTypes())
    mark(marks, "planned")
    env.execute("install", task_retries=0)
    mark(marks, "installed")
    installed = sorted({i.state for i in env.storage.get_node_instances()})
    env.execute("uninstall", task_retries=0)
    mark(marks, "uninstalled")
    with open(result, "w") as handle:
        json.dump({"marks": marks, "instances": len(env.storage.get_node_instances()),
                   "installed_states": installed}, handle)


if __name__ == "__main__":
    main()
