"""Template validation benchmark: load + validate a generated template of N resources.

    python bench/validate.py                          # N = 1,000 and 10,000, both profiles
    python bench/validate.py --sizes 1000 --repeat 5 --profiles typical
    python bench/validate.py --sizes 10000 --profile  # also cProfile the largest size
    python bench/validate.py --no-cli                 # skip the subprocess runs
    python bench/validate.py --formats yaml json      # the template as YAML (default) and JSON
    python bench/validate.py --sizes 1000 --profiles openstack openstack-none   # simulated types vs None

Two profiles of template, both N resources (``OS::Heat::Value``, every 10th
``OS::Heat::None``) in 10 layers, where each resource of a layer needs one of
the layer before through ``get_resource`` and ``get_attr`` (with a path):

* typical -- what a Heat resource looks like: a few literal properties and
  about six function calls (``get_param`` with paths, ``list_join``,
  ``get_attr``, ``get_resource`` and one more that rotates through
  ``str_replace``, ``repeat``, ``map_merge``, ``if``, ``digest``,
  ``str_split``, ``list_concat``, ``list_concat_unique``, ``contains``,
  ``filter``, ``make_url``, ``map_replace``, ``equals``; every 100th
  ``yaql``), so the template as a whole uses every function of its version.
  1,000 resources are about 500 KiB, just inside Heat's 512 KiB limit.
  **The issue's targets are judged on this profile.**
* dense -- every resource uses all of those at once, about 30 calls each
  (1 KiB per resource); it shows the cost per function call.

Measured through the Python API that ``stoker template validate`` uses:

* load     -- ``Template.from_text(text, max_size=<big>)`` (YAML -> data)
* validate -- ``Engine().check_template(template)``: every check the command
  makes (functions, dependencies, resource types, property schemas); no database.
* cli      -- the whole ``stoker template validate -t FILE -f json`` in a subprocess
  (interpreter start-up and imports included; ``startup`` is ``stoker --version``).
  The command refuses templates over 512 KiB (Heat's max_template_size), so for
  bigger ones the command runs through a wrapper that only lifts that limit.

Each is timed with ``time.perf_counter``; best and median of ``--repeat`` runs.  The OpenStack
comparison uses validate's CPU time (``time.process_time``, best of the runs): steadier than wall
time on a machine other work shares.
Targets: 1,000 resources under 100 ms, 10,000 under 1 s (load + validate), and
linear growth: the per-resource cost at 10,000 within 1.5x of that at 1,000.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stoker.engine.engine import Engine  # noqa: E402
from stoker.template.loader import MAX_TEMPLATE_SIZE  # noqa: E402
from stoker.template.template import Template  # noqa: E402

BIG = 1 << 30
LAYERS = 10
ENGINE = Engine()  # checking a template opens no database
TARGETS_MS = {1_000: 100.0, 10_000: 1_000.0}
LINEAR_FACTOR = 1.5


# -- the template ------------------------------------------------------------------------

PARAMETERS = {
    "env": {"type": "string", "default": "test", "constraints": [{"allowed_values": ["test", "prod"]}]},
    "prefix": {"type": "string", "default": "app"},
    "config": {"type": "json", "default": {"ports": [80, 443, 8080], "zone": {"name": "z1"}}},
    "tags": {"type": "comma_delimited_list", "default": "a,b,c"},
    "extra": {"type": "json", "default": {"b": 2}},
    "password": {"type": "string", "hidden": True, "default": "secret-secret"},
}
CONDITIONS = {
    "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
    "is_test": {"not": "is_prod"},
    "big": {"and": ["is_prod", {"equals": [{"get_param": ["config", "zone", "name"]}, "z1"]}]},
}


def _rotating(i: int) -> dict:
    """One more call for a typical resource; over 13 resources, every kind appears."""
    calls = [
        {"str_replace": {"template": "res-$i-$env", "params": {"$i": str(i), "$env": {"get_param": "env"}}}},
        {"repeat": {"template": f"%t%-{i}", "for_each": {"%t%": {"get_param": "tags"}}}},
        {"map_merge": [{"a": i}, {"get_param": "extra"}]},
        {"if": ["big", "large", "small"]},
        {"digest": ["sha256", {"get_param": "env"}]},
        {"str_split": [",", f"p{i},q{i},r{i}", 1]},
        {"list_concat": [[i], {"get_param": "tags"}]},
        {"list_concat_unique": [["a", f"x{i}"], {"get_param": "tags"}]},
        {"contains": ["a", {"get_param": "tags"}]},
        {"filter": [["b"], {"get_param": "tags"}]},
        {"make_url": {"scheme": "https", "host": f"h{i}.example.com", "port": 8443, "path": "/v1"}},
        {"map_replace": [{"k": i}, {"keys": {"k": "key"}}]},
        {"equals": [{"get_param": "env"}, "prod"]},
    ]
    if i % 100 == 0:
        return {"yaql": {"expression": "$.data.tags.len()", "data": {"tags": {"get_param": "tags"}}}}
    return calls[i % len(calls)]


def _typical(i: int, layer: int) -> dict:
    return {
        "name": {"list_join": ["-", [{"get_param": "prefix"}, f"r{i}"]]},
        "port": {"get_param": ["config", "ports", i % 3]},
        "extra": _rotating(i),
        "enabled": True,
        "replicas": i % 5,
        "labels": [f"tier-{layer}"],
    }


def _dense(i: int, layer: int) -> dict:
    value = {
        "name": {"str_replace": {"template": "res-$i-$env",
                                 "params": {"$i": str(i), "$env": {"get_param": "env"}}}},
        "port": {"get_param": ["config", "ports", i % 3]},
        "zone": {"get_param": ["config", "zone", "name"]},
        "tags": {"list_join": [",", {"get_param": "tags"}, [f"t{i}", "x"]]},
        "copies": {"repeat": {"template": f"%t%-{i}", "for_each": {"%t%": {"get_param": "tags"}}}},
        "meta": {"map_merge": [{"a": i}, {"get_param": "extra"}]},
        "size": {"if": ["big", "large", {"if": ["is_test", "small", "medium"]}]},
        "hash": {"digest": ["sha256", {"get_param": "env"}]},
        "parts": {"str_split": [",", f"p{i},q{i},r{i}", 1]},
    }
    if i % 100 == 0:
        value["count"] = {"yaql": {"expression": "$.data.tags.len()",
                                   "data": {"tags": {"get_param": "tags"}}}}
    return value


PROFILES = {"typical": _typical, "dense": _dense}


def _openstack_group(i: int) -> dict:
    """Five OpenStack resources wired as a real template wires them: a network, its subnet, a
    port on it, a server on the port with a volume attached."""
    net, subnet, port, server, volume = (f"{kind}{i}" for kind in ("net", "subnet", "port", "server", "volume"))
    return {
        net: {"type": "OS::Neutron::Net", "properties": {"name": {"list_join": ["-", ["net", str(i)]]}}},
        subnet: {"type": "OS::Neutron::Subnet",
                 "properties": {"network": {"get_resource": net}, "cidr": f"10.{i // 250}.{i % 250}.0/24",
                                "ip_version": 4, "enable_dhcp": True, "dns_nameservers": ["8.8.8.8"]}},
        port: {"type": "OS::Neutron::Port",
               "properties": {"network": {"get_resource": net}, "fixed_ips": [{"subnet": {"get_resource": subnet}}],
                              "security_groups": ["default"]}},
        server: {"type": "OS::Nova::Server",
                 "properties": {"name": {"str_replace": {"template": "vm-N", "params": {"N": str(i)}}},
                                "image": {"get_param": "image"}, "flavor": {"get_param": "flavor"},
                                "networks": [{"port": {"get_resource": port}}],
                                "metadata": {"group": str(i)}, "user_data_format": "RAW",
                                "user_data": {"get_attr": [port, "fixed_ips", 0, "ip_address"]}}},
        volume: {"type": "OS::Cinder::Volume",
                 "properties": {"size": 1 + i % 10, "name": {"list_join": ["-", ["vol", str(i)]]}}},
    }


def generate_openstack(n: int, as_none: bool = False) -> dict:
    """N OpenStack resources (``as_none``: the same template, every type OS::Heat::None)."""
    resources: dict = {}
    for i in range(max(1, n // 5)):
        resources.update(_openstack_group(i))
    if as_none:
        resources = {name: {**body, "type": "OS::Heat::None"} for name, body in resources.items()}
    return {
        "heat_template_version": "2018-08-31",
        "description": f"Validation benchmark (openstack{'-none' if as_none else ''}): {len(resources)} resources",
        "parameters": {"image": {"type": "string", "default": "cirros"},
                       "flavor": {"type": "string", "default": "m1.small"}},
        "resources": resources,
        "outputs": {"first": {"value": {"get_attr": ["server0", "first_address"]}}},
    }


GENERATORS = {"openstack": generate_openstack, "openstack-none": lambda n: generate_openstack(n, as_none=True)}


def generate(n: int, profile: str = "typical", layers: int = LAYERS) -> dict:
    per = max(1, n // layers)
    value_of = PROFILES[profile]
    resources = {}
    for i in range(n):
        layer = i // per
        if i % 10 == 9:
            resource = {"type": "OS::Heat::None", "properties": {"index": i}}
        else:
            resource = {"type": "OS::Heat::Value", "properties": {"value": value_of(i, layer)}}
        if layer:
            parent = f"r{(layer - 1) * per + (i % per) // 10 * 10}"  # never a None resource
            props = resource["properties"].get("value", resource["properties"])
            props["parent"] = {"get_resource": parent}
            props["parent_name"] = {"get_attr": [parent, "value", "name"]}
        if i % 20 == 19 and layer == layers - 1:
            resource["condition"] = "is_prod"
        resources[f"r{i}"] = resource
    outputs = {
        "first": {"value": {"get_attr": ["r0", "value", "name"]}},
        "last": {"value": {"get_resource": f"r{n - 1}"}},
        "mode": {"value": {"if": ["is_prod", "production", "testing"]}},
        "joined": {"value": {"list_join": ["-", {"get_param": "tags"}]}},
    }
    return {
        "heat_template_version": "2018-08-31",
        "description": f"Validation benchmark ({profile}): {n} resources in {layers} layers",
        "parameters": PARAMETERS,
        "conditions": CONDITIONS,
        "resources": resources,
        "outputs": outputs,
    }


def template_text(n: int, fmt: str = "yaml", profile: str = "typical") -> str:
    data = GENERATORS[profile](n) if profile in GENERATORS else generate(n, profile)
    if fmt == "json":
        return json.dumps(data, indent=1)
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=120)


# -- measuring ----------------------------------------------------------------------------------

def measure_once(text: str, name: str, gc_off: bool = False) -> tuple[float, float, float]:
    gc.collect()
    if gc_off:
        gc.disable()
    try:
        return _measure(text, name)
    finally:
        gc.enable()


def _measure(text: str, name: str) -> tuple[float, float, float]:
    """Load and validate wall times, and validate's CPU time (steadier on a busy machine), in ms."""
    start = time.perf_counter()
    template = Template.from_text(text, name, max_size=BIG)
    loaded, loaded_cpu = time.perf_counter(), time.process_time()
    definition, problems = ENGINE.check_template(template)
    done, done_cpu = time.perf_counter(), time.process_time()
    if definition is None or problems.errors:
        raise SystemExit(f"the generated template is invalid: {[str(p) for p in problems.errors][:5]}")
    return (loaded - start) * 1000, (done - loaded) * 1000, (done_cpu - loaded_cpu) * 1000


def summary(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


_WRAPPER = (
    "import sys; from stoker.template.template import Template; "
    "f = Template.from_text.__func__; f.__defaults__ = f.__defaults__[:-1] + ({big},); "
    "from stoker.cli import main; sys.argv[0] = 'stoker'; main()"
)


def stoker_command() -> list[str]:
    found = shutil.which("stoker", path=str(Path(sys.executable).parent)) or shutil.which("stoker")
    return [found] if found else [sys.executable, "-m", "stoker.cli"]


def time_cli(path: str, size: int, repeat: int) -> tuple[list[float], str]:
    """The whole command in a subprocess; (times in ms, how it was run)."""
    if size <= MAX_TEMPLATE_SIZE:
        command, how = stoker_command(), "stoker"
    else:
        command, how = [sys.executable, "-c", _WRAPPER.format(big=BIG)], "wrapper (limit lifted)"
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([*command, "template", "validate", "-t", path, "-f", "json"],
                              capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            raise SystemExit(f"stoker template validate failed:\n{done.stdout[:2000]}{done.stderr[:2000]}")
    return times, how


def time_startup(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([*stoker_command(), "--version"], capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def profile(text: str, name: str, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    measure_once(text, name)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--formats", nargs="+", choices=["yaml", "json"], default=["yaml"],
                        help="how the template is written (default: yaml)")
    parser.add_argument("--profiles", nargs="+", choices=[*PROFILES, *GENERATORS], default=list(PROFILES),
                        help="which templates (default: typical and dense; targets apply to typical; "
                             "openstack and openstack-none are compared with each other)")
    parser.add_argument("--gc-off", action="store_true",
                        help="disable the cyclic garbage collector while measuring in-process")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true", help="skip the subprocess runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest size")
    parser.add_argument("--top", type=int, default=25, help="lines of profile to print")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="stoker-bench-") as tmp:
        for kind, fmt, n in [(k, f, n) for k in args.profiles for f in args.formats for n in args.sizes]:
            text = template_text(n, fmt, kind)
            path = os.path.join(tmp, f"bench-{kind}-{n}.{fmt}")
            Path(path).write_text(text)
            measure_once(text, path)  # warm up: imports, yaql parser, caches
            loads, validates, totals, cpus = [], [], [], []
            for _ in range(args.repeat):
                load_ms, validate_ms, cpu_ms = measure_once(text, path, args.gc_off)
                cpus.append(cpu_ms)
                loads.append(load_ms)
                validates.append(validate_ms)
                totals.append(load_ms + validate_ms)
            cli = None if args.no_cli else time_cli(path, len(text.encode()), args.repeat)
            rows.append({"n": n, "fmt": fmt, "kind": kind, "bytes": len(text.encode()),
                         "load": summary(loads), "validate": summary(validates), "validate_cpu": min(cpus),
                         "total": summary(totals), "cli": cli, "path": path, "text": text})

        startup = None if args.no_cli else time_startup(args.repeat)
        gc_note = ", cyclic GC off" if args.gc_off else ""
        print(f"\nstoker template validate, best / median of {args.repeat} "
              f"(python {sys.version.split()[0]}, {os.cpu_count()} CPUs{gc_note})\n")
        header = (f"{'profile':>7} {'fmt':>4} {'N':>7} {'KiB':>7} {'load ms':>15} {'validate ms':>15} {'total ms':>15} "
                  f"{'µs/resource':>12} {'target':>16} {'cli ms':>15}")
        print(header)
        print("-" * len(header))
        for row in rows:
            n = row["n"]
            (lb, lm), (vb, vm), (tb, tm) = row["load"], row["validate"], row["total"]
            target = TARGETS_MS.get(n) if row["kind"] == "typical" else None
            verdict = (f"< {target:g} {'ok' if tb < target else 'MISSED'}" if target else "-")
            cli = "-"
            if row["cli"]:
                times, how = row["cli"]
                cli = f"{min(times):6.0f} / {statistics.median(times):6.0f}"
                if how != "stoker":
                    cli += " *"
            print(f"{row['kind']:>7} {row['fmt']:>4} {n:>7,} {row['bytes'] / 1024:>7.0f} {lb:>6.1f} / {lm:>6.1f} {vb:>6.1f} / "
                  f"{vm:>6.1f} {tb:>6.1f} / {tm:>6.1f} {tb * 1000 / n:>12.1f} {verdict:>16} {cli:>15}")
        if startup is not None:
            print(f"\ncli: interpreter start-up and imports alone (stoker --version): {startup:.0f} ms")
            if any(r["cli"] and r["cli"][1] != "stoker" for r in rows):
                print("* over 512 KiB: the real command refuses the template (max_template_size); "
                      "timed through a wrapper that lifts the limit")
        for kind, fmt in [(k, f) for k in args.profiles for f in args.formats]:
            by_n = {r["n"]: r for r in rows if (r["kind"], r["fmt"]) == (kind, fmt)}
            if 1_000 in by_n and 10_000 in by_n:
                small = by_n[1_000]["total"][0] / 1_000
                large = by_n[10_000]["total"][0] / 10_000
                ratio = large / small
                print(f"\nlinear growth ({kind}, {fmt}): {large * 1000:.1f} µs/resource at 10,000 vs "
                      f"{small * 1000:.1f} at 1,000 = {ratio:.2f}x "
                      f"({'ok' if ratio <= LINEAR_FACTOR else 'MISSED'}, target <= {LINEAR_FACTOR}x)")

        for fmt, n in [(f, n) for f in args.formats for n in args.sizes]:
            pair = {r["kind"]: r for r in rows if (r["fmt"], r["n"]) == (fmt, n)}
            if "openstack" in pair and "openstack-none" in pair:
                real, none = pair["openstack"]["validate_cpu"], pair["openstack-none"]["validate_cpu"]
                print(f"\nOpenStack types vs OS::Heat::None ({fmt}, {n:,}): validate {real:.1f} ms CPU vs {none:.1f} ms "
                      f"= {real / none:.2f}x ({'ok' if real / none <= LINEAR_FACTOR else 'MISSED'}, "
                      f"target <= {LINEAR_FACTOR}x)")

        if args.profile:
            largest = max(rows, key=lambda r: r["n"])
            print(f"\ncProfile of load + validate, N = {largest['n']:,} ({largest['kind']}, {largest['fmt']})\n")
            print(profile(largest["text"], largest["path"], args.top))


if __name__ == "__main__":
    main()
