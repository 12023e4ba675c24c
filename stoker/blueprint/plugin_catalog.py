"""The plugin catalog: uploaded Cloudify plugins (a wagon, a wheel or a source folder, plus its YAMLs).

Each plugin version lives in ``$STOKER_HOME/plugins/<package_name>/<version>/``
(one of the database's: ``plugins/@<project>/<package_name>/<version>/``, as two
tenants may each hold the same name and version): its plugin YAML(s) as given
and the package (``package/``) its operations will run from. The name is the
YAML's ``package_name``, which ``plugin:NAME`` imports name. Nothing is ever fetched from the network.

Given the store (``at_home(store=...)``), the catalog is the database's
(``store/plugin_packages.py``): an upload stores the folder packed there too,
and every host reading the catalog unpacks what it lacks, or holds an older
copy of, into its own ``$STOKER_HOME/plugins`` (marked with the stored
digest), so a worker on another machine runs a plugin uploaded on the API host.
A catalog read for a ``Viewer`` (a tenant, over the API also a user) holds only the
stored plugins it may see: its tenant's own and the global ones; of one name and
version seen twice (its own and another tenant's global one), its own is found.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import tarfile
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from stoker.blueprint import archives
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.state import tenant_of
from stoker.errors import Conflict, ValidationFailed
from stoker.home import stoker_home
from stoker.template.loader import load

#: a plugin YAML, a wagon's package.json: bounds on what is read
MAX_YAML_SIZE = 4 * 1024 * 1024
MAX_PACKAGE_SIZE = 512 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_VERSIONED_YAML = re.compile(r"_\d_\d+\.yaml$")
#: an upload in progress (or cut short): never listed
_STAGING = ".uploading"
#: in a plugin's folder unpacked from the database: the sha256 of the stored archive it came from
DIGEST_FILE = ".stoker-sha256"
#: a plugin's id is derived from its tenant, name and version, so it is the same on every server and after restarts
_IDS = uuid.UUID("6f1c1d1e-5b5e-4c1a-9d57-7b1f0c2a9e11")


class PluginInUse(Conflict):
    """A blueprint uses the plugin (Cloudify's ``plugin_in_use``): it is deleted only with force."""

    code = "plugin-in-use"


@dataclass
class Plugin:
    name: str
    version: str
    folder: Path
    #: whose it is (``store.plugin_packages.Owner``), for a plugin of the database
    owner: Any = None
    #: the tenant's folder it is unpacked under (a plugin of the database's), None: the host's own
    project: str | None = None

    @property
    def key(self) -> Path:
        """Where it lives under the catalog (and its virtualenv under ``plugin-envs``): a stored plugin's
        under its tenant's folder, so two tenants' plugins of one name and version are apart."""
        return _key(self.owner.project_id if self.owner else self.project, self.name, self.version)

    @property
    def id(self) -> str:
        """Its id over Cloudify's API (``cfy plugins get ID``)."""
        return str(uuid.uuid5(_IDS, self.key.as_posix()))

    @property
    def digest(self) -> str | None:
        """The stored archive's sha256 this folder was unpacked from (None: uploaded here only)."""
        marker = self.folder / DIGEST_FILE
        return marker.read_text().strip() if marker.is_file() else None

    @property
    def yaml_files(self) -> list[Path]:
        return sorted(self.folder.glob("*.yaml"))

    def as_dict(self) -> dict:
        """What ``stoker plugin`` shows (over ``--url`` too: ``cli.remote_dsl.RemotePlugins``)."""
        return {"package_name": self.name, "package_version": self.version,
                "yaml_files": [p.name for p in self.yaml_files], "package": _package_kind(self.folder),
                "visibility": self.owner.visibility if self.owner else None,
                "tenant_name": tenant_of(self.owner.project_id) if self.owner else None}

    def download(self, what: str = "package", dsl_version: str | None = None) -> tuple[bytes, str]:
        """(bytes, file name) of what ``cfy plugins download`` / ``download_yaml`` fetch: the package as
        uploaded (a source folder as a tar.gz), ``full``: a zip of it and the YAMLs (which an upload takes
        again), ``yaml``: the YAML a blueprint of ``dsl_version`` (``1_4``, ``cloudify_dsl_1_4``) imports."""
        if what == "yaml":
            wanted = re.search(r"(\d+)[._](\d+)$", dsl_version or "")
            path = self.yaml_for((int(wanted[1]), int(wanted[2])) if wanted else None)
            if path is None:
                raise BlueprintError(f"plugin {self.name} {self.version} has no plugin YAML", code="not-found")
            return path.read_bytes(), path.name
        package = self.folder / "package"
        kind = _package_kind(self.folder)
        data, name = ((package / kind).read_bytes(), kind) if kind != "source" else \
            (archives.pack(package), f"{self.name}-{self.version}.tar.gz")
        if what != "full":
            return data, name
        zipped = io.BytesIO()
        with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(name, data)
            for path in self.yaml_files:
                archive.write(path, path.name)
        return zipped.getvalue(), f"{self.name}-{self.version}.zip"

    def yaml_for(self, dsl_version: tuple[int, int] | None, wanted: str | None = None) -> Path | None:
        """The YAML a blueprint of ``dsl_version`` imports, chosen as Cloudify's resolver does: the one
        named for the version (``plugin_1_4.yaml``), else the first without a version in its name."""
        files = self.yaml_files
        if wanted and (self.folder / wanted) in files:
            return self.folder / wanted
        if len(files) <= 1:
            return files[0] if files else None
        if dsl_version:
            named = [f for f in files if f.name.endswith(f"{dsl_version[0]}_{dsl_version[1]}.yaml")]
            if named:
                return named[0]
        plain = [f for f in files if not _VERSIONED_YAML.search(f.name)]
        return plain[0] if plain else files[-1]


class PluginCatalog:
    def __init__(self, root: Path, packages: Any = None, viewer: Any = None):
        self.root = root
        #: the database's plugins (``store.plugin_packages.PluginPackages``); None: this folder only
        self.packages = packages
        #: who reads (``store.plugin_packages.Viewer``): only the stored plugins it sees; None: every one
        self.viewer = viewer

    @classmethod
    def at_home(cls, create: bool = False, store: Any = None, viewer: Any = None) -> "PluginCatalog":
        """The catalog every command, import and API request of this ``$STOKER_HOME`` shares (with
        ``store``: the database's, unpacked here, as ``viewer`` sees it)."""
        from stoker.store.plugin_packages import PluginPackages

        return cls(stoker_home(create=create) / "plugins", PluginPackages(store) if store is not None else None,
                   viewer)

    # -- reading --------------------------------------------------------------------------------
    def list(self) -> list[Plugin]:
        """Newest last; of one name and version seen twice, the viewer's own last (``find`` takes it)."""
        stored = self._follow_store() if self.packages is not None else {}
        seen = [Plugin(name, version, self.root / _key(project, name, version), owner, project)
                for (project, name, version), owner in stored.items()
                if self.viewer is None or self.viewer.sees(owner)]
        held = {(p.name, p.version) for p in seen}
        # a folder of no stored row was put in this home directly: the host's, for all; read without the
        # database, those unpacked from it are too
        host = [Plugin(name.name, version.name, version, None, unquote(tenant.name[1:]) if tenant != name else None)
                for tenant in self._folders(self.root) if self.packages is None or not tenant.name.startswith("@")
                for name in (self._folders(tenant) if tenant.name.startswith("@") else [tenant])
                for version in self._folders(name) if (name.name, version.name) not in held]
        own = self.viewer.project_id if self.viewer is not None else None
        return sorted(host + seen, key=lambda p: (p.name, version_key(p.version), p.owner is not None,
                                                  p.owner is not None and p.owner.project_id == own,
                                                  p.project == "default"))

    @staticmethod
    def _folders(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.endswith(_STAGING)) \
            if folder.is_dir() else []

    def find(self, name: str, version: str | None = None) -> Plugin | None:
        """The plugin called ``name``: that version (or the newest matching a specifier such as
        ``>=1.2,<2``, as ``plugin:NAME?version=`` may give it), or the newest."""
        return next((p for p in reversed(self.list()) if p.name == name and _matches(p.version, version)), None)

    # -- uploading ------------------------------------------------------------------------------
    def upload(self, package: Path, yamls: list[Path], owner: Any = None, replace: bool = True) -> Plugin:
        """Store ``package`` (.wgn, .whl or a folder) with its plugin YAML(s); a folder's own YAMLs are
        taken when none are given. The same name and version again replaces the old one (in the
        database: that tenant's own, stored for ``owner``, a ``store.plugin_packages.Owner``), unless
        not ``replace`` (then, as Cloudify, a conflict); another tenant's of that name and version stays."""
        if not package.exists():
            raise BlueprintError(f"cannot upload {package}: no such file or folder", code="not-found")
        if not yamls and package.is_dir():
            yamls = sorted(package.glob("plugin*.yaml"))
        if not yamls:
            raise BlueprintError(f"cannot upload {package}: a plugin needs its plugin YAML (--yaml-path)",
                                 code="no-plugin-yaml")
        name, version = _identity(package, yamls)
        if self.packages is not None:
            from stoker.store.plugin_packages import DEFAULT_OWNER

            owner = owner or DEFAULT_OWNER
            self._refuse_clash(name, version, owner, replace)
        folder = self.root / _key(owner.project_id if self.packages is not None else None, name, version)
        staging = folder.with_name(version + _STAGING)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            for path in yamls:
                shutil.copyfile(path, staging / path.name)
            if package.is_dir():
                shutil.copytree(package, staging / "package", ignore=shutil.ignore_patterns(".git", "__pycache__",
                                                                                             ".venv", "*.pyc"))
            else:
                (staging / "package").mkdir()
                shutil.copyfile(package, staging / "package" / package.name)
            if self.packages is not None:
                data = archives.pack(staging)
                self.packages.put(name, version, archives.digest(data), data, owner)
                (staging / DIGEST_FILE).write_text(archives.digest(data))
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return Plugin(name, version, folder, owner if self.packages is not None else None)

    def set_visibility(self, plugin: Plugin, visibility: str) -> None:
        """Widen a stored plugin's visibility (who may is the caller's to decide)."""
        from stoker.store.plugin_packages import VISIBILITIES

        if visibility not in VISIBILITIES:
            raise BlueprintError(f"a visibility is one of {', '.join(VISIBILITIES)}, not {visibility!r}",
                                 code="invalid-visibility")
        self._stored(plugin)
        if VISIBILITIES.index(visibility) < VISIBILITIES.index(plugin.owner.visibility):
            raise Conflict(f"plugin {plugin.name} {plugin.version} is {plugin.owner.visibility}: a visibility may "
                           f"only widen, not become {visibility}")
        self._refuse_clash(plugin.name, plugin.version, dataclasses.replace(plugin.owner, visibility=visibility), True)
        self.packages.change(plugin.owner.project_id, plugin.name, plugin.version, visibility=visibility)

    def set_owner(self, plugin: Plugin, user: str) -> None:
        """Make ``user`` a stored plugin's owner (whether that user exists and who may is the caller's to decide)."""
        self._stored(plugin)
        self.packages.change(plugin.owner.project_id, plugin.name, plugin.version, created_by=user)

    def _stored(self, plugin: Plugin) -> None:
        if plugin.owner is None or self.packages is None:
            raise BlueprintError(f"plugin {plugin.name} {plugin.version} is not in the database", code="not-found")

    def delete(self, name: str, version: str | None = None, force: bool = False) -> Plugin:
        """Remove it; unless ``force``, ``PluginInUse`` while a blueprint uses it."""
        plugin = self.find(name, version)
        if plugin is None:
            raise BlueprintError(f"plugin {name}{' ' + version if version else ''} is not uploaded", code="not-found")
        if not force:
            self._refuse_in_use(plugin)
        if self.packages is not None and plugin.owner is not None:
            self.packages.remove(plugin.owner.project_id, plugin.name, plugin.version)
        shutil.rmtree(plugin.folder)
        return plugin

    def _refuse_in_use(self, plugin: Plugin) -> None:
        """Cloudify's rule and message: the blueprints of its tenant (a global one's: of every tenant) using it."""
        if self.packages is None:
            return
        from stoker.store.plugin_usage import blueprints_using

        owner = plugin.owner
        scope = None if owner is None or owner.visibility == "global" else [owner.project_id]
        users = blueprints_using(self.packages.engine, plugin.name, plugin.version, scope)
        if users:
            named = ", ".join(blueprint if scope else f"{blueprint} (tenant {tenant_of(project)})"
                              for project, blueprint in users)
            raise PluginInUse(f'Plugin "{plugin.id}" is currently in use in blueprints: {named}. You can "force" '
                              "plugin removal if needed.")

    def _refuse_clash(self, name: str, version: str, owner: Any, replace: bool) -> None:
        """A name and version is one plugin per tenant, and one in all where one of them is global (a
        tenant would see two)."""
        for (project, held_name, held_version), held in self.packages.owners().items():
            if (held_name, held_version) != (name, version):
                continue
            if project == owner.project_id:
                if not replace:
                    raise Conflict(f"plugin {name} {version} is already uploaded to tenant {tenant_of(project)!r}")
            elif "global" in (held.visibility, owner.visibility):
                raise Conflict(f"plugin {name} {version} of tenant {tenant_of(project)!r} is "
                               f"{held.visibility}: a global plugin's name and version are one on the server")

    # -- the database's plugins, unpacked here ----------------------------------------------------
    def _follow_store(self) -> dict:
        """Unpack the stored plugins this folder lacks or holds an older copy of; forget those unpacked
        from the store and deleted there since (plugins uploaded here only stay).  Whose each is."""
        stored = self.packages.owners()
        kept = set()
        for (project, name, version), owner in stored.items():
            kept.add(_key(project, name, version))
            if Plugin(name, version, self.root / _key(project, name, version)).digest != owner.sha256:
                self._unpack(project, name, version, owner.sha256)
        for tenant in self._folders(self.root):  # (before tenants had folders: unpacked at <name>/<version>)
            for name in self._folders(tenant):
                for folder in self._folders(name) if tenant.name.startswith("@") else [name]:
                    if (folder / DIGEST_FILE).is_file() and folder.relative_to(self.root) not in kept:
                        shutil.rmtree(folder, ignore_errors=True)
        return stored

    def _unpack(self, project: str, name: str, version: str, sha256: str) -> None:
        data = self.packages.archive(project, name, version)
        if archives.digest(data) != sha256:
            raise BlueprintError(f"the stored plugin {name} {version} does not match its digest {sha256}",
                                 code="invalid-plugin")
        folder = self.root / _key(project, name, version)
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{version}-", suffix=_STAGING))
        try:
            archives.unpack(data, scratch)
            (scratch / DIGEST_FILE).write_text(sha256)
            shutil.rmtree(folder, ignore_errors=True)
            try:
                scratch.rename(folder)
            except OSError:  # another process unpacked it meanwhile
                if Plugin(name, version, folder).digest != sha256:
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _key(project: str | None, name: str, version: str) -> Path:
    """``<name>/<version>``, under ``@<project>`` for one of the database's (``@``: never a plugin's name)."""
    return Path(f"@{quote(project, safe='')}", name, version) if project is not None else Path(name, version)


def _identity(package: Path, yamls: list[Path]) -> tuple[str, str]:
    """``(package_name, package_version)``: from the plugin YAML, else from the package itself."""
    name = version = None
    for path in yamls:
        if path.stat().st_size > MAX_YAML_SIZE:
            raise BlueprintError(f"{path.name} is larger than {MAX_YAML_SIZE} bytes", code="too-large")
        try:
            document = load(path.read_text(encoding="utf-8"), path.name)
        except (UnicodeDecodeError, OSError, ValidationFailed) as exc:
            raise BlueprintError(f"{path.name} is not a readable plugin YAML: {exc}", code="invalid-plugin-yaml") \
                from None
        plugins = document.get("plugins") if isinstance(document, dict) else None
        if not isinstance(plugins, dict) or not plugins:
            raise BlueprintError(f"{path.name} declares no plugins", code="invalid-plugin-yaml")
        for definition in plugins.values():
            if isinstance(definition, dict):
                name = name or definition.get("package_name")
                version = version or definition.get("package_version")
    package_name, package_version = _package_metadata(package)
    name, version = str(name or package_name or ""), str(version or package_version or "")
    for what, value in (("name", name), ("version", version)):
        if not _NAME.match(value):
            raise BlueprintError(f"cannot tell the plugin's {what} (package_{what} in its YAML): {value!r}",
                                 code="invalid-plugin")
    return name, version


def _package_metadata(package: Path) -> tuple[str | None, str | None]:
    if package.is_dir():
        return None, None
    if package.stat().st_size > MAX_PACKAGE_SIZE:
        raise BlueprintError(f"{package.name} is larger than {MAX_PACKAGE_SIZE} bytes", code="too-large")
    if package.suffix == ".whl":
        parts = package.name.split("-")
        if len(parts) < 5 or not zipfile.is_zipfile(package):
            raise BlueprintError(f"{package.name} is not a wheel", code="invalid-plugin")
        return parts[0].replace("_", "-"), parts[1]
    if package.suffix == ".wgn" or package.name.endswith((".tar.gz", ".tgz")):
        return _wagon_metadata(package)
    raise BlueprintError(f"{package.name}: a plugin is a wagon (.wgn), a wheel (.whl) or a source folder",
                         code="invalid-plugin")


def _wagon_metadata(package: Path) -> tuple[str | None, str | None]:
    """A wagon is a tar.gz of ``<name>/package.json`` and ``<name>/wheels/``."""
    try:
        with tarfile.open(package, "r:gz") as archive:
            member = next((m for m in archive if m.isfile() and m.name.count("/") == 1
                           and m.name.endswith("/package.json")), None)
            if member is None or member.size > MAX_YAML_SIZE:
                raise BlueprintError(f"{package.name} is not a wagon (no package.json)", code="invalid-plugin")
            data: Any = json.load(io.BytesIO(archive.extractfile(member).read()))  # type: ignore[union-attr]
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise BlueprintError(f"{package.name} is not a wagon: {exc}", code="invalid-plugin") from None
    if not isinstance(data, dict):
        raise BlueprintError(f"{package.name}: package.json is not a mapping", code="invalid-plugin")
    return data.get("package_name"), data.get("package_version")


def _package_kind(folder: Path) -> str:
    package = folder / "package"
    files = list(package.iterdir()) if package.is_dir() else []
    if len(files) == 1 and files[0].suffix in (".whl", ".wgn"):
        return files[0].name
    return "source"


def _matches(version: str, wanted: str | None) -> bool:
    wanted = (wanted or "").replace(" ", "")
    if not wanted or wanted == version:
        return True
    if wanted[0] not in "<>=!~":
        return False
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # a version range: rare, ~4 ms to import
    from packaging.version import InvalidVersion

    try:
        return SpecifierSet(wanted).contains(version, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def version_key(version: str) -> tuple:
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"[.+-]", version))
