"""Driver of scripts/heat-corpus: Stoker's verdict and Heat's on real templates, side by side.

Runs in Stoker's .venv.  Every Heat template found under the paths given (or in a
published package's sdist) is validated by ``stoker template validate`` (in-process)
and, when a Heat virtualenv is given, by Heat's own engine (scripts/heat_corpus_heat.py,
a separate process).  Both get the same environment: every resource type Stoker does
not ship mapped to ``OS::Heat::None``.  Prints the agreement figure and each
disagreement (template, Heat's verdict, Stoker's).
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


def none_environment(templates: list[Path], work: Path) -> Path:
    """One environment mapping every type the corpus uses that Stoker does not ship to None."""
    shipped = set(registry.default_registry([]).types())
    used: set[str] = set()
    for path in templates:
        used.update(_TYPE_LINE.findall(path.read_text(errors="replace")))
    mapping = {name: "OS::Heat::None" for name in sorted(used - shipped)}
    env = work / "none-environment.yaml"
    env.write_text(yaml.safe_dump({"resource_registry": mapping}, default_flow_style=False))
    return env


STOKER_COMMANDS = {
    "validate": ["template", "validate"],
    "create": ["stack", "create", "corpus", "--dry-run"],  # every check a create makes first
}


def stoker_verdict(action: str, template: Path, environment: Path) -> dict:
    """``stoker template validate`` (or a create's checks): accepted or not, and the first errors."""
    run = CliRunner().invoke(stoker_main, STOKER_COMMANDS[action] + ["-t", str(template), "-e", str(environment),
                                                                     "-f", "json"], catch_exceptions=True)
    if run.exit_code == 0:
        return {"ok": True, "message": ""}
    if run.exception is not None and not isinstance(run.exception, SystemExit):
        return {"ok": False, "message": f"crash: {type(run.exception).__name__}: {run.exception}"}
    try:
        errors = json.loads(run.stdout)
        message = "; ".join(f"{e['path']}: {e['message']} [{e['code']}]" for e in errors[:3])
    except (ValueError, TypeError, KeyError):
        message = (run.stdout + run.stderr).strip()
    return {"ok": False, "message": message}


def heat_verdicts(heat_python: str, jobs: list[dict]) -> dict[str, dict]:
    """Heat's verdict on every job, from its own engine in its own virtualenv."""
    done = subprocess.run([heat_python, str(HERE / "heat_corpus_heat.py")], input=json.dumps(jobs),
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    verdicts = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            verdicts[row["template"]] = row
    if len(verdicts) < len(jobs):
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"Heat gave {len(verdicts)} verdicts for {len(jobs)} templates")
    return verdicts


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
    return agree == len(pairs)


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
    parser.add_argument("--heat-python", help="python of a virtualenv with openstack-heat (else: Stoker only)")
    parser.add_argument("--sample", type=int, help="validate a random sample of this many templates")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--show", type=int, default=50, help="disagreements to print")
    parser.add_argument("--create", action="store_true",
                        help="also compare the checks a create makes before it starts (Heat: preview_stack)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="heat-corpus-"))
    os.environ["STOKER_HOME"] = str(work / "home")
    roots = list(args.paths) + [from_package(name, work / "packages") for name in args.package]
    if not roots:
        parser.error("give a directory of templates or --package NAME")
    templates = find_templates(roots, work / "inline")
    if args.sample and args.sample < len(templates):
        templates = sorted(random.Random(args.seed).sample(templates, args.sample))
    environment = none_environment(templates, work)
    actions = ["validate", "create"] if args.create else ["validate"]
    jobs = [{"template": str(t), "environment": str(environment), "create": args.create} for t in templates]
    heat = heat_verdicts(args.heat_python, jobs) if args.heat_python else None
    unknown = {"ok": True, "message": "(Heat not run)"}
    rows = [{"template": job["template"],
             "stoker": {a: stoker_verdict(a, Path(job["template"]), environment) for a in actions},
             "heat": heat[job["template"]] if heat else {a: unknown for a in actions}}
            for job in jobs]
    agreed = [report(action, rows, roots, args.show) for action in actions]
    return 0 if all(agreed) else 1


if __name__ == "__main__":
    sys.exit(main())
