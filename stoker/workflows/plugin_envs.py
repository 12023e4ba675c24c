"""Python plugin operations: the plugin's own virtualenv and the command that runs one task in it.

Each uploaded plugin version gets a virtualenv of its own under
``$STOKER_HOME/plugin-envs/<name>/<version>``, made once (under a file lock, so
concurrent operations wait for the first): a wheel or a wagon's wheels are
installed into it from the catalog (``--no-index``: never from the network), a
source folder is put on its path. Stoker's own packages are never in it; the
operation runs there through ``_stoker_operation`` (the ``shim`` folder), which
gives it Cloudify's ``ctx`` and ``@operation`` keyword inputs.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from stoker.blueprint.plugin_catalog import Plugin, PluginCatalog
from stoker.home import stoker_home
from stoker.workflows.operation_context import OperationFailed

#: the module in ``shim`` that imports and calls the task
RUNNER_MODULE = "_stoker_operation"
#: making a virtualenv and installing a wagon's wheels: beyond this, it is stuck
INSTALL_TIMEOUT = 600
_READY = ".stoker-ready"
#: plugins the standard types name whose operations are the manager's agents and workflows (its
#: ``cfy_extensions`` run natively: ``workflows.cfy_extensions``)
MANAGER_PLUGINS = ("agent", "default_workflows")


def task_command(plugin: dict, implementation: str) -> list[str]:
    """``[python, -m, runner, module.function]`` for the operation ``plugin_name.module.function``."""
    if plugin.get("name") in MANAGER_PLUGINS:
        raise OperationFailed(f"{implementation} is one of the Cloudify manager's own operations (agents, "
                              "workflows), which Stoker does not run", recoverable=False)
    name, version = plugin.get("package_name") or plugin.get("name"), plugin.get("package_version")
    found = PluginCatalog(stoker_home() / "plugins").find(str(name), str(version) if version else None)
    if found is None:
        which = f"{name} {version}" if version else str(name)
        raise OperationFailed(f"plugin {which} is not uploaded (stoker plugin upload): cannot run {implementation}",
                              recoverable=False)
    task = implementation.split(".", 1)[1] if "." in implementation else ""
    if "." not in task:
        raise OperationFailed(f"{implementation} names no module.function of plugin {name}", recoverable=False)
    return [str(environment(found) / "bin" / "python"), "-m", RUNNER_MODULE, task]


def plugin_view(name: str, definition: dict, deployment_id: str) -> dict:
    """What ``ctx.plugin`` shows: names, the properties set on import, a work folder of its own."""
    properties = definition.get("properties") if isinstance(definition.get("properties"), dict) else {}
    workdir = stoker_home(create=True) / "plugin-workdirs" / _safe(deployment_id) / _safe(name)
    workdir.mkdir(parents=True, exist_ok=True)
    return {"name": name, "package_name": definition.get("package_name") or name,
            "package_version": definition.get("package_version"), "workdir": str(workdir),
            "properties": {key: (value.get("value", value.get("default")) if isinstance(value, dict) else value)
                           for key, value in properties.items()}}


def _safe(name: str) -> str:
    """A name as one path component (ids may hold anything)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "_"


def environment(plugin: Plugin) -> Path:
    """The plugin's virtualenv, made on first use."""
    folder = stoker_home(create=True) / "plugin-envs" / plugin.name / plugin.version
    if (folder / _READY).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(plugin.version + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / _READY).exists():
            _make(plugin, folder)
    return folder


def _make(plugin: Plugin, folder: Path) -> None:
    _run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(folder)], plugin)
    site = Path(_run([str(folder / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     plugin).strip())
    package = plugin.folder / "package"
    files = list(package.iterdir()) if package.is_dir() else []
    if len(files) == 1 and files[0].suffix == ".whl":
        _install([files[0]], site, plugin)
    elif len(files) == 1 and files[0].suffix == ".wgn":
        with tempfile.TemporaryDirectory(prefix="stoker-wagon-") as scratch:
            _install(_wagon_wheels(files[0], Path(scratch)), site, plugin)
    else:  # a source folder: on the path as it was uploaded
        (site / "stoker-plugin-source.pth").write_text(f"{package}\n")
    (folder / _READY).write_text(plugin.version)


def _install(wheels: list[Path], site: Path, plugin: Plugin) -> None:
    if wheels:
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
              "--no-deps", "--target", str(site), *map(str, wheels)], plugin)


def _wagon_wheels(wagon: Path, scratch: Path) -> list[Path]:
    """A wagon's ``<name>/wheels/*.whl``, extracted (only those: no other member is written)."""
    wheels = []
    with tarfile.open(wagon, "r:gz") as archive:
        for member in archive:
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 3 and parts[1] == "wheels" and parts[2].endswith(".whl") \
                    and not parts[2].startswith("."):
                target = scratch / parts[2]
                with archive.extractfile(member) as source, open(target, "wb") as out:  # type: ignore[union-attr]
                    out.write(source.read())
                wheels.append(target)
    return wheels


def _run(command: list[str], plugin: Plugin) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OperationFailed(f"cannot prepare plugin {plugin.name} {plugin.version}: {exc}", recoverable=False) \
            from None
    if done.returncode != 0:
        raise OperationFailed(f"cannot prepare plugin {plugin.name} {plugin.version}: "
                              f"{(done.stderr or done.stdout).strip()[-2000:]}", recoverable=False)
    return done.stdout
