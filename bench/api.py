"""REST API benchmark: requests per second of `stoker api` (2 workers) under concurrent clients.

    python bench/api.py                          # SQLite in a temporary directory
    python bench/api.py --db-url postgresql+psycopg://postgres@127.0.0.1:5432/bench
    python bench/api.py --clients 16 --workers 2 --seconds 5 --creates 160

Measures, against a fresh server on a free local port (no authentication):
* ``GET /stacks/{id}`` as python-heatclient does it (a 302 to ``/stacks/{name}/{id}``, then the
  stack with its outputs) and ``GET /stacks/{name}/{id}`` directly;
* stack create of a 10-resource template (``tests/api/templates/ten.yaml``): creates accepted
  (201) per second, and creates completed (CREATE_COMPLETE) per second;
* sustained one-resource creates: ``--sustained-clients`` (50) clients creating for
  ``--sustained-seconds``, each waiting for its stack to complete before the next: completed
  creates per second and the 201's p50/p99, with the server's threads and resident memory
  (all its processes) before, and after it settles (``--settle`` seconds), and the server's
  CPU milliseconds per completed create (its polls included): the number other load on the
  machine distorts least; beside it, this client's own CPU per create (it shares the machine)
  and the load average at the end.
Needs the test extra (httpx, to wait for the server).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx

ROOT = Path(__file__).resolve().parent.parent
API = "import sys; from stoker.cli.api_cmds import api; api(sys.argv[1:], prog_name='stoker api')"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ten_resources() -> dict:
    from stoker.template.loader import load

    return load((ROOT / "tests" / "api" / "templates" / "ten.yaml").read_text())


def start(db_url: str, workers: int, home: Path, port: int | None = None) -> tuple[subprocess.Popen, str]:
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOKER_")}
    env["STOKER_HOME"] = str(home)
    process = subprocess.Popen([sys.executable, "-c", API, "--port", str(port), "--workers", str(workers),
                                "--db-url", db_url, "--auth", "noauth", "--log-level", "warning"],
                               env=env, stdout=subprocess.DEVNULL, stderr=open(home / "server.log", "w"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/", timeout=1).status_code == 300:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.terminate()
    raise SystemExit("the server did not start:\n" + (home / "server.log").read_text())


class Client:
    """One keep-alive connection (http.client: light, so the server is what is measured)."""

    def __init__(self, url: str):
        parsed = urlparse(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.connection.request(method, path, data, headers)
        response = self.connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def get(self, path: str, follow: bool = False) -> tuple[int, bytes]:
        status, headers, body = self.request("GET", path)
        if follow and status == 302:
            status, headers, body = self.request("GET", urlparse(headers["location"]).path)
        return status, body


def concurrently(url: str, clients: int, work) -> tuple[float, list[float]]:
    """``work(client, latencies)`` in ``clients`` threads; returns (elapsed seconds, latencies)."""
    latencies: list[float] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work(Client(url), latencies)
        except BaseException as exc:  # reported after the run
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t0, latencies


def timed_gets(url: str, clients: int, seconds: float, path: str, follow: bool) -> tuple[float, list[float]]:
    stop = time.perf_counter() + seconds

    def work(client: Client, latencies: list[float]) -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            status, body = client.get(path, follow)
            if status != 200:
                raise SystemExit(f"GET {path}: {status} {body[:200]!r}")
            latencies.append(time.perf_counter() - t0)

    elapsed, latencies = concurrently(url, clients, work)
    return len(latencies) / elapsed, latencies


def creates(url: str, base: str, clients: int, count: int, template: dict) -> dict:
    run_id = os.urandom(3).hex()  # names of their own, so a database may be reused
    numbers = iter(range(count))
    lock = threading.Lock()
    ids: list[str] = []

    def work(client: Client, latencies: list[float]) -> None:
        while True:
            with lock:
                i = next(numbers, None)
            if i is None:
                return
            t0 = time.perf_counter()
            status, _, body = client.request("POST", f"{base}/stacks",
                                             {"stack_name": f"bench{run_id}-{i}", "template": template})
            latencies.append(time.perf_counter() - t0)
            if status != 201:
                raise SystemExit(f"create failed: {status} {body[:300]!r}")
            with lock:
                ids.append(json.loads(body)["stack"]["id"])

    t0 = time.perf_counter()
    accepted, latencies = concurrently(url, clients, work)
    client = Client(url)
    pending, failed = set(ids), []
    while pending:
        _, body = client.get(f"{base}/stacks?limit=100000")
        for stack in json.loads(body)["stacks"]:
            if stack["id"] in pending and not stack["stack_status"].endswith("IN_PROGRESS"):
                pending.discard(stack["id"])
                if stack["stack_status"] != "CREATE_COMPLETE":
                    failed.append(stack["stack_status_reason"])
        if pending:
            time.sleep(0.05)
    completed = time.perf_counter() - t0
    return {"count": count, "accepted_s": accepted, "completed_s": completed, "failed": failed,
            "latencies": latencies, "ids": ids}


#: seconds the server rests before its threads are counted: idle request threads end after 10 s
#: (anyio), looked at every 5 s (``api/app.py``), idle pool threads after 5 s (``api/background.py``)
SETTLE = 16.0
#: how often a sustained client asks whether its stack is complete (as heatclient's --wait, faster)
POLL_INTERVAL = 0.05
ONE_RESOURCE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}


def sustained_creates(url: str, base: str, clients: int, seconds: float) -> dict:
    """Each client creates a one-resource stack and polls it to CREATE_COMPLETE, again and again."""
    run_id = os.urandom(3).hex()
    stop = time.perf_counter() + seconds
    counter = iter(range(10**9))
    lock = threading.Lock()
    completed: list[float] = []

    def work(client: Client, latencies: list[float]) -> None:
        while time.perf_counter() < stop:
            with lock:
                i = next(counter)
            t0 = time.perf_counter()
            status, _, body = client.request("POST", f"{base}/stacks",
                                             {"stack_name": f"one{run_id}-{i}", "template": ONE_RESOURCE})
            latencies.append(time.perf_counter() - t0)
            if status != 201:
                raise SystemExit(f"create failed: {status} {body[:300]!r}")
            stack_id = json.loads(body)["stack"]["id"]
            while True:
                status, body = client.get(f"{base}/stacks/one{run_id}-{i}/{stack_id}")
                stack = json.loads(body)["stack"]
                if not stack["stack_status"].endswith("IN_PROGRESS"):
                    break
                time.sleep(POLL_INTERVAL)
            if stack["stack_status"] != "CREATE_COMPLETE":
                raise SystemExit(f"create ended {stack['stack_status']}: {stack['stack_status_reason']}")
            completed.append(time.perf_counter() - t0)

    before = os.times()
    elapsed, latencies = concurrently(url, clients, work)
    after = os.times()
    client_cpu = (after.user + after.system) - (before.user + before.system)
    return {"creates_per_s": round(len(completed) / elapsed, 1), "creates": len(completed),
            "client_cpu_ms_per_create": round(1000 * client_cpu / max(1, len(completed)), 2),
            "create_201_p50_ms": round(pct(latencies, 0.5), 1), "create_201_p99_ms": round(pct(latencies, 0.99), 1),
            "complete_p50_ms": round(pct(completed, 0.5), 1), "complete_p99_ms": round(pct(completed, 0.99), 1)}


def server_processes(pid: int):
    """The server's process and its worker processes, each as (/proc status fields, stat fields)."""
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            stat = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        yield dict(line.split(":", 1) for line in status.splitlines() if ":" in line), stat
        pending += [int(child) for child in children]


def server_usage(pid: int) -> tuple[int, float]:
    """(threads, resident MB) of the server: the process and its worker processes."""
    threads, rss_kb = 0, 0
    for fields, _ in server_processes(pid):
        threads += int(fields["Threads"])
        rss_kb += int(fields.get("VmRSS", "0 kB").split()[0])
    return threads, round(rss_kb / 1024, 1)


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server and its worker processes have used."""
    ticks = sum(int(stat[11]) + int(stat[12]) for _, stat in server_processes(pid))
    return ticks / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000 if ordered else 0.0


def run(url: str, args, pid: int) -> dict:
    base = "/v1/bench"
    Client(url).request("POST", f"{base}/stacks", {"stack_name": "warm", "template": ONE_RESOURCE})
    time.sleep(args.settle)
    before, cpu = server_usage(pid), server_cpu(pid)
    sustained = sustained_creates(url, base, args.sustained_clients, args.sustained_seconds)
    sustained["server_cpu_ms_per_create"] = round(1000 * (server_cpu(pid) - cpu) / max(1, sustained["creates"]), 1)
    sustained["load_average"] = round(os.getloadavg()[0], 1)
    time.sleep(args.settle)
    after = server_usage(pid)
    made = creates(url, base, args.clients, args.creates, ten_resources())
    stack_id = made["ids"][0]
    _, body = Client(url).get(f"{base}/stacks/{stack_id}", follow=True)
    name = json.loads(body)["stack"]["stack_name"]
    by_id_rps, by_id = timed_gets(url, args.clients, args.seconds, f"{base}/stacks/{stack_id}", True)
    direct_rps, direct = timed_gets(url, args.clients, args.seconds, f"{base}/stacks/{name}/{stack_id}", False)
    return {
        "clients": args.clients, "workers": args.workers,
        "get_stack_by_id_rps": round(by_id_rps, 1),
        "get_stack_by_id_p50_ms": round(pct(by_id, 0.5), 1), "get_stack_by_id_p99_ms": round(pct(by_id, 0.99), 1),
        "get_stack_direct_rps": round(direct_rps, 1),
        "get_stack_direct_p50_ms": round(pct(direct, 0.5), 1),
        "create_10_resources_accepted_per_s": round(made["count"] / made["accepted_s"], 1),
        "create_201_p50_ms": round(pct(made["latencies"], 0.5), 1),
        "create_201_p99_ms": round(pct(made["latencies"], 0.99), 1),
        "create_10_resources_completed_per_s": round(made["count"] / made["completed_s"], 1),
        "creates": made["count"], "create_failures": len(made["failed"]),
        "sustained": {"clients": args.sustained_clients, **sustained,
                      "threads_before": before[0], "threads_after": after[0],
                      "rss_mb_before": before[1], "rss_mb_after": after[1]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db-url", help="default: SQLite in a temporary directory")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each GET run")
    parser.add_argument("--creates", type=int, default=160, help="stacks created")
    parser.add_argument("--sustained-clients", type=int, default=50)
    parser.add_argument("--sustained-seconds", type=float, default=10.0)
    parser.add_argument("--settle", type=float, default=SETTLE,
                        help="seconds the server rests before threads and memory are read")
    parser.add_argument("--port", type=int, help="the server's port (default: a free one)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        process, url = start(args.db_url or f"sqlite:///{home / 'stoker.db'}", args.workers, home, args.port)
        try:
            result = run(url, args, process.pid)
        finally:
            process.terminate()
            process.wait(20)
    result["database"] = (args.db_url or "sqlite").split(":", 1)[0]
    if args.json:
        print(json.dumps(result))
        return
    print(f"stoker api: {args.workers} workers, {args.clients} concurrent clients, {result['database']}")
    print(f"  GET /stacks/{{id}} (302 + show)     {result['get_stack_by_id_rps']:8.1f} req/s   "
          f"p50 {result['get_stack_by_id_p50_ms']} ms  p99 {result['get_stack_by_id_p99_ms']} ms")
    print(f"  GET /stacks/{{name}}/{{id}}          {result['get_stack_direct_rps']:8.1f} req/s   "
          f"p50 {result['get_stack_direct_p50_ms']} ms")
    print(f"  POST /stacks (10 resources) -> 201 {result['create_10_resources_accepted_per_s']:8.1f} req/s   "
          f"p50 {result['create_201_p50_ms']} ms  p99 {result['create_201_p99_ms']} ms")
    print(f"  creates completed (CREATE_COMPLETE) {result['create_10_resources_completed_per_s']:7.1f} stacks/s"
          f"   ({result['creates']} stacks, {result['create_failures']} failed)")
    held = result["sustained"]
    print(f"  sustained 1-resource creates, {held['clients']} clients: {held['creates_per_s']:.1f} completed/s "
          f"({held['creates']} stacks); 201 p50 {held['create_201_p50_ms']} ms p99 {held['create_201_p99_ms']} ms; "
          f"complete p50 {held['complete_p50_ms']} ms p99 {held['complete_p99_ms']} ms; "
          f"server CPU {held['server_cpu_ms_per_create']} ms per create (this client "
          f"{held['client_cpu_ms_per_create']} ms); load average {held['load_average']}")
    print(f"  server threads {held['threads_before']} -> {held['threads_after']}, "
          f"resident {held['rss_mb_before']} -> {held['rss_mb_after']} MB (before -> after, settled)")


if __name__ == "__main__":
    main()
