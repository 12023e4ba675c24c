"""Driver of scripts/heat-corpus: Stoker's verdict and Heat's on real templates, side by side.

Runs in Stoker's .venv.  Every Heat template found under the paths given (or in a
published package's sdist) is validated by ``stoker template validate`` (in-process)
and, when a Heat virtualenv is given, by Heat's own engine (scripts/heat_corpus_heat.py,
a separate process).  With ``--create`` both sides also create it: Stoker with
``stoker stack create --wait`` and ``stack output show --all``, Heat with its legacy
engine in-process; the outcome (refused up front, CREATE_COMPLETE, CREATE_FAILED) must
be the same and, when both complete, every output too (see ``same_output``).  Both get
the same environment: every resource type Stoker does not ship mapped to
``OS::Heat::None`` (with ``--simulated``, Heat's OpenStack types are left as they are: Stoker
simulates them, Heat checks them with its real plug-ins); validate gets no parameters, a create a value for each parameter
without a default (``create_environment``); the same stack name; a one-minute timeout.  Prints
the agreement figures and each disagreement (template, Heat's verdict, Stoker's).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml
from click.testing import CliRunner

from stoker.cli import main as stoker_main
from stoker.resources import registry

HERE = Path(__file__).resolve().parent
SUFFIXES = (".yaml", ".yml", ".template", ".json")
VERSION_KEYS = ("heat_template_version", "AWSTemplateFormatVersion", "HeatTemplateFormatVersion")
_TYPE_LINE = re.compile(r"""^\s*-?\s*["']?(?:type|Type)["']?\s*:\s*["']?([A-Za-z0-9_]+::[A-Za-z0-9_:.-]+)""", re.M)


class _Loader(yaml.SafeLoader):
    """YAML as Heat reads it: dates stay strings, ``!include``-style tags are kept as data."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_str)
_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def is_template(path: Path) -> bool:
    try:
        data = yaml.load(path.read_text(errors="replace"), Loader=_Loader)
    except (yaml.YAMLError, OSError, RecursionError):
        return False
    return isinstance(data, dict) and any(key in data for key in VERSION_KEYS)


def find_templates(roots: list[Path], inline_dir: Path) -> list[Path]:
    """Template files, and the templates written inside Python sources and reST docs
    (saved under ``inline_dir``, named after where they were found)."""
    found = []
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            if path.suffix in SUFFIXES and is_template(path):
                found.append(path.resolve())
            elif path.suffix in INLINE:
                found += _save_inline(path, INLINE[path.suffix](path.read_text(errors="replace")),
                                      inline_dir / _flat(path, root))
    return found


def _python_strings(text: str) -> list[tuple[int, str]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [(node.lineno, textwrap.dedent(node.value)) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and any(key in node.value for key in VERSION_KEYS)]


_RST_BLOCK = re.compile(r"^([ \t]*)\.\. code-block:: (?:yaml|json)[^\n]*\n(?:\1[ \t]+:[^\n]*\n)*\s*\n"
                        r"((?:\1[ \t]+[^\n]*\n|[ \t]*\n)+)", re.M)


def _rst_blocks(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, textwrap.dedent(m.group(2)))
            for m in _RST_BLOCK.finditer(text) if any(key in m.group(2) for key in VERSION_KEYS)]


INLINE = {".py": _python_strings, ".rst": _rst_blocks}


def _save_inline(source: Path, pieces: list[tuple[int, str]], stem: Path) -> list[Path]:
    saved = []
    for line, text in pieces:
        path = stem.with_name(f"{stem.name}_{line}.yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if is_template(path):
            saved.append(path)
    return saved


def _flat(path: Path, root: Path) -> str:
    return str(path.relative_to(root) if root.is_dir() else path.name).replace(os.sep, "__")


def from_package(name: str, work: Path) -> Path:
    """A published package's sdist, unpacked (``pip download``, the ordinary client)."""
    target = work / name
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    "--dest", str(target), name], check=True)
    for archive in target.glob("*.tar.gz"):
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    return target


def simulated_types() -> list[str]:
    """The OpenStack types Stoker simulates (it has no plug-in for them)."""
    types = registry.default_registry([])
    return [name for name in types.types() if getattr(types.get(name), "simulated", False)]


#: public template collections the script knows by name (``--collection NAME``): the repository
#: and the tag or branch cloned (magnum's Heat drivers were removed after yoga)
COLLECTIONS = {
    "heat-templates": ("https://opendev.org/openstack/heat-templates", "master"),
    "magnum": ("https://opendev.org/openstack/magnum", "yoga-eol"),
    "rally-openstack": ("https://opendev.org/openstack/rally-openstack", "master"),
    "senlin": ("https://opendev.org/openstack/senlin", "zed-eom"),  # retired since: its last tag
}


def from_collection(name: str, work: Path) -> Path:
    """A known collection, cloned (``git clone --depth 1``) into ``work``."""
    url, ref = COLLECTIONS[name]
    target = work / name
    if not target.exists():
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", ref, url, str(target)], check=True)
    return target


def none_environment(templates: list[Path], work: Path, simulated: bool = False) -> Path:
    """One environment mapping every type the corpus uses that Stoker does not ship to None: Heat's
    OpenStack types Stoker only simulates too, unless ``simulated`` (Heat runs them with its real
    plug-ins, Stoker with its simulated types)."""
    types = registry.default_registry([])
    shipped = {name for name in types.types() if simulated or not getattr(types.get(name), "simulated", False)}
    used: set[str] = set()
    for path in templates:
        used.update(_TYPE_LINE.findall(path.read_text(errors="replace")))
    mapping = {name: "OS::Heat::None" for name in sorted(used - shipped)}
    env = work / "none-environment.yaml"
    env.write_text(yaml.safe_dump({"resource_registry": mapping}, default_flow_style=False))
    return env


#: a value of each parameter type, for the parameters a create needs (no default)
_SAMPLE_VALUES = {"string": "corpus", "number": 1, "comma_delimited_list": "corpus", "json": {}, "boolean": False}


def create_environment(template: Path, environment: Path, work: Path, name: str) -> Path:
    """The environment a create gets: ``environment`` plus a value for every parameter
    without a default (its first allowed value, or its range's minimum, or one of its
    type), so that a create gets past the parameters on both sides."""
    try:
        data = yaml.load(template.read_text(errors="replace"), Loader=_Loader)
    except yaml.YAMLError:
        data = None
    declared = (data.get("parameters") or data.get("Parameters")) if isinstance(data, dict) else None
    values = {key: _sample_value(schema) for key, schema in (declared or {}).items()
              if isinstance(key, str) and isinstance(schema, dict) and "default" not in schema and "Default" not in schema}
    if not values:
        return environment
    env = yaml.safe_load(environment.read_text())
    path = work / "environments" / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({**env, "parameters": values}, default_flow_style=False))
    return path


def _sample_value(schema: dict):
    constraints = schema.get("constraints") if isinstance(schema.get("constraints"), list) else []
    allowed = schema.get("AllowedValues") or next((c["allowed_values"] for c in constraints if isinstance(c, dict)
                                                   and isinstance(c.get("allowed_values"), list)), None)
    if isinstance(allowed, list) and allowed:
        return allowed[0]
    kind = str(schema.get("type") or schema.get("Type") or "string").lower()
    kind = {"commadelimitedlist": "comma_delimited_list"}.get(kind, kind)
    low = schema.get("MinValue", next((c["range"].get("min") for c in constraints if isinstance(c, dict)
                                       and isinstance(c.get("range"), dict)), None))
    return low if kind == "number" and low is not None else _SAMPLE_VALUES.get(kind, "corpus")


CREATE_TIMEOUT_MINUTES = "1"  # as on Heat's side: a wait nobody signals fails after it


def _stoker(*args: str):
    return CliRunner().invoke(stoker_main, list(args), catch_exceptions=True)


def _failure(run) -> str:
    """What a failed command says: its first errors (``-f json``), or its text."""
    if run.exception is not None and not isinstance(run.exception, SystemExit):
        return f"crash: {type(run.exception).__name__}: {run.exception}"
    try:
        errors = json.loads(run.stdout)
        return "; ".join(f"{e['path']}: {e['message']} [{e['code']}]" for e in errors[:3])
    except (ValueError, TypeError, KeyError):
        return (run.stdout + run.stderr).strip()


def stoker_validate(template: Path, environment: Path) -> dict:
    """``stoker template validate``: accepted or not, and the first errors."""
    run = _stoker("template", "validate", "-t", str(template), "-e", str(environment), "-f", "json")
    return {"ok": True, "message": ""} if run.exit_code == 0 else {"ok": False, "message": _failure(run)}


def stoker_create(template: Path, environment: Path, name: str) -> dict:
    """``stoker stack create --wait``: refused up front, or the stack's final status and outputs."""
    run = _stoker("stack", "create", name, "-t", str(template), "-e", str(environment),
                  "--timeout", CREATE_TIMEOUT_MINUTES, "--wait", "-f", "json")
    shown = _stoker("stack", "show", name, "-f", "json")
    if shown.exit_code != 0:
        return {"status": "REFUSED", "reason": "", "message": _failure(run)}
    stack = json.loads(shown.stdout)
    listed = _stoker("stack", "output", "show", name, "--all", "-f", "json")
    outputs = {o["output_key"]: ({"error": o["output_error"]} if "output_error" in o
                                 else {"value": o.get("output_value")})
               for o in (json.loads(listed.stdout) if listed.exit_code == 0 else [])}
    return {"status": stack["stack_status"], "reason": "", "message": stack.get("stack_status_reason") or "",
            "outputs": outputs}


def stoker_verdicts(job: dict) -> dict:
    """Stoker's verdicts on one job (in a worker process with its own STOKER_HOME)."""
    template, environment = Path(job["template"]), Path(job["environment"])
    verdicts = {"validate": stoker_validate(template, environment)}
    if job["create"]:
        verdicts["create"] = stoker_create(template, Path(job["create_environment"]), job["create"])
    return verdicts


def _own_home(work: Path) -> None:
    os.environ["STOKER_HOME"] = str(work / f"home-{os.getpid()}")


#: Heat's own virtualenv only: Stoker's tree has a ``heat`` package (plug-in compatibility)
_HEAT_ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def start_heat(heat_python: str, jobs: list[dict], work: Path, simulate: list[str]) -> list[subprocess.Popen]:
    """Heat's engines, each on its share of the jobs, running meanwhile (each its own database);
    ``simulate``: the types whose plug-ins create with no-op service calls."""
    engines = []
    command = [heat_python, str(HERE / "heat_corpus_heat.py")]
    if simulate:
        (work / "simulated-types.json").write_text(json.dumps(simulate))
        command += ["--simulate", str(work / "simulated-types.json")]
    for share in jobs:
        out = tempfile.TemporaryFile("w+", dir=work)  # no pipe to fill while Stoker works
        heat = subprocess.Popen(command, stdin=subprocess.PIPE,
                                stdout=out, stderr=subprocess.STDOUT, text=True, cwd=tempfile.gettempdir(),
                                env=_HEAT_ENVIRONMENT)
        heat.stdin.write(json.dumps(share))
        heat.stdin.close()
        heat.out = out
        engines.append(heat)
    return engines


def heat_verdicts(engines: list[subprocess.Popen], count: int) -> dict[str, dict]:
    verdicts, noise = {}, []
    for heat in engines:
        heat.wait()
        heat.out.seek(0)
        for line in heat.out:
            if line.startswith('{"template"'):
                row = json.loads(line)
                verdicts[row["template"]] = row
            else:
                noise.append(line)
    if len(verdicts) < count:
        sys.stderr.write("".join(noise)[-3000:])
        raise SystemExit(f"Heat gave {len(verdicts)} verdicts for {count} templates")
    return verdicts


# -- comparing creates ----------------------------------------------------------------------
#: Outputs whose values are ids, urls or random by nature, compared by shape only (the same
#: nesting of lists and maps, strings where strings are): an output whose value uses
#: ``get_resource``/``Ref`` of a resource (a resource id), the stack's or project's id
#: (``OS::stack_id``, ``OS::project_id``, ``AWS::StackId``), any attribute of a random
#: resource (an ``OS::Heat::RandomString``, a group or chain of them, or a provider template whose
#: file has one), or one of ``OPAQUE_ATTRIBUTES`` of any resource (an AutoScalingGroup's
#: ``outputs`` are keyed by its random member names).
OPAQUE_PARAMETERS = {"OS::stack_id", "OS::project_id", "AWS::StackId"}
OPAQUE_ATTRIBUTES = {"curl_cli", "endpoint", "token", "signal", "signal_url", "alarm_url", "AlarmUrl", "url",
                     "refs", "refs_map", "show", "OS::stack_id", "stack_identity", "WaitHandle", "outputs",
                     "outputs_list"}
RANDOM_TYPE = "OS::Heat::RandomString"
#: and in every output, ids inside strings (UUIDs, Heat's stack ARNs) compare as ``<id>``
_IDS = re.compile(r"arn:openstack:heat::[^/\s\"']*:stacks/[^/\s\"']+/[0-9a-f-]{36}|"
                  r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def opaque_outputs(template: Path) -> set[str]:
    """The outputs of ``template`` compared by shape only (see ``OPAQUE_ATTRIBUTES``)."""
    try:
        data = yaml.load(template.read_text(errors="replace"), Loader=_Loader)
    except yaml.YAMLError:
        return set()
    resources = data.get("resources") or data.get("Resources") or {}
    outputs = data.get("outputs") or data.get("Outputs") or {}
    if not isinstance(resources, dict) or not isinstance(outputs, dict):
        return set()
    random = {name for name, r in resources.items() if _is_random(r, template.parent)}
    return {key for key, output in outputs.items() if _uses_opaque(output, set(resources), random)}


def simulated_outputs(template: Path, simulated: set[str]) -> set[str]:
    """The outputs of ``template`` that read an attribute of a resource of a simulated type
    (``--simulated --create``): Heat's no-op plug-ins answer null there, Stoker a realistic value,
    so those are compared by whether they resolve, not by value."""
    try:
        data = yaml.load(template.read_text(errors="replace"), Loader=_Loader)
    except yaml.YAMLError:
        return set()
    resources = (data.get("resources") or data.get("Resources") or {}) if isinstance(data, dict) else {}
    outputs = (data.get("outputs") or data.get("Outputs") or {}) if isinstance(data, dict) else {}
    if not isinstance(resources, dict) or not isinstance(outputs, dict):
        return set()
    named = {name for name, body in resources.items()
             if isinstance(body, dict) and (body.get("type") or body.get("Type")) in simulated}
    return {key for key, output in outputs.items() if _reads_attribute_of(output, named)}


def _reads_attribute_of(node, names: set) -> bool:
    if isinstance(node, list):
        return any(_reads_attribute_of(item, names) for item in node)
    if not isinstance(node, dict):
        return False
    return any(key in ("get_attr", "Fn::GetAtt") and isinstance(arg, list) and arg and arg[0] in names
               or _reads_attribute_of(arg, names) for key, arg in node.items())


def _is_random(resource, folder: Path) -> bool:
    """A RandomString, a group or chain of them, or a provider template that has one."""
    if not isinstance(resource, dict):
        return False
    props = resource.get("properties") or resource.get("Properties") or {}
    member = props.get("resource_def") or props.get("resource") if isinstance(props, dict) else None
    chain = props.get("resources") if isinstance(props, dict) and isinstance(props.get("resources"), list) else []
    types = [resource.get("type") or resource.get("Type"), member.get("type") if isinstance(member, dict) else None,
             *chain]
    for kind in filter(lambda t: isinstance(t, str), types):
        if kind == RANDOM_TYPE or kind.endswith((".yaml", ".template")) and (folder / kind).is_file() \
                and RANDOM_TYPE in (folder / kind).read_text(errors="replace"):
            return True
    return False


def _uses_opaque(node, resources: set, random: set) -> bool:
    if isinstance(node, list):
        return any(_uses_opaque(item, resources, random) for item in node)
    if not isinstance(node, dict):
        return False
    for key, arg in node.items():
        name = arg[0] if isinstance(arg, list) and arg else arg
        if not isinstance(name, str):
            name = None
        if key in ("get_resource", "Ref") and (name in resources or name in OPAQUE_PARAMETERS):
            return True
        if key == "get_param" and name in OPAQUE_PARAMETERS:
            return True
        if key in ("get_attr", "Fn::GetAtt") and isinstance(arg, list) and (
                name in random or any(isinstance(a, str) and a in OPAQUE_ATTRIBUTES for a in arg[1:])):
            return True
        if _uses_opaque(arg, resources, random):
            return True
    return False


def _ids_masked(value):
    """``value`` with ids inside strings masked, and every URL (``scheme://...``: signal
    URLs hold ids and signatures) as ``<url>``."""
    if isinstance(value, str) and _URL.match(value):
        return "<url>"
    if isinstance(value, dict):
        return {key: _ids_masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_ids_masked(item) for item in value]
    return _IDS.sub("<id>", value) if isinstance(value, str) else value


_URL = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$")


def _shape(value):
    """The nesting of lists and maps with the leaves' types; a map's keys are left out
    (a group's member names are random)."""
    if isinstance(value, dict):
        return ["map"] + sorted(json.dumps(_shape(item)) for item in value.values())
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__


def same_output(heat: dict, stoker: dict, by_shape: bool, resolved_only: bool = False) -> bool:
    """An output agrees when both are errors, or both values are equal (ids masked; by shape if opaque;
    any two values if ``resolved_only``: it reads a simulated attribute)."""
    if "error" in heat or "error" in stoker:
        return "error" in heat and "error" in stoker
    if resolved_only:
        return True
    if by_shape:
        return _shape(heat["value"]) == _shape(stoker["value"])
    return _ids_masked(heat["value"]) == _ids_masked(stoker["value"])


def outcome(create: dict) -> str:
    """REFUSED (up front), COMPLETE, FAILED or IN_PROGRESS."""
    return create["status"].rsplit("_", 1)[-1] if create["status"] != "REFUSED" else "REFUSED"


def create_differences(heat: dict, stoker: dict, opaque: set, loose: set = frozenset()) -> list[str]:
    """Why the two creates disagree (empty when they agree)."""
    if outcome(heat) != outcome(stoker):
        return [f"outcome: Heat {heat['status']}, Stoker {stoker['status']}"]
    if outcome(heat) != "COMPLETE":
        return []
    keys = sorted(set(heat["outputs"]) | set(stoker["outputs"]))
    missing = {"error": "(missing)"}
    return [f"output {key}: Heat {json.dumps(heat['outputs'].get(key, missing))[:300]}, "
            f"Stoker {json.dumps(stoker['outputs'].get(key, missing))[:300]}"
            for key in keys if not same_output(heat["outputs"].get(key, missing),
                                               stoker["outputs"].get(key, missing), key in opaque, key in loose)]


def report_creates(rows: list[dict], roots: list[Path], shown: int) -> bool:
    """Print the creates that disagree and the figure; True when all agree."""
    differing = [(row, diffs) for row in rows
                 if (diffs := create_differences(row["heat"]["create"], row["stoker"]["create"], set(row["opaque"]),
                                                 set(row.get("loose", ()))))]
    for row, diffs in differing[:shown]:
        heat, stoker = row["heat"]["create"], row["stoker"]["create"]
        print(f"--- create {_short(row['template'], roots)}\n    " + "\n    ".join(diffs[:5]) +
              f"\n    Heat:   {heat['status']} {heat['message'][:300]}\n    Stoker: {stoker['status']} "
              f"{stoker['message'][:300]}")
    kinds = Counter("outputs" if diffs[0].startswith("output") else diffs[0] for _, diffs in differing)
    loose = sum(len(row.get("loose", ())) for row in rows)
    if loose:
        print(f"create: {loose} output(s) read simulated attributes (Heat's no-op plug-ins answer null): "
              "compared by whether they resolve")
    print(f"create: {len(rows) - len(differing)}/{len(rows)} agree" +
          "".join(f"; {n} {kind}" for kind, n in kinds.most_common()))
    differing_templates = {row["template"] for row, _ in differing}
    _per_corpus("create", rows, lambda row: row["template"] not in differing_templates)
    return not differing


def report(action: str, rows: list[dict], roots: list[Path], shown: int) -> bool:
    """Print the disagreements on ``action`` and the figure; True when all agree."""
    pairs = [(r["template"], r["heat"][action], r["stoker"][action]) for r in rows]
    refused = [p for p in pairs if p[1]["ok"] and not p[2]["ok"]]
    accepted = [p for p in pairs if not p[1]["ok"] and p[2]["ok"]]
    for template, heat, stoker in (refused + accepted)[:shown]:
        print(f"--- {action} {_short(template, roots)}\n    Heat:   {_verdict(heat)}\n"
              f"    Stoker: {_verdict(stoker)}")
    codes = Counter(code for p in refused for code in re.findall(r"\[([a-z-]+)\]", p[2]["message"])[:1])
    if codes:
        print(f"{action}: Stoker refuses what Heat accepts, by first error code:",
              ", ".join(f"{code} {n}" for code, n in codes.most_common()))
    agree = len(pairs) - len(refused) - len(accepted)
    print(f"{action}: {agree}/{len(pairs)} agree; Stoker refuses {len(refused)} that Heat accepts, "
          f"accepts {len(accepted)} that Heat refuses")
    differing = {p[0] for p in refused + accepted}
    _per_corpus(action, rows, lambda row: row["template"] not in differing)
    return agree == len(pairs)


def _per_corpus(action: str, rows: list[dict], agrees) -> None:
    """One figure per corpus (the directory or package each template came from), when there are several."""
    corpora = Counter(row.get("corpus", "") for row in rows)
    if len(corpora) < 2:
        return
    agreeing = Counter(row.get("corpus", "") for row in rows if agrees(row))
    for corpus, total in sorted(corpora.items()):
        print(f"  {action} {corpus}: {agreeing[corpus]}/{total} agree ({100 * agreeing[corpus] / total:.1f}%)")


def _verdict(verdict: dict) -> str:
    return "accepted" if verdict["ok"] else f"refused: {verdict['message'][:400]}"


def _short(path: str, roots: list[Path]) -> str:
    for root in roots:
        if path.startswith(str(root.resolve())):
            return os.path.relpath(path, root.resolve().parent)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="directories (or files) of templates")
    parser.add_argument("--package", action="append", default=[],
                        help="also the templates of this published package's sdist (e.g. tripleo-heat-templates)")
    parser.add_argument("--collection", action="append", default=[], choices=sorted(COLLECTIONS),
                        help="also this public collection of templates, cloned with git (repeat for several)")
    parser.add_argument("--heat-python", help="python of a virtualenv with openstack-heat (else: Stoker only)")
    parser.add_argument("--sample", type=int, help="validate a random sample of this many templates")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=4,
                        help="templates at a time on each side (creates mostly wait: a wait nobody signals)")
    parser.add_argument("--show", type=int, default=50, help="disagreements to print")
    parser.add_argument("--save", type=Path, help="also write every verdict of both sides to this JSON file")
    parser.add_argument("--create", action="store_true",
                        help="also create each template on both sides and compare outcome and outputs")
    parser.add_argument("--report", type=Path, help="only report the verdicts saved by an earlier --save")
    parser.add_argument("--simulated", action="store_true",
                        help="no stub for Heat's OpenStack types: Stoker's simulated types against Heat's real "
                             "plug-ins (service constraints answering valid); with --create, Heat's plug-ins of "
                             "those types create with every service call a no-op")
    args = parser.parse_args()
    if args.report:
        rows = json.loads(args.report.read_text())
        agreed = [report("validate", rows, args.paths, args.show)]
        if "create" in rows[0]["stoker"]:
            agreed.append(report_creates(rows, args.paths, args.show))
        return 0 if all(agreed) else 1
    with tempfile.TemporaryDirectory(prefix="heat-corpus-") as work:
        return run(args, parser, Path(work))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser, work: Path) -> int:
    roots = (list(args.paths) + [from_package(name, work / "packages") for name in args.package]
             + [from_collection(name, work / "collections") for name in args.collection])
    if not roots:
        parser.error("give a directory of templates, --package NAME or --collection NAME")
    corpus_of = {}
    for number, root in enumerate(roots):
        for path in find_templates([root], work / "inline" / str(number)):
            corpus_of.setdefault(path, root.name)
    templates = list(corpus_of)
    if args.sample and args.sample < len(templates):
        templates = sorted(random.Random(args.seed).sample(templates, args.sample))
    environment = none_environment(templates, work, args.simulated)
    jobs = [{"template": str(t), "environment": str(environment), "create": f"corpus-{n}" if args.create else None,
             "create_environment": str(create_environment(t, environment, work, f"corpus-{n}"))}
            for n, t in enumerate(templates)]
    shares = [jobs[n::args.jobs] for n in range(args.jobs) if jobs[n::args.jobs]]
    simulated = simulated_types() if args.simulated and args.create else []
    heat_run = start_heat(args.heat_python, shares, work, simulated) if args.heat_python else None
    with ProcessPoolExecutor(args.jobs, initializer=_own_home, initargs=(work,)) as pool:
        rows = [{"template": job["template"], "corpus": corpus_of[Path(job["template"])], "stoker": verdicts,
                 "opaque": sorted(opaque_outputs(Path(job["template"]))),
                 "loose": sorted(simulated_outputs(Path(job["template"]), set(simulated)))}
                for job, verdicts in zip(jobs, pool.map(stoker_verdicts, jobs))]
    heat = heat_verdicts(heat_run, len(jobs)) if heat_run else None
    for row in rows:
        row["heat"] = heat[row["template"]] if heat else {
            "validate": {"ok": True, "message": "(Heat not run)"}, "create": row["stoker"].get("create")}
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1))
    agreed = [report("validate", rows, roots, args.show)]
    if args.create:
        agreed.append(report_creates(rows, roots, args.show))
    return 0 if all(agreed) else 1


if __name__ == "__main__":
    sys.exit(main())
