"""An uploaded blueprint keeps its files: an edit of the folder after upload changes nothing that runs,
a deleted folder breaks nothing, and a folder holding a link is refused at upload."""

from __future__ import annotations

import os
import time

import pytest

from stoker.blueprint.archives import digest, materialise, pack, unpack
from stoker.blueprint.blueprint_errors import BlueprintError

from .conftest import deploy, runtime

BLUEPRINT = """
node_templates:
  app:
    type: cloudify.nodes.Root
    interfaces:
      cloudify.interfaces.lifecycle:
        create: scripts/create.sh
"""
SCRIPT = "ctx instance runtime-properties version {0}\n"


def test_scripts_run_from_the_copy_kept_at_upload(engine, tmp_path):
    folder = tmp_path / "bp"
    deploy(engine, folder, BLUEPRINT, {"scripts/create.sh": SCRIPT.format("uploaded")})
    (folder / "scripts" / "create.sh").write_text(SCRIPT.format("edited-after-upload"))
    engine.executions.start("install", "dep")
    assert runtime(engine, "dep", "app")["version"] == "uploaded"


def test_the_folder_may_go_after_upload(engine, tmp_path):
    folder = tmp_path / "bp"
    deploy(engine, folder, BLUEPRINT, {"scripts/create.sh": SCRIPT.format("kept")})
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    assert engine.executions.start("install", "dep")["status"] == "terminated"
    assert runtime(engine, "dep", "app")["version"] == "kept"


def test_a_folder_with_a_link_is_refused(engine, tmp_path):
    folder = tmp_path / "bp"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "create.sh").write_text(SCRIPT.format("linked"))
    os.symlink("/etc", folder / "extra")
    with pytest.raises(BlueprintError, match="symbolic link"):
        deploy(engine, folder, BLUEPRINT)


def test_pack_and_unpack_round_trip(tmp_path):
    source = tmp_path / "src"
    (source / "a" / "b").mkdir(parents=True)
    (source / "a" / "b" / "f.txt").write_text("deep")
    (source / "top.yaml").write_text("x: 1")
    target = tmp_path / "out"
    target.mkdir()
    unpack(pack(source), target)
    assert (target / "a" / "b" / "f.txt").read_text() == "deep" and (target / "top.yaml").read_text() == "x: 1"


def test_too_many_files_are_refused_early(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_MAX_BLUEPRINT_FILES", "10")
    source = tmp_path / "src"
    source.mkdir()
    for n in range(11):
        (source / f"f{n}").write_text("x")
    started = time.monotonic()
    with pytest.raises(BlueprintError, match="max_blueprint_files"):
        pack(source)
    assert time.monotonic() - started < 5


def test_materialise_reads_the_archive_once_per_content(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    source = tmp_path / "src"
    source.mkdir()
    (source / "run.sh").write_text("echo hi\n")
    data = pack(source)
    loads = []
    first = materialise(digest(data), lambda: loads.append(1) or data)
    again = materialise(digest(data), lambda: loads.append(1) or data)
    assert first == again and (first / "run.sh").read_text() == "echo hi\n" and loads == [1]
    with pytest.raises(BlueprintError, match="does not match"):
        materialise("0" * 64, lambda: data)
