"""``Engine.blueprints``: upload and read blueprints; deployments and secrets hang off it."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from stoker.blueprint import archives, icons, visibility
from stoker.blueprint.deployments import Deployments, label_pairs
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.import_resolver import PLUGIN_STORE, PLUGIN_VERSIONS, PLUGIN_VIEWER, UPLOADED_BLUEPRINTS
from stoker.blueprint.parser import parse_file
from stoker.blueprint.secrets import Secrets
from stoker.errors import Conflict, NotFound
from stoker.store.blueprint_records import BLUEPRINTS, BlueprintRecords
from stoker.store.plugin_packages import Viewer


class BlueprintService:
    """Blueprints of one project, with ``deployments`` and ``secrets`` beside them."""

    def __init__(self, store: Any, project_id: str):
        self.store = store
        self.records = BlueprintRecords(store)
        self.project_id = project_id
        self.deployments = Deployments(self.records, project_id)
        self.secrets = Secrets(self.records, project_id)

    def filters(self, kind: str = "deployments"):
        """Saved filters (named filter rules) of deployments or blueprints."""
        from stoker.blueprint.saved_filters import SavedFilters

        return SavedFilters(self.store, self.project_id, kind)

    @property
    def sites(self):
        """Sites, and the site each deployment is set at."""
        from stoker.blueprint.sites import Sites

        return Sites(self.store, self.project_id)

    @property
    def schedules(self):
        """Execution schedules of the deployments (``stoker api`` runs them when due)."""
        from stoker.workflows.schedules import Schedules

        return Schedules(self.store, self.project_id)

    @staticmethod
    def validate(path: str | Path) -> dict:
        """The plan, or ``ValidationFailed`` with every problem and its place."""
        return parse_file(path)

    def upload(self, path: str | Path, blueprint_id: str, shown_to: str = "tenant", created_by: str = "admin") -> dict:
        """Store blueprint ``path`` with a copy of its folder's files (scripts run from the copy); ``shown_to``:
        its visibility."""
        path = Path(path).resolve()
        with self.importing():
            plan = parse_file(path)
        return self._add(blueprint_id, plan, path.name, archives.pack(path.parent), shown_to, created_by)

    def parsed_again(self, blueprint_id: str, versions: dict[str, str]) -> dict:
        """The uploaded blueprint's plan parsed again from its files, its ``plugin:`` imports reading the plugin
        versions ``versions`` names (a plugins update: types only the newer plugin YAML declares come in)."""
        row = self.records.get_blueprint(self.project_id, blueprint_id)
        token = PLUGIN_VERSIONS.set(versions)
        try:
            with self.importing():
                return parse_file(self.folder(row) / row["main_file_name"])
        finally:
            PLUGIN_VERSIONS.reset(token)

    @contextmanager
    def importing(self) -> Iterator[None]:
        """While parsing: ``blueprint:ID`` imports read this project's uploaded blueprints, ``plugin:NAME``
        the database's plugins this project sees (its own and the global ones)."""
        token, plugins = UPLOADED_BLUEPRINTS.set(self.main_file), PLUGIN_STORE.set(self.store)
        given = PLUGIN_VIEWER.get()  # an API route's: the project's user, who may not see every private plugin
        viewer = PLUGIN_VIEWER.set(given if given is not None and given.project_id == self.project_id
                                   else Viewer(self.project_id))
        try:
            yield
        finally:
            UPLOADED_BLUEPRINTS.reset(token)
            PLUGIN_STORE.reset(plugins)
            PLUGIN_VIEWER.reset(viewer)

    def main_file(self, blueprint_id: str) -> Path | None:
        """The uploaded blueprint's main file, its files on disk (None when there is no such blueprint)."""
        try:
            row = self.records.get_blueprint(self.project_id, blueprint_id)
        except NotFound:
            return None
        return self.folder(row) / row["main_file_name"]

    def folder(self, row: dict) -> Path:
        """Where a stored blueprint's files are: its kept archive, else (stored before files were kept) its folder."""
        if row.get("archive_sha256"):
            return archives.materialise(row["archive_sha256"], lambda: self.records.blueprint_archive(row["pk"]))
        return Path(row.get("source_dir") or ".")

    def upload_archive(self, data: bytes, blueprint_id: str, application_file_name: str = "blueprint.yaml",
                       shown_to: str = "tenant", created_by: str = "admin") -> dict:
        """Store a blueprint sent as an archive (tar or zip) whose folder holds ``application_file_name``."""
        self._check_id(blueprint_id)
        return self._from_archive(data, application_file_name,
                                  lambda plan, main, root: self._add(
            blueprint_id, plan, main.relative_to(root).as_posix(), archives.pack(root), shown_to, created_by))

    def validate_archive(self, data: bytes, application_file_name: str = "blueprint.yaml") -> dict:
        """The plan of an archive's blueprint, nothing stored (``ValidationFailed`` with every problem)."""
        return self._from_archive(data, application_file_name, lambda plan, main, root: plan)

    def _from_archive(self, data: bytes, application_file_name: str, then: Any) -> Any:
        with tempfile.TemporaryDirectory(prefix="stoker-blueprint-") as scratch:
            archives.unpack(data, Path(scratch))
            root = archives.root_of(Path(scratch))
            main = root / archives.safe_name(application_file_name)
            if not main.is_file():
                raise BlueprintError(f"the archive has no file {application_file_name!r} (application_file_name)",
                                     code="invalid-archive")
            with self.importing():
                plan = parse_file(main)
            return then(plan, main, root)

    @staticmethod
    def _check_id(blueprint_id: Any) -> None:
        if not blueprint_id or not isinstance(blueprint_id, str):
            raise BlueprintError("a blueprint needs an id", code="invalid-id")

    def _add(self, blueprint_id: str, plan: dict, main_file_name: str, archive: bytes, shown_to: str,
             created_by: str) -> dict:
        self._check_id(blueprint_id)
        self.records.add_blueprint(self.project_id, blueprint_id, description=plan.get("description"),
                                   main_file_name=main_file_name, plan=plan, archive=archive,
                                   archive_sha256=archives.digest(archive),
                                   visibility=visibility.checked(shown_to), created_by=created_by)
        return self.get(blueprint_id)

    def archive(self, blueprint_id: str) -> bytes:
        """The blueprint's files as a tar.gz (packed from its folder for one stored without them)."""
        row = self.records.get_blueprint(self.project_id, blueprint_id)
        return self.records.blueprint_archive(row["pk"]) or archives.pack(Path(row["source_dir"]))

    def set_icon(self, blueprint_id: str, icon: bytes | None) -> None:
        """The blueprint's icon becomes ``icon`` (a PNG image); None removes it."""
        self.records.set_blueprint_icon(self._own(blueprint_id)["pk"], None if icon is None else icons.checked(icon))

    def icon(self, blueprint_id: str) -> bytes:
        found = self.records.blueprint_icon(self.records.get_blueprint(self.project_id, blueprint_id)["pk"])
        if found is None:
            raise NotFound(f"Blueprint {blueprint_id} has no icon")
        return found

    @staticmethod
    def _view(row: dict) -> dict:
        plan = row["plan"]
        return {"id": row["id"], "description": row["description"], "main_file_name": row["main_file_name"],
                "created_at": row["created_at"].isoformat(), "visibility": row["visibility"],
                "created_by": row["created_by"], "project_id": row["project_id"],
                "labels": [{"key": k, "value": v} for k, label in plan.get("blueprint_labels", {}).items()
                           for v in label["values"]],
                "inputs": plan["inputs"], "nodes": len(plan["nodes"])}

    def get(self, blueprint_id: str) -> dict:
        return self._view(self.records.get_blueprint(self.project_id, blueprint_id))

    def set_labels(self, blueprint_id: str, labels: Iterable[tuple[str, str]]) -> dict:
        """The blueprint's labels become ``labels`` (``cfy blueprints labels add|delete`` send the whole list);
        they live in its plan, where its ``blueprint_labels`` were read into at upload."""
        row = self._own(blueprint_id)
        values: dict[str, list[str]] = {}
        for key, value in label_pairs(labels):
            values.setdefault(key, []).append(value)
        plan = {**row["plan"], "blueprint_labels": {key: {"values": found} for key, found in values.items()}}
        self.records.set_blueprint_plan(row["pk"], plan)
        return self.get(blueprint_id)

    def _own(self, blueprint_id: str) -> dict:
        return visibility.owned(self.records.get_blueprint(self.project_id, blueprint_id), self.project_id,
                                blueprint_id)

    def set_visibility(self, blueprint_id: str, shown_to: Any) -> dict:
        """Widen the blueprint's visibility (``cfy blueprints set-visibility``): tenant or global, never narrower;
        global while no other tenant holds a blueprint of its id (who may is the caller's to decide)."""
        row = self._own(blueprint_id)
        wanted = visibility.widened(blueprint_id, row["visibility"], visibility.checked(shown_to, visibility.WIDER))
        self.records.set_visibility(BLUEPRINTS, row, wanted)
        return self.get(blueprint_id)

    def set_owner(self, blueprint_id: str, creator: str) -> dict:
        """``cfy blueprints set-owner`` (who may, and whether the user exists, is the caller's to decide)."""
        self.records.set_owner(BLUEPRINTS, self._own(blueprint_id), creator)
        return self.get(blueprint_id)

    def plan(self, blueprint_id: str) -> dict:
        return self.records.get_blueprint(self.project_id, blueprint_id)["plan"]

    def list(self) -> list[dict]:
        """The project's blueprints and the global ones of other projects."""
        return [self._view(row) for row in self.records.list_blueprints(self.project_id, seen=True)]

    def delete(self, blueprint_id: str) -> None:
        """Delete the blueprint; refused while deployments use it or another blueprint imports it (as Cloudify)."""
        importers = [row["id"] for row in self.records.list_blueprints(self.project_id)
                     if blueprint_id in (row["plan"].get("imported_blueprints") or [])]
        if importers:
            raise Conflict(f"Blueprint {blueprint_id} is currently in use: blueprint {', '.join(importers)} imports "
                           f"it (blueprint:{blueprint_id}); delete that one first")
        self.records.delete_blueprint(self._own(blueprint_id))
