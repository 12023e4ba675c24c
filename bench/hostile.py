"""Hostile inputs against the CLI and the API: time and peak memory of each, and what it answered.

    python bench/hostile.py                 # every case, CLI then API (ports 18100-18199 by default)
    python bench/hostile.py --only repeat   # the cases whose name contains "repeat"
    python bench/hostile.py --only bp --instances 10000   # the blueprint half, a smaller followed install

Each case must answer in under 5 s with under 500 MB and a clear error (no traceback), or
succeed within its limit.  Time is judged as CPU time (user + system) of the process doing
the work, so a busy machine does not fail a case; wall time is printed beside it.  CLI cases
run ``stoker`` as a child process (peak memory: its maximum resident set, from ``wait4``);
API cases run against one fresh ``stoker api`` server per case (CPU: the server's, from
``/proc``; peak memory: the server's VmHWM after the request).  The last case
measures a light ``GET /stacks`` of one project while another project's heavy requests run.
Prints one line per case and exits non-zero if any case broke its bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import httpx

ROOT = Path(__file__).resolve().parent.parent
API = "import sys; from stoker.cli.api_cmds import api; api(sys.argv[1:], prog_name='stoker api')"
CLI = "import sys; from stoker.cli import main; main(sys.argv[1:], prog_name='stoker')"
MAX_SECONDS, MAX_MB = 5.0, 500
HOT = "heat_template_version: 2018-08-31\n"


# -- the inputs ---------------------------------------------------------------------------------
def value_template(value: object, extra: str = "") -> str:
    return HOT + extra + "resources:\n  v:\n    type: OS::Heat::Value\n    properties:\n      value: " \
        + json.dumps(value) + "\noutputs:\n  v: {value: {get_attr: [v, value]}}\n"


def repeat_3x200() -> str:
    items = [str(i) for i in range(200)]
    return value_template({"repeat": {"template": {"k": "<a><b><c>"},
                                      "for_each": {"<a>": items, "<b>": items, "<c>": items}}})


def alias_expansion() -> str:
    """Anchors (under a parameter default) expanding to just under the loader's node limit."""
    return (HOT + "parameters:\n  junk:\n    type: json\n    default:\n"
            "      a0: &a0 [" + ", ".join(["abcdefghij"] * 60) + "]\n"
            "      a1: &a1 [" + ", ".join(["*a0"] * 60) + "]\n"
            "resources:\n  v:\n    type: OS::Heat::Value\n    properties:\n"
            "      value: [" + ", ".join(["*a1"] * 60) + "]\n")


def deep_yaml(levels: int = 5000) -> str:
    return HOT + "description: x\noutputs:\n  o: {value: " + "[" * levels + "]" * levels + "}\n"


def deep_json(levels: int = 5000) -> str:
    return '{"heat_template_version": "2018-08-31", "outputs": {"o": {"value": ' + "[" * levels \
        + "]" * levels + "}}}"


def function_chain(levels: int = 3000) -> str:
    """list_join inside list_join, thousands deep (written as text: json.dumps would recurse)."""
    chain = '{"list_join": [",", [' * levels + '"x"' + "]]}" * levels
    return '{"heat_template_version": "2018-08-31", "outputs": {"o": {"value": ' + chain + "}}}"


def nested_template_strings(levels: int = 150) -> str:
    """OS::Heat::Stack whose template property holds a template holding another, and so on.

    YAML block scalars, one column deeper per mapping: quoting each level (JSON) would double
    its escapes per level, so ~150 levels is as deep as fits in max_template_size.
    """
    text = HOT
    for _ in range(levels):
        inner = "".join("    " + line + "\n" for line in text.splitlines())
        text = HOT + "resources:\n s:\n  type: OS::Heat::Stack\n  properties:\n   template: |\n" + inner
    return text


def yaql_nesting(levels: int = 5000) -> str:
    return value_template({"yaql": {"expression": "(" * levels + "1" + ")" * levels}})


def fanout_files(root: Path) -> Path:
    """t.yaml -> l1 -> ... -> l5, ten resources of the next level each: 111,111 resources."""
    for level in range(5, 0, -1):
        member = f"l{level + 1}.yaml" if level < 5 else "OS::Heat::None"
        body = "".join(f"  r{i}:\n    type: {member}\n" for i in range(10))
        (root / f"l{level}.yaml").write_text(HOT + "resources:\n" + body)
    (root / "t.yaml").write_text(HOT + "resources:\n  top:\n    type: l1.yaml\n")
    return root / "t.yaml"


def get_file_dev_zero(root: Path) -> Path:
    path = root / "zero.yaml"
    path.write_text(value_template({"get_file": "/dev/zero"}))
    return path


def str_replace_blowup() -> str:
    return value_template({"str_replace": {"template": {"get_param": "t"}, "params": {"a": {"get_param": "v"}}}},
                          extra="parameters:\n  t: {type: string, default: " + "a" * 100_000 + "}\n"
                          "  v: {type: string, default: " + "b" * 100_000 + "}\n")


#: a pattern re backtracks on for hours (regex too: it meets max_pattern_seconds) and a value that makes it
BACKTRACKING, BACKTRACKED = "(a|aa)+$", "a" * 60 + "!"


def backtracking_pattern() -> str:
    return HOT + "parameters:\n  p:\n    type: string\n    default: " + BACKTRACKED + "\n    constraints:\n" \
        "      - allowed_pattern: " + json.dumps(BACKTRACKING) + "\nresources: {}\n"


def local_command() -> dict:
    return {"heat_template_version": "2018-08-31", "resources": {"run": {
        "type": "Stoker::Local::Command", "properties": {"create": "echo ran"}}}}


def _cap_memory() -> None:
    """A case gone wrong must not take the (shared) machine with it: 3 GB of address space at most."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


# -- running -------------------------------------------------------------------------------------
@dataclass
class Outcome:
    case: str
    where: str
    seconds: float  # wall
    peak_mb: float
    answer: str
    clear: bool
    cpu: float = 0.0

    @property
    def ok(self) -> bool:
        return self.cpu < MAX_SECONDS and self.peak_mb < MAX_MB and self.clear

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return (f"{mark} {self.where:3} {self.case:34} cpu {self.cpu:5.2f} s  wall {self.seconds:6.2f} s "
                f"{self.peak_mb:7.1f} MB  {self.answer[:100]}")


def run_cli(home: Path, db_url: str, *args: str, env: dict | None = None,
            limit: float = 60) -> tuple[float, float, float, int, str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("STOKER_")}, **(env or {})}
    env.update(STOKER_HOME=str(home), STOKER_DB_URL=db_url)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, preexec_fn=_cap_memory)
    timer = threading.Timer(limit, process.kill)
    timer.start()
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    timer.cancel()
    seconds = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), output


def cli_case(name: str, home: Path, db_url: str, expect: str, *args: str, env: dict | None = None) -> Outcome:
    """``expect``: "ok" (exit 0), "error" (a message and a non-zero exit) or "either"."""
    seconds, cpu, peak, code, output = run_cli(home, db_url, *args, env=env)
    lines = [line.strip() for line in output.strip().splitlines()]
    said = [line for line in lines if "ERROR" in line or "WARNING" in line or "stack_status " in line] or lines[-1:]
    answer = f"exit {code}: " + " | ".join(said[:2])
    fits = {"ok": code == 0, "error": code != 0 and bool(lines), "either": True}[expect]
    return Outcome(name, "cli", seconds, peak, answer, "Traceback" not in output and fits, cpu)


class Server:
    def __init__(self, home: Path, port: int, *extra: str):
        env = {k: v for k, v in os.environ.items() if not k.startswith("STOKER_")}
        env["STOKER_HOME"] = str(home)
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", API, "--port", str(port), "--db-url", f"sqlite:///{home / 'api.db'}",
             "--auth", "noauth", "--log-level", "warning", *extra],
            env=env, stdout=subprocess.DEVNULL, stderr=open(home / "server.log", "w"), preexec_fn=_cap_memory)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 300:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("stoker api did not start: " + (home / "server.log").read_text())

    def cpu(self) -> float:
        """CPU seconds the server has used so far (user + system)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def api_case(name: str, server: Server, method: str, path: str, body: dict | None,
             expect: tuple) -> Outcome:
    started, cpu = time.monotonic(), server.cpu()
    try:
        response = httpx.request(method, server.url + path, json=body, timeout=60)
        status, text = response.status_code, response.text
    except httpx.HTTPError as exc:
        status, text = 0, f"{type(exc).__name__}: {exc}"
    seconds, cpu = time.monotonic() - started, server.cpu() - cpu
    try:
        message = json.loads(text)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = text
    return Outcome(name, "api", seconds, server.peak_mb(), f"{status} {message}".replace("\n", " | "),
                   status in expect and "Traceback" not in text, cpu)


def show_case(server: Server, body: dict) -> Outcome:
    """Create (if accepted), wait for the action to end, then time one ``stack show``."""
    with httpx.Client(base_url=server.url, timeout=60, follow_redirects=True) as client:
        created = client.post("/v1/a/stacks", json=body)
        if created.status_code != 201:
            return Outcome("alias-expanded value (show)", "api", 0.0, server.peak_mb(),
                           f"{created.status_code} create refused", created.status_code in (400, 413))
        status = "CREATE_IN_PROGRESS"
        deadline = time.monotonic() + 60
        while status.endswith("IN_PROGRESS") and time.monotonic() < deadline:
            status = client.get(f"/v1/a/stacks/{body['stack_name']}").json()["stack"]["stack_status"]
            time.sleep(0.1)
        started, cpu = time.monotonic(), server.cpu()
        shown = client.get(f"/v1/a/stacks/{body['stack_name']}")
        seconds, cpu = time.monotonic() - started, server.cpu() - cpu
    return Outcome("alias-expanded value (show)", "api", seconds, server.peak_mb(),
                   f"{shown.status_code} {status}, {len(shown.content)} bytes shown", shown.status_code == 200, cpu)


def starvation_case(server: Server, heavy: dict) -> Outcome:
    """Project "light" lists its stacks while project "heavy" creates and validates big
    templates from 8 clients without pause."""
    stop = threading.Event()
    count = [0]

    def pound(client_number: int) -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            while not stop.is_set():
                count[0] += 1
                if client_number % 2:
                    client.post("/v1/heavy/validate", json={"template": heavy})
                else:
                    client.post("/v1/heavy/stacks", json={"stack_name": f"h{count[0]}", "template": heavy})

    threads = [threading.Thread(target=pound, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)  # the heavy requests are under way
    times = []
    with httpx.Client(base_url=server.url, timeout=120, follow_redirects=True) as client:
        for _ in range(10):
            started = time.monotonic()
            status = client.get("/v1/light/stacks").status_code
            times.append(time.monotonic() - started)
    stop.set()
    for thread in threads:
        thread.join()
    times.sort()
    # judged on wall time: the light request's latency is what this case is about
    return Outcome("light GET while heavy validates", "api", times[-1], server.peak_mb(),
                   f"{status}; GET /stacks median {times[5]:.2f} s, slowest {times[-1]:.2f} s "
                   f"(of 10, during {count[0]} heavy requests)", status == 200, times[-1])


def json_parameter_template() -> str:
    return HOT + "parameters:\n  j: {type: json}\noutputs:\n  o: {value: {get_param: j}}\n"


DEEP_JSON_TEXT = "[" * 10000 + "]" * 10000


def provider_bomb() -> dict:
    """Five levels of provider templates, ten of the next each (111,111 resources), each
    given its own property value so that no two subtrees count alike."""
    head = HOT + "parameters:\n  p: {type: string, default: ''}\nresources:\n"
    files = {}
    for level in range(5, 0, -1):
        member = f"l{level + 1}.yaml" if level < 5 else "OS::Heat::None"
        props = (lambda i: f"    properties: {{p: '{i}'}}\n") if level < 5 else (lambda i: "")
        files[f"l{level}.yaml"] = head + "".join(f"  r{i}:\n    type: {member}\n" + props(i) for i in range(10))
    return {"stack_name": "bomb", "template": head + "  top:\n    type: l1.yaml\n", "files": files}


PLUGINS = {"loops.py": "while True:\n    pass\n", "exits.py": "import os\nos._exit(0)\n",
           "syntax.py": "def resource_mapping(:\n    return {}\n"}


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def thread_case(server: Server, creates: int = 200) -> Outcome:
    """One-resource creates one after another: the server's threads before and after (settled)."""
    body = {"template": {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}}
    with httpx.Client(base_url=server.url + "/v1/a", timeout=60) as client:
        for number in range(50):  # the project's bounded pools reach their size
            client.post("/stacks", json={**body, "stack_name": f"warm{number}"})
        time.sleep(3.0)
        before, started, cpu = threads_of(server.process.pid), time.monotonic(), server.cpu()
        for number in range(creates):
            client.post("/stacks", json={**body, "stack_name": f"s{number}"})
        seconds, cpu = time.monotonic() - started, server.cpu() - cpu
        time.sleep(3.0)  # writer threads end after a second idle
        after = threads_of(server.process.pid)
    return Outcome(f"{creates} creates: threads", "api", seconds, server.peak_mb(),
                   f"threads {before} -> {after} after {creates} creates", after <= before, cpu)


def burst_thread_case(server: Server, projects: int = 5, clients: int = 10, settle: float = 20.0) -> Outcome:
    """Concurrent one-resource creates over several projects: the server's threads before, and once
    idle (pool threads end after 5 s idle, anyio's endpoint threads within 15 s)."""
    body = {"template": {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}}
    httpx.post(server.url + "/v1/p0/stacks", json={**body, "stack_name": "warm"}, timeout=60)
    time.sleep(settle)
    before, started, cpu = threads_of(server.process.pid), time.monotonic(), server.cpu()

    def creates(number: int) -> None:
        with httpx.Client(base_url=f"{server.url}/v1/p{number % projects}", timeout=60) as client:
            for count in range(20):
                client.post("/stacks", json={**body, "stack_name": f"c{number}-{count}"})

    workers = [threading.Thread(target=creates, args=(number,)) for number in range(clients)]
    for worker in workers:
        worker.start()
    peak = before
    while any(worker.is_alive() for worker in workers):
        peak = max(peak, threads_of(server.process.pid))
        time.sleep(0.05)
    seconds, cpu = time.monotonic() - started, server.cpu() - cpu
    time.sleep(settle)
    after = threads_of(server.process.pid)
    return Outcome(f"{clients * 20} creates, {projects} projects", "api", seconds, server.peak_mb(),
                   f"threads {before} -> {peak} (busy) -> {after} (idle)", after <= before, cpu)


def slow_header_case(server: Server) -> Outcome:
    """A client sending one header line a second, never ending its headers."""
    host, port = server.url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /v1/a/stacks HTTP/1.1\r\n")
        answer = b""
        try:
            for number in range(30):
                sock.sendall(b"X-Slow-%d: y\r\n" % number)
                sock.settimeout(1.0)
                try:
                    chunk = sock.recv(4096)
                except socket.timeout:
                    continue
                answer += chunk
                if not chunk or answer:
                    break
        except OSError:
            pass
    seconds = time.monotonic() - started
    status = answer.split(b"\r\n", 1)[0].decode("ascii", "replace") or "closed"
    return Outcome("slow headers (1 line/s)", "api", seconds, server.peak_mb(), f"{status} after {seconds:.1f} s",
                   status.startswith("HTTP/1.1 408") and seconds < 15, 0.0)


def big_template() -> dict:
    """A template near the API's limits: 900 resources with functions, validated again and again."""
    resources = {f"r{i}": {"type": "OS::Heat::Value", "properties": {"value": {"list_join": [
        "-", [{"get_param": "p"}, str(i), {"str_replace": {"template": "x_y", "params": {"_": str(i)}}}]]}}}
        for i in range(900)}
    return {"heat_template_version": "2018-08-31", "parameters": {"p": {"type": "string", "default": "a"}},
            "resources": resources}


def cases(tmp: Path, port: int, instances: int = 100_000) -> list[tuple[str, Callable[[], Outcome]]]:
    """(name, run) of every case: the CLI ones, then the API ones."""
    home = tmp / "home"
    home.mkdir()
    db = f"sqlite:///{tmp / 'cli.db'}"
    texts = {"repeat 3x200": repeat_3x200(), "alias-expanded value": alias_expansion(),
             "yaml 5000 deep": deep_yaml(), "json 5000 deep": deep_json(),
             "function chain 3000": function_chain(), "template strings 150 deep": nested_template_strings(),
             "yaql 5000 deep": yaql_nesting(), "str_replace 100k x 100k": str_replace_blowup(),
             "allowed_pattern (a|aa)+$": backtracking_pattern()}
    made: list[tuple[str, Callable[[], Outcome]]] = []

    def cli(name: str, expect: str, *args: str) -> None:
        made.append((name, lambda: cli_case(name, home, db, expect, *args)))

    # succeeding within the limits is a fine answer for these two
    either = {"alias-expanded value", "template strings 150 deep"}
    for name, text in texts.items():
        path = _write(tmp / (name.replace(" ", "_") + ".yaml"), text)
        expect = "either" if name in either else "error"
        cli(name, expect, "template", "validate", "-t", str(path))
        cli(name + " (create)", expect, "stack", "create", name.split()[0], "-t", str(path), "--wait")
    cli("alias-expanded value (show)", "ok", "stack", "show", "alias-expanded")
    cli("fan-out to 111,111", "error", "template", "validate", "-t", str(fanout_files(tmp)))
    cli("get_file /dev/zero", "error", "template", "validate", "-t", str(get_file_dev_zero(tmp)))
    cli("local command (CLI keeps it)", "ok", "stack", "create", "cmd", "-t",
        str(_write(tmp / "cmd.json", json.dumps(local_command()))), "--wait")
    json_param = str(_write(tmp / "jparam.yaml", json_parameter_template()))
    cli("json parameter 10000 deep", "error", "stack", "create", "jp", "-t", json_param,
        "--parameter-file", f"j={_write(tmp / 'deep.json', DEEP_JSON_TEXT)}", "--wait")
    one = str(_write(tmp / "one.yaml", HOT + "resources:\n  r: {type: OS::Heat::None}\n"))
    cli("stack name a/b", "error", "stack", "create", "a/b", "-t", one, "--wait")
    cli("control characters in names", "error", "template", "validate", "-t", str(_write(
        tmp / "names.json", json.dumps({"heat_template_version": "2018-08-31",
                                        "resources": {"r\x07\u202e": {"type": "OS::Heat::None"}}}))))
    missing = str(tmp / "missing" / "folder" / "s.db")
    made.append(("--db-url into a missing folder", lambda: cli_case(
        "--db-url into a missing folder", home, db, "error", "--db-url", f"sqlite:///{missing}", "stack", "list")))
    made.append(("STOKER_MAX_RESOURCES=abc", lambda: cli_case("STOKER_MAX_RESOURCES=abc", home, db, "error",
                                                              "stack", "list", env={"STOKER_MAX_RESOURCES": "abc"})))
    conf_home = tmp / "conf-home"
    conf_home.mkdir()
    _write(conf_home / "stoker.conf", "[limits]\nmax_nestin = 5\n")
    made.append(("misspelt [limits] key", lambda: cli_case("misspelt [limits] key", conf_home, db, "error",
                                                           "stack", "list")))
    plugins = tmp / "plugins"
    plugins.mkdir()
    for name, text in PLUGINS.items():
        _write(plugins / name, text)
    made.append(("plug-ins: loop, os._exit, syntax", lambda: cli_case(
        "plug-ins: loop, os._exit, syntax", home, db, "ok", "--plugin-dir", str(plugins), "template", "validate",
        "-t", one, env={"STOKER_PLUGIN_IMPORT_TIMEOUT": "2"})))
    blueprint_cases(tmp, home, db, cli, made, instances)

    def on_server(name: str, measure: Callable[[Server], Outcome]) -> None:
        def run() -> Outcome:
            server_home = Path(tempfile.mkdtemp(prefix="api-", dir=tmp))
            server = Server(server_home, port)
            try:
                return measure(server)
            finally:
                server.stop()
        made.append((name, run))

    def api(name: str, method: str, path: str, body: dict, expect: tuple = (400, 413)) -> None:
        on_server(name, lambda server: api_case(name, server, method, path, body, expect))

    api("local command", "POST", "/v1/a/stacks", {"stack_name": "c", "template": local_command()}, (403,))
    fan_files = {f"l{i}.yaml": (tmp / f"l{i}.yaml").read_text() for i in range(1, 6)}
    api("fan-out to 111,111", "POST", "/v1/a/stacks",
        {"stack_name": "f", "template": HOT + "resources:\n  top:\n    type: l1.yaml\n", "files": fan_files})
    for name, text in texts.items():
        api(name, "POST", "/v1/a/stacks", {"stack_name": "s", "template": text},
            (201, 400, 413) if name in either else (400, 413))
    on_server("alias-expanded value (show)",
              lambda server: show_case(server, {"stack_name": "s", "template": texts["alias-expanded value"]}))
    api("get_file outside the files map", "POST", "/v1/a/validate",
        {"template": value_template({"get_file": "/dev/zero"})})
    on_server("light GET while heavy validates", lambda server: starvation_case(server, big_template()))
    api("json parameter 10000 deep", "POST", "/v1/a/stacks",
        {"stack_name": "j", "template": json_parameter_template(), "parameters": {"j": DEEP_JSON_TEXT}})
    api("provider bomb, distinct properties", "POST", "/v1/a/stacks", provider_bomb())
    on_server("200 creates: threads", thread_case)
    on_server("burst over 5 projects: threads", burst_thread_case)

    def slow_server() -> Outcome:
        server = Server(Path(tempfile.mkdtemp(prefix="api-", dir=tmp)), port, "--header-timeout", "3")
        try:
            return slow_header_case(server)
        finally:
            server.stop()
    made.append(("slow headers", slow_server))
    return made


# -- the blueprint half -----------------------------------------------------------------------------
BP = "tosca_definitions_version: cloudify_dsl_1_4\nimports: [cloudify/types/types.yaml]\n"
PQ = "node_types:\n  t:\n    derived_from: cloudify.nodes.Root\n    properties: {p: {default: 1}, q: {default: 1}}\n"
DEEP = "[" * 10_000 + "]" * 10_000


def follow_lag_case(home: Path, db_url: str, instances: int) -> Outcome:
    """``stoker install`` of many instances: judged on how long the CLI goes on after the execution ended."""
    seconds, cpu, peak, code, output = run_cli(home, db_url, "install", f"many{instances}", "-f", "json",
                                               limit=600)
    ended = output.rsplit('"ended_at": "', 1)[-1][:23] if '"ended_at": "' in output else ""
    finished = time.time()
    try:
        from datetime import datetime, timezone

        lag = finished - datetime.strptime(ended, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        lag = float("inf")
    return Outcome(f"bp install {instances:,} (CLI lag)", "cli", seconds, peak,
                   f"exit {code}: ended {lag:.2f} s before the CLI did ({output.count(chr(10))} lines)",
                   code == 0 and "Traceback" not in output, lag)


def blueprint_cases(tmp: Path, home: Path, db: str, cli: Callable[..., None], made: list,
                    instances: int) -> None:
    """The blueprint half (issue 21): cycles, scale, inputs, validation, hidden values, following."""
    def write(name: str, text: str) -> str:
        return str(_write(tmp / name, text))

    (tmp / "blueprints").mkdir()

    def blueprint(name: str, text: str) -> str:
        """Blueprints beside no large input file nor the home: an upload takes its blueprint's whole folder."""
        return write(f"blueprints/{name}", text)

    property_cycle = blueprint("bp_pcycle.yaml", BP + PQ + "node_templates:\n  a:\n    type: t\n    properties: "
                               "{p: {get_property: [b, q]}}\n  b:\n    type: t\n    properties: "
                               "{q: {get_property: [a, p]}}\n")
    input_cycle = blueprint("bp_icycle.yaml", BP + "inputs:\n  x: {default: {get_input: y}}\n  y: {default: "
                            "{get_input: x}}\nnode_templates:\n  a: {type: cloudify.nodes.Root}\n")
    deep_default = blueprint("bp_deep_default.yaml", BP + "inputs:\n  x: {default: " + "[" * 90 + "]" * 90 + "}\n"
                             "node_templates:\n  a: {type: cloudify.nodes.Root}\n"
                             "outputs:\n  o: {value: {get_input: x}}\n")
    plain = blueprint("bp_plain.yaml", BP + "inputs:\n  x: {default: 1}\n"
                      "node_templates:\n  a: {type: cloudify.nodes.Root}\n"
                      "outputs:\n  secret: {value: {concat: [user-, {get_secret: pw}]}}\n")
    (tmp / "bp_scripts").mkdir()
    scripts = write("bp_scripts/b.yaml", BP + "node_templates:\n  n:\n    type: cloudify.nodes.Root\n    interfaces:\n"
                    "      cloudify.interfaces.lifecycle: {create: ../outside.sh, start: missing.sh}\n")
    write("outside.sh", "#!/bin/sh\n")
    many = blueprint("bp_many.yaml", BP + "node_templates:\n  a:\n    type: cloudify.nodes.Root\n    capabilities: "
                 "{scalable: {properties: {default_instances: %d}}}\n" % instances)
    cli("bp get_property cycle (validate)", "error", "blueprint", "validate", property_cycle)
    cli("bp get_property cycle (upload)", "error", "blueprint", "upload", property_cycle, "-b", "pcycle")
    cli("bp get_input cycle (validate)", "error", "blueprint", "validate", input_cycle)
    cli("bp scripts missing/outside", "error", "blueprint", "validate", scripts)
    cli("bp upload (setup)", "ok", "blueprint", "upload", plain, "-b", "plain")
    cli("bp hidden secret (setup)", "ok", "secret", "create", "pw", "-s", "hidden-secret-value", "--hidden")
    cli("bp -i nested 10,000 deep", "error", "deployment", "create", "d1", "-b", "plain", "-i",
        write("in_deep.yaml", "x: " + DEEP + "\n"))
    cli("bp -i x=<10,000 deep>", "error", "deployment", "create", "d2", "-b", "plain", "-i", "x=" + DEEP)
    cli("bp -i 10 MB file", "error", "deployment", "create", "d3", "-b", "plain", "-i",
        write("in_big.yaml", "x: " + "a" * 10_000_000 + "\n"))
    cli("bp -i 700,000 keys", "error", "deployment", "create", "d4", "-b", "plain", "-i",
        write("in_many.json", json.dumps({f"k{i}": 1 for i in range(700_000)})))
    cli("bp -i x=<10 KB> (accepted)", "ok", "deployment", "create", "d5", "-b", "plain", "-i", "x=" + "v" * 10_000)
    cli("bp outputs of a hidden secret", "ok", "deployment", "outputs", "d5", "-f", "value")
    cli("bp install (setup)", "ok", "install", "d5")
    for delta in ("1000000", "100000", "-1000000"):
        cli(f"bp scale delta={delta}", "error", "execution", "start", "scale", "-d", "d5", "-p",
            "scalable_entity_name=a", "-p", f"delta={delta}")
    pattern = blueprint("bp_pattern.yaml", BP + "inputs:\n  x:\n    constraints: [{pattern: " + json.dumps(BACKTRACKING)
                    + "}]\nnode_templates:\n  a: {type: cloudify.nodes.Root}\n")
    cli("bp pattern (a|aa)+$ (upload)", "ok", "blueprint", "upload", pattern, "-b", "pattern")
    cli("bp pattern (a|aa)+$ (create)", "error", "deployment", "create", "pattern", "-b", "pattern", "-i",
        "x=" + BACKTRACKED)
    cli("bp 90-deep list input (upload)", "ok", "blueprint", "upload", deep_default, "-b", "deep")
    cli("bp 90-deep list input (create)", "ok", "deployment", "create", "deep", "-b", "deep")
    hot = write("hot_json.yaml", HOT + "parameters:\n  j: {type: json, default: {}}\nresources: {}\n")
    cli("bp HOT -P json 10,000 deep", "error", "stack", "create", "pj", "-t", hot, "-P", "j=" + DEEP, "--wait")
    cli("bp HOT --parameter-file 10,000 deep", "error", "template", "validate", "-t", hot, "--parameter-file",
        "j=" + write("deep.txt", DEEP))
    cli(f"bp {instances:,} instances (setup)", "either", "blueprint", "upload", many, "-b", "many")
    cli(f"bp {instances:,} instances (create)", "either", "deployment", "create", f"many{instances}", "-b", "many")
    made.append((f"bp install {instances:,}", lambda: follow_lag_case(home, db, instances)))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--port", type=int, default=18100, help="port of the API servers")
    parser.add_argument("--instances", type=int, default=100_000, help="instances of the followed install")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in cases(Path(tmp), args.port, args.instances):
            if args.only not in name:
                continue
            outcome = case()
            print(outcome.line(), flush=True)
            failed += not outcome.ok
    print(f"{failed} case(s) out of bounds (< {MAX_SECONDS:g} s, < {MAX_MB} MB, a clear answer)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
