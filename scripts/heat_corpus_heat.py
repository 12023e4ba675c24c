"""Heat's side of scripts/heat-corpus: Heat's own verdict on templates, in-process.

Runs inside .heat-corpus-venv (the openstack-heat package).  Reads a JSON list of
``{"template": path, "environment": path, "create": stack name or null, "create_environment":
path}`` on stdin and
writes one JSON line per template: ``{"template", "validate": {"ok", "message"},
"create": {"status", "reason", "outputs"}}``.  The files map and the environment are
built by heatclient's own code, as ``openstack stack create`` does.  The verdicts are
``EngineService.validate_template`` and ``EngineService.create_stack`` with Heat's
legacy (non-convergence) engine on a scratch SQLite database: nothing reaches the
network, Keystone is Heat's own fake client, the custom constraints that would ask
another service accept the value, the engine's RPC to itself (nested stacks, software
configs) is a direct call, and its sub-threads run at once, so a create is over when
``create_stack`` returns.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
import uuid
import warnings
from unittest import mock

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from oslo_service import backend  # noqa: E402

backend.init_backend(backend.BackendType.THREADING)  # as Heat's unit tests: no eventlet

from oslo_config import cfg  # noqa: E402
from oslo_db import options as db_options  # noqa: E402

from heat.common import config  # noqa: E402,F401 - registers Heat's options
from heat.common import context, messaging, service_utils  # noqa: E402
from heat.db import migration  # noqa: E402
from heat.engine import clients, constraints, function, resource, resources, scheduler, service, translation  # noqa: E402
from heat.engine.clients.os.keystone import KeystoneClientPlugin, fake_keystoneclient  # noqa: E402
from heat.rpc import client as rpc_client  # noqa: E402
from heatclient.common import template_utils  # noqa: E402
import oslo_messaging  # noqa: E402

CREATE_TIMEOUT_MINUTES = 1  # the same on Stoker's side: a wait nobody signals fails after it


class _FinishedThread:
    """What Heat gets back for a sub-thread that has already run: its callbacks run at once."""

    def link(self, callback, *args, **kwargs):
        callback(self, *args, **kwargs)


class _ThreadsRunAtOnce(service.ThreadGroupManager):
    """Heat's thread manager, running each stack action in the calling thread: a nested
    stack's create is over when its parent's ``create_stack`` call returns."""

    def start(self, stack_id, func, *args, **kwargs):
        try:
            func(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a sub-thread's error ends that thread only, as in Heat
            pass
        return _FinishedThread()


def _direct_rpc(svc: service.EngineService):
    """The engine's RPC to itself as a direct call, raising what the caller would get."""
    def call(client, ctxt, msg, version=None, timeout=None):
        method, kwargs = msg
        try:
            return getattr(svc, method)(ctxt, **kwargs)
        except oslo_messaging.rpc.dispatcher.ExpectedException as exc:
            raise exc.exc_info[1] from None
    rpc_client.EngineClient.call = call
    rpc_client.EngineClient.cast = lambda client, ctxt, msg, version=None: call(client, ctxt, msg)


def engine_service(database: str) -> service.EngineService:
    # Heat's own types ask Keystone's catalogue whether Heat is there; it is, here
    resource.Resource.is_service_available = classmethod(lambda cls, ctx: (True, None))
    # a custom constraint that asks another service (nova.flavor, glance.image, ...) accepts the
    # value, as Stoker's do when no plug-in checks them (Heat's unit tests stub them the same way)
    # (Heat's own checks, ip_addr, cron_expression..., override ``validate``: they still run)
    constraints.BaseCustomConstraint.validate = lambda constraint, value, context: True
    # stack users, trusts, domain projects: Heat's own fake Keystone (as its unit tests)
    KeystoneClientPlugin._create = lambda plugin, version=None: fake_keystoneclient.FakeKeystoneClient()
    db_options.set_defaults(cfg.CONF, connection=f"sqlite:///{database}")
    cfg.CONF([], project="heat", default_config_files=[])
    cfg.CONF.set_override("convergence_engine", False)
    scheduler.TaskRunner._sleep = lambda runner, wait_time: time.sleep(0.01 if wait_time else 0)
    resources.initialise()
    migration.db_sync()  # a create's checks look for a stack of the same name
    messaging.setup("fake://")  # no broker: what a create would send goes nowhere
    svc = service.EngineService("heat-corpus", "engine")
    svc.engine_id = service_utils.generate_engine_id()
    svc.thread_group_mgr = _ThreadsRunAtOnce()
    _direct_rpc(svc)
    return svc


def simulate_services(type_names: list[str]) -> None:
    """Heat's plug-ins of ``type_names`` with every service call a no-op, so that Heat can create
    them without a cloud (``--simulated --create``): the create, update and delete handlers only
    set a new physical id (or nothing) and report complete at once; every service but Keystone
    (Heat's own fake answers there) is a mock whose images are active and flavors big enough; a name
    that Heat would look up as an id stays the name (as Stoker's simulated resources take either);
    the attributes a service would answer are null (so the outputs that read them are compared by
    whether they resolve, not by value).  Heat's own logic around them -- the create-time property
    checks, validate(), the dependency order, the outputs -- runs as it is."""
    for name in type_names:
        try:
            cls = resources.global_env().get_class(name)
        except Exception:  # noqa: BLE001 - a type this Heat does not register: nothing to stub
            continue
        cls.handle_create = lambda self: self.resource_id_set(str(uuid.uuid4()))
        cls.handle_update = lambda self, json_snippet, tmpl_diff, prop_diff: None
        cls.handle_delete = lambda self: None
        for action in ("create", "update", "delete"):
            setattr(cls, f"check_{action}_complete", lambda self, data: True)
        cls._resolve_attribute = lambda self, attribute: None
        cls._show_resource = lambda self: {}
    real_client, real_plugin = clients.OpenStackClients.client, clients.OpenStackClients.client_plugin
    clients.OpenStackClients.client = lambda self, name, version=None: (
        real_client(self, name, version) if name == "keystone" else _service())
    clients.OpenStackClients.client_plugin = lambda self, name: (
        real_plugin(self, name) if name == "keystone" else _service())
    translation.resolve_and_find = (lambda value, *args, **kwargs:
                                    function.resolve(value) if isinstance(value, function.Function) else value)


def _service() -> mock.MagicMock:
    """A service client (or client plug-in) answering every call; what plug-ins compare is set."""
    service = mock.MagicMock()
    service.get_image.return_value = mock.MagicMock(status="active", min_ram=0, min_disk=0, size=0)
    service.get_flavor.return_value = mock.MagicMock(ram=1 << 20, disk=1 << 20, vcpus=64)
    return service


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


def _error_class(exc: BaseException) -> str:
    return type(exc).__name__.removesuffix("_Remote")


def create(svc, ctx, name: str, job: dict) -> dict:
    """Heat's create of the template: final status, the reason's class, each output."""
    try:
        template, files, environment = inputs(job["template"], job.get("create_environment"))
        args = {"timeout_mins": CREATE_TIMEOUT_MINUTES, "disable_rollback": True}
        identity = svc.create_stack(ctx, name, template, environment, files, args)
    except oslo_messaging.rpc.dispatcher.ExpectedException as exc:
        return {"status": "REFUSED", "reason": _error_class(exc.exc_info[1]), "message": str(exc.exc_info[1])}
    except Exception as exc:  # noqa: BLE001 - the API would answer 500
        return {"status": "REFUSED", "reason": _error_class(exc), "message": f"{type(exc).__name__}: {exc}"}
    try:
        shown = svc.show_stack(ctx, identity, resolve_outputs=True)[0]
    except Exception as exc:  # noqa: BLE001 - Heat's show failing is its verdict (a disagreement)
        return {"status": "SHOW_CRASHED", "reason": _error_class(exc), "message": f"{type(exc).__name__}: {exc}"}
    reason = shown.get("stack_status_reason") or ""
    outputs = {o["output_key"]: ({"error": o["output_error"]} if "output_error" in o else {"value": o.get("output_value")})
               for o in shown.get("outputs") or []}
    return {"status": f"{shown['stack_action']}_{shown['stack_status']}", "reason": reason_class(reason), "message": reason,
            "outputs": outputs}


def reason_class(reason: str) -> str:
    """The exception named in a status reason (``Resource CREATE failed: StackValidationFailed: ...``)."""
    for part in reason.split(": ")[1:]:
        if part.replace("_", "").isalnum() and part[:1].isupper():
            return part
    return ""


def main() -> int:
    jobs = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as work:
        svc = engine_service(f"{work}/heat.db")
        if len(sys.argv) > 2 and sys.argv[1] == "--simulate":  # a file naming the types Stoker simulates
            with open(sys.argv[2]) as names:
                simulate_services(json.load(names))
        # an admin: Stoker's command line has no resource-type policy
        ctx = context.RequestContext(user_id="corpus", project_id="corpus", is_admin=True, auth_token="none",
                                     auth_url="http://keystone.invalid:5000/v3",
                                     roles=["admin"])
        for job in jobs:
            row = {"template": job["template"], "validate": verdict(
                lambda t, f, e: svc.validate_template(ctx, t, params=e, files=f), job)}
            if job.get("create"):
                row["create"] = create(svc, ctx, job["create"], job)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
