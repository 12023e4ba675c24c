"""Python plugin operations: the plugin's own virtualenv and the command that runs one task in it.

As on a Cloudify manager, each uploaded plugin version gets a virtualenv of its
own (``$STOKER_HOME/plugin-envs/<name>/<version>``, a stored one's under its tenant's ``@<project>/``
as in the catalog, made once, under a file lock
so concurrent operations wait for the first) holding the real cloudify-common
(``CLOUDIFY_COMMON``, unless the plugin's own pins conflict with it: then the
cloudify-common they resolve to, as the plugin's wagon would bring), the plugin (its wheel, a wagon's wheels, or a source
folder: installed when it has a ``setup.py``/``pyproject.toml``, else put on the
path) and the plugin's own dependencies.  Everything installed comes from the
wheel cache (``STOKER_PLUGIN_WHEELS``, default ``$STOKER_HOME/plugin-wheels``)
and a wagon's own wheels; when some are missing there, they are built into the
cache from the package index and the install is tried again, so a second
virtualenv is made offline, in one pip run.  Stoker's own
packages are never in it: a task runs through ``plugin_runner/stoker_operation.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

from stoker.blueprint import namespaces
from stoker.blueprint.plugin_catalog import Plugin, PluginCatalog
from stoker.store.blueprint_records import BlueprintRecords
from stoker.store.plugin_packages import Viewer, viewer_of
from stoker.home import stoker_home
from stoker.workflows.operation_context import OperationFailed
from stoker.workflows.workdirs import plugin_workdir

#: runs one task in the plugin's virtualenv (by path: nothing of Stoker's is importable there)
RUNNER = Path(__file__).with_name("plugin_runner") / "stoker_operation.py"
#: the cloudify-common every plugin virtualenv gets (the version Stoker's blueprints and REST API follow)
CLOUDIFY_COMMON = "cloudify-common==7.0.5"
#: where built wheels are kept between virtualenvs (else ``$STOKER_HOME/plugin-wheels``)
WHEELS_VARIABLE = "STOKER_PLUGIN_WHEELS"
#: making a virtualenv and installing into it: beyond this, it is stuck
INSTALL_TIMEOUT = 900
_READY = ".stoker-ready"
#: what pip says when requirements conflict
RESOLUTION_IMPOSSIBLE = "ResolutionImpossible"
#: plugins the standard types name whose operations are the manager's agents and workflows (its
#: ``cfy_extensions`` run natively: ``workflows.cfy_extensions``)
MANAGER_PLUGINS = ("agent", "default_workflows")


def task_command(plugin: dict, implementation: str, store: Any = None, viewer: Viewer | None = None) -> list[str]:
    """``[python, -s, runner, module.function]`` for the operation ``plugin_name.module.function``
    (the plugin from the catalog of ``store``, when given: ``PluginCatalog.at_home``, as ``viewer`` sees it:
    ``task_viewer``)."""
    if plugin.get("name") in MANAGER_PLUGINS:
        raise OperationFailed(f"{implementation} is one of the Cloudify manager's own operations (agents, "
                              "workflows), which Stoker does not run", recoverable=False)
    own = str(plugin.get("name"))  # ns--name when imported into a namespace: its package is still name's
    name, version = plugin.get("package_name") or namespaces.split(own)[1], plugin.get("package_version")
    found = PluginCatalog.at_home(store=store, viewer=viewer).find(str(name), str(version) if version else None)
    if found is None:
        which = f"{name} {version}" if version else str(name)
        raise OperationFailed(f"plugin {which} is not uploaded (stoker plugin upload): cannot run {implementation}",
                              recoverable=False)
    task = implementation[len(own) + 1:] if implementation.startswith(f"{own}.") else ""
    if "." not in task:
        raise OperationFailed(f"{implementation} names no module.function of plugin {name}", recoverable=False)
    return [str(environment(found) / "bin" / "python"), "-s", str(RUNNER), task]


def task_viewer(store: Any, project_id: str, tenant: str, deployment_id: str) -> Viewer:
    """A task uses the plugins its deployment's creator sees (``viewer_of``, as the API's routes): its
    tenant's and the global ones, private ones only as their uploader, the tenant's manager or the operator."""
    creator = BlueprintRecords(store).get_deployment(project_id, deployment_id)["created_by"]
    return viewer_of(store.engine, project_id, tenant, creator)


def plugin_view(name: str, definition: dict, deployment_id: str) -> dict:
    """What ``ctx.plugin`` shows: names, its properties as Cloudify gives them (each one's definition,
    ``value`` the one set on import; named ``ns--property`` in a namespace), a work folder of its own."""
    properties = definition.get("properties") if isinstance(definition.get("properties"), dict) else {}
    workdir = plugin_workdir(deployment_id, name)
    return {"name": name, "package_name": definition.get("package_name") or namespaces.split(name)[1],
            "package_version": definition.get("package_version"), "workdir": str(workdir),
            "properties": {key: dict(value) if isinstance(value, dict) else {"value": value}
                           for key, value in properties.items()}}


def environment(plugin: Plugin, locked: threading.Event | None = None) -> Path:
    """The plugin's virtualenv, made on first use (or by ``cfy plugins install``); a failure is kept
    beside it (``install_state`` reports it) until a later attempt succeeds.  ``locked`` is set once this
    call holds the making (another process's or thread's, waited for first)."""
    folder = stoker_home(create=True) / "plugin-envs" / plugin.key
    made_from = plugin.digest or plugin.version  # a plugin uploaded again (a new digest) gets a new one
    if _made_from(folder) == made_from:
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(plugin.version + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if locked is not None:
            locked.set()
        if _made_from(folder) != made_from:
            failed = folder.with_name(plugin.version + ".error")
            try:
                _make(plugin, folder)
            except OperationFailed as failure:
                failed.write_text(f"{made_from}\n{failure}")
                raise
            (folder / _READY).write_text(made_from)
            failed.unlink(missing_ok=True)
    return folder


def install_soon(plugin: Plugin) -> None:
    """Make the plugin's virtualenv in a thread of its own (``cfy plugins install``), returning once it is
    being made (``install_state``: installing) or is made; a failure is kept for ``install_state``."""
    locked = threading.Event()

    def make() -> None:
        try:
            with contextlib.suppress(OperationFailed):
                environment(plugin, locked)
        finally:
            locked.set()

    threading.Thread(target=make, name=f"plugin-install-{plugin.name}-{plugin.version}", daemon=True).start()
    locked.wait()


def install_state(plugin: Plugin) -> tuple[str, str | None] | None:
    """Where the plugin's virtualenv stands, in Cloudify's words: ``installed``, ``installing`` (being
    made, by any process), ``error`` (with why), or None (not made yet: it will be at first use)."""
    folder = stoker_home() / "plugin-envs" / plugin.key
    made_from = plugin.digest or plugin.version
    if _made_from(folder) == made_from:
        return "installed", None
    lock = folder.with_name(plugin.version + ".lock")
    if lock.is_file():
        with open(lock) as held:
            try:
                fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return "installing", None
    failed = folder.with_name(plugin.version + ".error")
    if failed.is_file():
        digest, _, why = failed.read_text().partition("\n")
        if digest == made_from:
            return "error", why
    return None


def _made_from(folder: Path) -> str | None:
    ready = folder / _READY
    return ready.read_text() if ready.is_file() else None


def wheel_cache() -> Path:
    configured = os.environ.get(WHEELS_VARIABLE)
    folder = Path(configured) if configured else stoker_home(create=True) / "plugin-wheels"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _make(plugin: Plugin, folder: Path) -> None:
    what = f"plugin {plugin.name} {plugin.version}"
    _run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(folder)], what)
    package = plugin.folder / "package"
    files = list(package.iterdir()) if package.is_dir() else []
    with tempfile.TemporaryDirectory(prefix="stoker-wagon-") as scratch:
        links: list[Path] = []
        if len(files) == 1 and files[0].suffix == ".whl":
            requirements = [str(files[0])]
        elif len(files) == 1 and files[0].suffix == ".wgn":
            # all but the cloudify-common it was built with: every virtualenv has CLOUDIFY_COMMON
            requirements = [str(wheel) for wheel in _wagon_wheels(files[0], Path(scratch))
                            if not wheel.name.lower().startswith("cloudify_common-")]
            links = [Path(scratch)]
        elif (package / "setup.py").is_file() or (package / "pyproject.toml").is_file():
            requirements = [str(package)]
        else:  # a folder of modules: on the path as it was uploaded
            requirements = []
            site = _run([str(folder / "bin" / "python"), "-c",
                         "import sysconfig; print(sysconfig.get_path('purelib'))"], what).strip()
            (Path(site) / "stoker-plugin-source.pth").write_text(f"{package}\n")
        try:
            install([CLOUDIFY_COMMON, *requirements], folder / "bin" / "python", links, plugin)
        except OperationFailed as failure:
            if not requirements or RESOLUTION_IMPOSSIBLE not in str(failure):
                raise
            # the plugin pins what cloudify-common 7.0.5 needs newer (one built for an older manager): it runs
            # with the cloudify-common its own requirements resolve to, as its wagon does on a manager
            install(requirements, folder / "bin" / "python", links, plugin)


def install(requirements: list[str], python: Path, links: list[Path], plugin: Plugin) -> None:
    """Install ``requirements`` for ``python`` from the wheel cache; only when it lacks some is it filled
    from the package index and the install tried again (a warm cache costs one pip resolution, not two)."""
    what = f"plugin {plugin.name} {plugin.version}"
    offline = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
               "--disable-pip-version-check", "--no-compile", "--no-index", *_find_links(links)]
    try:
        _run([*offline, *requirements], what)
    except OperationFailed:  # pip resolves before it installs: a missing wheel fails with nothing installed
        fill_cache(requirements, links, what)
        _run([*offline, *requirements], what)


def _find_links(links: list[Path] = ()) -> list[str]:
    """``--find-links`` arguments for the wheel cache and ``links``."""
    return [arg for link in [wheel_cache(), *links] for arg in ("--find-links", str(link))]


def fill_cache(requirements: list[str], links: list[Path] = (), what: str = "the plugin wheel cache") -> None:
    """Build into the wheel cache what ``requirements`` need and it lacks (from the package index)."""
    cache = wheel_cache()
    finds = _find_links(links)
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--wheel-dir",
             str(cache), *finds, *requirements]
    try:
        _run([*build[:4], "--no-index", *build[4:]], what)
    except OperationFailed:  # something is not in the cache yet
        with open(cache / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _run(build, what)


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


def _run(command: list[str], what: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OperationFailed(f"cannot prepare {what}: {exc}", recoverable=False) from None
    if done.returncode != 0:
        raise OperationFailed(f"cannot prepare {what}: {(done.stderr or done.stdout).strip()[-2000:]}",
                              recoverable=False)
    return done.stdout
