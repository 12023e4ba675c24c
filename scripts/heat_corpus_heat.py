"""Heat's side of scripts/heat-corpus: Heat's own verdict on templates, in-process.

Runs inside .heat-corpus-venv (the openstack-heat package).  Reads a JSON list of
``{"template": path, "environment": path, "create": bool}`` on stdin and writes one
JSON line per template: ``{"template", "validate": {"ok", "message"}, "create": ...}``.
The files map and the environment are built by heatclient's own code, as
``openstack stack create`` does;
the verdicts are ``EngineService.validate_template`` and, for a create, the checks
``preview_stack`` makes (those a create makes before it starts), on a scratch SQLite
database, with no other service and no credentials (nothing here reaches the network).
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from oslo_config import cfg  # noqa: E402
from oslo_db import options as db_options  # noqa: E402

from heat.common import config  # noqa: E402,F401 - registers Heat's options
from heat.common import context, messaging  # noqa: E402
from heat.db import migration  # noqa: E402
from heat.engine import resource, resources, service  # noqa: E402
from heatclient.common import template_utils  # noqa: E402
import oslo_messaging  # noqa: E402


def engine_service(database: str) -> service.EngineService:
    # Heat's own types ask Keystone's catalogue whether Heat is there; it is, here
    resource.Resource.is_service_available = classmethod(lambda cls, ctx: (True, None))
    db_options.set_defaults(cfg.CONF, connection=f"sqlite:///{database}")
    cfg.CONF([], project="heat", default_config_files=[])
    resources.initialise()
    migration.db_sync()  # a create's checks look for a stack of the same name
    messaging.setup("fake://")  # no broker: what a create would send goes nowhere
    return service.EngineService("heat-corpus", "engine")


def inputs(template_path: str, environment_path: str | None) -> tuple[dict, dict, dict]:
    """(template, files, environment) as heatclient sends them."""
    files, template = template_utils.get_template_contents(template_file=template_path)
    env_files, environment = template_utils.process_multiple_environments_and_files(
        env_paths=[environment_path] if environment_path else [])
    # the client sends the files map as JSON: file contents arrive as text
    files = {name: text.decode() if isinstance(text, bytes) else text for name, text in {**files, **env_files}.items()}
    return template, files, environment


def verdict(call, job: dict) -> dict:
    """Heat's answer to ``call(template, files, environment)``: accepted, or why not."""
    try:
        template, files, environment = inputs(job["template"], job.get("environment"))
        result = call(template, files, environment)
    except oslo_messaging.rpc.dispatcher.ExpectedException as exc:
        result = {"Error": str(exc.exc_info[1])}
    except Exception as exc:  # a crash of Heat's is its verdict too: the API answers 500
        result = {"Error": f"{type(exc).__name__}: {exc}"}
    if isinstance(result, dict) and "Error" in result:
        return {"ok": False, "message": str(result["Error"])}
    return {"ok": True, "message": ""}


def main() -> int:
    jobs = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as work:
        svc = engine_service(f"{work}/heat.db")
        # an admin: Stoker's command line has no resource-type policy
        ctx = context.RequestContext(user_id="corpus", project_id="corpus", is_admin=True, auth_token="none",
                                     roles=["admin"])
        for job in jobs:
            row = {"template": job["template"], "validate": verdict(
                lambda t, f, e: svc.validate_template(ctx, t, params=e, files=f), job)}
            if job.get("create"):  # what a create checks before it starts: the preview's checks
                row["create"] = verdict(lambda t, f, e: svc.preview_stack(ctx, "corpus", t, e, f, {}), job)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
