"""Heat's side of scripts/heat-corpus: Heat's own verdict on templates, in-process.

Runs inside .heat-corpus-venv (the openstack-heat package).  Reads a JSON list of
``{"template": path, "environment": path}`` on stdin and writes one JSON verdict per
line: ``{"template", "validate": {"ok", "message"}}``.  The files map and the
environment are built by heatclient's own code, as ``openstack stack create`` does;
the verdict is ``EngineService.validate_template`` on an in-memory database, with no
other service and no credentials (nothing here reaches the network).
"""

from __future__ import annotations

import json
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from oslo_config import cfg  # noqa: E402
from oslo_db import options as db_options  # noqa: E402

from heat.common import config  # noqa: E402,F401 - registers Heat's options
from heat.common import context  # noqa: E402
from heat.engine import resource, resources, service  # noqa: E402
from heatclient.common import template_utils  # noqa: E402
import oslo_messaging  # noqa: E402


def engine_service() -> service.EngineService:
    # Heat's own types ask Keystone's catalogue whether Heat is there; it is, here
    resource.Resource.is_service_available = classmethod(lambda cls, ctx: (True, None))
    db_options.set_defaults(cfg.CONF, connection="sqlite://")
    cfg.CONF([], project="heat", default_config_files=[])
    resources.initialise()
    return service.EngineService("heat-corpus", "engine")


def inputs(template_path: str, environment_path: str | None) -> tuple[dict, dict, dict]:
    """(template, files, environment) as heatclient sends them."""
    files, template = template_utils.get_template_contents(template_file=template_path)
    env_files, environment = template_utils.process_multiple_environments_and_files(
        env_paths=[environment_path] if environment_path else [])
    return template, {**files, **env_files}, environment


def validate(svc, ctx, job: dict) -> dict:
    try:
        template, files, environment = inputs(job["template"], job.get("environment"))
        result = svc.validate_template(ctx, template, params=environment, files=files)
    except oslo_messaging.rpc.dispatcher.ExpectedException as exc:
        result = {"Error": str(exc.exc_info[1])}
    except Exception as exc:  # a crash of Heat's is its verdict too: the API answers 500
        result = {"Error": f"{type(exc).__name__}: {exc}"}
    if isinstance(result, dict) and "Error" not in result:
        return {"ok": True, "message": ""}
    return {"ok": False, "message": str(result.get("Error") if isinstance(result, dict) else result)}


def main() -> int:
    jobs = json.load(sys.stdin)
    svc = engine_service()
    ctx = context.RequestContext(user_id="corpus", project_id="corpus", is_admin=True, auth_token="none")
    for job in jobs:
        print(json.dumps({"template": job["template"], "validate": validate(svc, ctx, job)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
