"""Driver of scripts/heat-functional: runs Heat's functional tests against a fresh `stoker api`,
then heat-tempest-plugin's Heat-native functional and scenario tests (a fresh server each).

Runs inside .heat-functional-venv (Heat's tests and their clients); Stoker itself runs from
.venv as a separate process, unpatched.  HEAT_URL gives heatclient the endpoint (project id in
the URL) and OS_NO_CLIENT_AUTH=True makes it send no token, which `--auth noauth` accepts.  The
few tests that ask Keystone's catalogue get it from a tiny local stand-in (KeystoneStub), which
also points them at `stoker api`'s own compute and network routes (key pairs, network listings).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import heat_integrationtests
import heat_tempest_plugin

REPO = Path(__file__).resolve().parent.parent
PORTS = range(18300, 18400)
PROJECT = "heat-functional"

# Modules whose tests need only Heat-native resource types.
MODULES = [
    "test_abandon_adopt", "test_admin_actions", "test_autoscaling", "test_conditional_exposure",
    "test_conditions", "test_create_update",
    "test_default_parameters", "test_delete", "test_env_merge", "test_heat_autoscaling",
    "test_immutable_parameters", "test_instance_group",
    "test_nested_get_attr", "test_preview_update", "test_resource_chain", "test_resource_group",
    "test_simultaneous_update", "test_software_deployment_group", "test_stack_cancel",
    "test_template_resource", "test_translation",
    "test_template_versions", "test_update_restricted", "test_validation",
    "test_versionnegotiation",
]

# Modules left out, each with why.  The tests of the modules above that need an image and a flavor
# (AWS::EC2::Instance members, simulated) get those of INVENTORY, which `stoker api` checks against.
EXCLUDED = {
    "test_aws_stack": "AWS::CloudFormation::Stack templates are fetched from Swift",
    "test_cancel_update": "cancels a server's update while it runs: a simulated server's update ends at once",
    "test_keystone_user_with_domain": "OS::Keystone::* types and a Keystone admin client",
    "test_notifications": "reads Heat's notifications from RabbitMQ",
    "test_purge": "runs heat-manage on the Heat host",
    "test_replace_deprecated": "OS::Heat::SoftwareDeployments (simulated) changed to its substitute, "
                               "OS::Heat::SoftwareDeploymentGroup, is replaced where Heat updates it in place",
    "test_snapshot_restore": "reads the server's image through Nova's GET /servers/ID, which the cloud routes do not "
                             "serve, and expects a restore to rebuild it from a snapshot image",
    "test_swiftsignal_update": "OS::Heat::SwiftSignalHandle needs Swift",
}

# Single tests left out of the modules run, each with why (the rest of their module runs).
EXCLUDED_TESTS = {
    "test_create_update.UpdateStackTest.test_stack_update_flavor_volume":
        "OS::Nova::Server and OS::Cinder::Volume(Attachment), with an image and a flavor",
}

# heat-tempest-plugin's modules whose tests need only Heat-native types ("plugin." prefix on
# the command line selects among them).
PLUGIN_MODULES = [
    "functional.test_external_ref", "functional.test_hooks", "functional.test_preview",
    "functional.test_remote_stack", "functional.test_resources_list", "functional.test_stack_events",
    "functional.test_stack_outputs", "functional.test_stack_tags", "functional.test_template_validate",
    "functional.test_templates", "functional.test_unicode_template", "functional.test_waitcondition",
    "scenario.test_remote_deeply_nested",
]
PLUGIN_EXCLUDED = {
    "functional.test_event_sinks": "reads the events from a Zaqar queue",
    "scenario.test_aodh_alarm": "OS::Aodh::GnocchiAggregationByResourcesAlarm and Gnocchi",
    # the others create Nova servers, Neutron networks, Cinder volumes or Octavia balancers
}

# The cloud `stoker api` checks the tests' images and flavors against (stoker/resources/openstack/inventory.py);
# Manila is left out of its services, as test_conditional_exposure expects of the gate's cloud.
IMAGES = {"image_ref": "fedora-heat-test", "minimal_image_ref": "cirros-0.6.2-x86_64-disk"}
FLAVORS = {"instance_type": "m1.small", "minimal_instance_type": "m1.tiny"}
# The networks the tests name (fixed_network_name, floating_network_name); the key pairs are the
# ones the tests make through `stoker api`'s compute routes (none listed: only those are valid).
NETWORKS = {"fixed_network_name": "heat-net", "floating_network_name": "public"}
INVENTORY = f"""\
images: [{', '.join(IMAGES.values())}]
flavors: [{', '.join(FLAVORS.values())}]
networks: [{{name: heat-net, id: 0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9}},
           {{name: public, id: 5e4d3c2b-1a09-4876-9543-210fedcba987, external: true}}]
subnets: [{{name: heat-subnet, cidr: 10.0.0.0/24, network: heat-net}},
          {{name: public-subnet, cidr: 172.24.4.0/24, network: public}}]
keypairs: []
availability_zones: [nova]
services: [nova, glance, neutron, cinder, heat, keystone, swift, octavia, aodh]
"""

TEMPEST_CONF = """\
[heat_plugin]
auth_url = http://127.0.0.1:{keystone_port}/v3
username = demo
password = unused
project_name = {project}
admin_username = admin
admin_password = unused
admin_project_name = {project}
user_domain_name = Default
project_domain_name = Default
region = RegionOne
hidden_stack_tag = data-processing-cluster
build_interval = 1
build_timeout = {timeout}
convergence_engine_enabled = true
""" + "".join(f"{key} = {value}\n" for key, value in {**IMAGES, **FLAVORS, **NETWORKS}.items()) + """\
"""


class KeystoneStub(BaseHTTPRequestHandler):
    """Keystone v3 as far as the suite asks: version discovery, and a token whose catalogue lists
    the orchestration endpoint and `stoker api`'s compute and network ones (key pairs, network
    listings: what the tests' set-ups ask Nova and Neutron); the token itself is never checked."""

    heat_url = ""

    def _reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        root = f"http://{self.headers['Host']}/v3/"
        self._reply(200, {"version": {"id": "v3.14", "status": "stable", "updated": "2020-01-01T00:00:00Z",
                                      "links": [{"rel": "self", "href": root}],
                                      "media-types": [{"base": "application/json",
                                                       "type": "application/vnd.openstack.identity-v3+json"}]}})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        domain = {"id": "default", "name": "Default"}
        stoker = self.heat_url.split("/v1/")[0]
        urls = {"orchestration": self.heat_url, "compute": f"{stoker}/cloud/{PROJECT}/compute/v2.1",
                "network": f"{stoker}/cloud/{PROJECT}/network"}
        self._reply(201, {"token": {
            "methods": ["password"], "issued_at": "2020-01-01T00:00:00.000000Z",
            "expires_at": "2999-01-01T00:00:00.000000Z",
            "user": {"id": "demo", "name": "demo", "domain": domain},
            "project": {"id": PROJECT, "name": PROJECT, "domain": domain},
            "roles": [{"id": "member", "name": "member"}],
            "catalog": [{"id": kind, "type": kind, "name": kind, "endpoints": [
                {"id": f"{kind}-public", "interface": "public", "region": "RegionOne", "region_id": "RegionOne",
                 "url": url}]} for kind, url in urls.items()],
        }}, {"X-Subject-Token": "stoker-heat-functional"})

    def log_message(self, *args) -> None:
        pass


def start_keystone(port: int, heat_url: str) -> ThreadingHTTPServer:
    handler = type("Handler", (KeystoneStub,), {"heat_url": heat_url})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port(wanted: int | None, after: int | None = None) -> int:
    """The wanted port, or the first free one in this runner's range (the ones above ``after`` first)."""
    others = sorted((p for p in PORTS if p != after), key=lambda p: (after is not None and p < after, p))
    for port in [wanted] if wanted else others:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def start_stoker(port: int, home: Path) -> subprocess.Popen:
    """`stoker api --auth noauth` on loopback with a fresh STOKER_HOME; returns once it answers."""
    (home / "cloud.yaml").write_text(INVENTORY)
    env = dict(os.environ, STOKER_HOME=str(home), STOKER_INVENTORY=str(home / "cloud.yaml"))
    env.pop("STOKER_DB_URL", None)
    log = open(home / "api.log", "wb")
    proc = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "stoker"), "api", "--host", "127.0.0.1", "--port", str(port),
         "--auth", "noauth", "--log-level", "warning"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"stoker api exited early; see {home / 'api.log'}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except OSError as exc:
            if getattr(exc, "code", None):  # an HTTP error is an answer
                return proc
            time.sleep(0.2)
    stop(proc)
    raise SystemExit("stoker api did not answer within 60 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def selection(patterns: list[str]) -> tuple[str, str]:
    """(include regex, exclude-list text) for stestr, Heat's own suite."""
    prefix = r"heat_integrationtests\.functional\."
    include = "|".join(patterns) if patterns else (
        "^" + prefix + "(" + "|".join(MODULES) + r")\.")
    exclude = "\n".join([prefix + module + r"\." for module in EXCLUDED]
                        + [prefix + re.escape(test) for test in EXCLUDED_TESTS])
    return include, exclude + "\n"


def plugin_selection(patterns: list[str]) -> tuple[str, str]:
    """(include regex, exclude-list text) for stestr, heat-tempest-plugin's Heat-native tests."""
    prefix = r"heat_tempest_plugin\.tests\."
    include = "|".join(patterns) if patterns else (
        "^" + prefix + "(" + "|".join(re.escape(m) for m in PLUGIN_MODULES) + r")\.")
    exclude = "\n".join(prefix + re.escape(test) + r"(\.|\[|$)" for test in PLUGIN_EXCLUDED)
    return include, exclude + "\n"


def run_suite(work: Path, port: int, keystone_port: int, include: str, exclude: str, concurrency: int,
              timeout: int, tests: Path) -> int:
    """Run the tests under ``tests`` (a package folder) with stestr in ``work``; prints the summary."""
    conf_dir = work / "tempest"
    conf_dir.mkdir()
    (conf_dir / "tempest.conf").write_text(
        TEMPEST_CONF.format(keystone_port=keystone_port, project=PROJECT, timeout=timeout))
    (work / "exclude.txt").write_text(exclude)
    top = Path(heat_integrationtests.__file__).parent.parent
    env = dict(os.environ, HEAT_URL=f"http://127.0.0.1:{port}/v1/{PROJECT}", OS_NO_CLIENT_AUTH="True",
               TEMPEST_CONFIG_DIR=str(conf_dir), TEMPEST_CONFIG="tempest.conf")
    stestr = [str(Path(sys.executable).parent / "stestr"), "--test-path", str(tests), "--top-dir", str(top)]
    with open(work / "tests.log", "wb") as log:
        subprocess.run(stestr + ["run", "--concurrency", str(concurrency), "--exclude-list",
                                 str(work / "exclude.txt"), include],
                       env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    return summarise((work / "tests.log").read_text(errors="replace"))


_RESULT = re.compile(r"^\{\d+\} (\S+)(?: \[[\d.]+s\])? \.\.\. (ok|FAILED|SKIPPED)", re.M)


def summarise(log: str) -> int:
    """Count the results subunit-trace printed (one line per test instance, scenarios included)."""
    results = [(m.group(1), m.group(2)) for m in _RESULT.finditer(log)]
    failed = sorted({test_id for test_id, outcome in results if outcome == "FAILED"})
    for test_id in failed:
        print("FAILED", test_id)
    passed = sum(outcome == "ok" for _, outcome in results)
    skipped = sum(outcome == "SKIPPED" for _, outcome in results)
    print(f"{passed} passed, {len(failed)} failed, {skipped} skipped")
    return 1 if failed or not results else 0


def main() -> int:
    global PORTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help=f"default: first free in {PORTS.start}-{PORTS.stop - 1}")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=180, help="per stack action, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    parser.add_argument("--suite", choices=("both", "heat", "plugin"), default="both",
                        help="Heat's functional tests, heat-tempest-plugin's Heat-native ones, or both")
    parser.add_argument("--ports", default=f"{PORTS.start}-{PORTS.stop - 1}", help="the range to bind in, A-B")
    parser.add_argument("patterns", nargs="*", help="test id regexes (default: the Heat-native modules)")
    args = parser.parse_args()
    low, _, high = args.ports.partition("-")
    PORTS = range(int(low), int(high or low) + 1)
    suites = {"heat": (selection, Path(heat_integrationtests.__file__).parent / "functional"),
              "plugin": (plugin_selection, Path(heat_tempest_plugin.__file__).parent / "tests")}
    failed = 0
    for name in (("heat", "plugin") if args.suite == "both" else (args.suite,)):
        select, tests = suites[name]
        print(f"== {name}: {tests}")
        failed |= run_one(args, select, tests)
    return failed


def run_one(args: argparse.Namespace, select: Any, tests: Path) -> int:
    """One suite against a fresh `stoker api` (and Keystone stand-in) of its own."""
    work = Path(tempfile.mkdtemp(prefix="heat-functional-"))
    (work / "home").mkdir()
    port = free_port(args.port)
    keystone_port = free_port(None, after=port)
    keystone = start_keystone(keystone_port, f"http://127.0.0.1:{port}/v1/{PROJECT}")
    server = start_stoker(port, work / "home")
    try:
        include, exclude = select(args.patterns)
        return run_suite(work, port, keystone_port, include, exclude, args.concurrency, args.timeout, tests)
    finally:
        stop(server)
        keystone.shutdown()
        if args.keep:
            print(f"(test log: {work / 'tests.log'}, server log: {work / 'home' / 'api.log'})")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
