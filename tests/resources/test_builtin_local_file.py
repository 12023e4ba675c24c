"""Stoker::Local::File: real files, written atomically, removed on delete."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from stoker.errors import ValidationFailed
from stoker.resources.builtin.local_file import LocalFile, temporary_path

from .fakes import create, make, run, update


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def created(props):
    res = make(LocalFile, props)
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE")
    return res


def test_writes_content_with_mode_creating_parents(tmp_path):
    target = tmp_path / "a" / "b" / "conf.ini"
    res = created({"path": str(target), "content": "x = 1\n", "mode": "0600"})
    assert target.read_text() == "x = 1\n"
    assert mode_of(target) == 0o600
    assert res.resource_id == str(target)
    assert not os.path.exists(temporary_path(str(target)))


def test_defaults_are_empty_and_0644(tmp_path):
    target = tmp_path / "empty"
    created({"path": str(target)})
    assert target.read_bytes() == b""
    assert mode_of(target) == 0o644


def test_relative_path_is_made_absolute_at_create(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = created({"path": "sub/file.txt", "content": "hi"})
    assert res.resource_id == str(tmp_path / "sub" / "file.txt")
    assert res.FnGetAtt("path") == res.resource_id
    monkeypatch.chdir("/")
    run(res.delete())
    assert not (tmp_path / "sub" / "file.txt").exists()


def test_attributes(tmp_path):
    content = "héllo\n"
    res = created({"path": str(tmp_path / "f"), "content": content})
    data = content.encode()
    assert res.FnGetAtt("size") == len(data)
    assert res.FnGetAtt("sha256") == hashlib.sha256(data).hexdigest()
    assert res.FnGetAtt("show") == {"path": str(tmp_path / "f"), "size": len(data),
                                    "sha256": hashlib.sha256(data).hexdigest()}


def test_update_rewrites_content_and_mode_in_place(tmp_path):
    target = tmp_path / "f"
    res = created({"path": str(target), "content": "one"})
    inode = os.stat(target).st_ino
    assert run(update(res, {"path": str(target), "content": "two", "mode": "0640"})) == "updated"
    assert target.read_text() == "two" and mode_of(target) == 0o640
    assert os.stat(target).st_ino != inode  # a new file renamed over the old one
    assert run(update(res, {"path": str(target), "content": "one", "mode": "0640"})) == "updated"
    assert target.read_text() == "one"


def test_path_change_replaces(tmp_path):
    res = created({"path": str(tmp_path / "old")})
    assert run(update(res, {"path": str(tmp_path / "new")})) == "replace"


def test_same_file_spelled_differently_is_not_replaced(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = created({"path": "f", "content": "a"})
    assert run(update(res, {"path": "./f", "content": "b"})) == "updated"
    assert (tmp_path / "f").read_text() == "b"


def test_delete_removes_the_file(tmp_path):
    target = tmp_path / "f"
    res = created({"path": str(target)})
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")
    assert not target.exists()


def test_delete_removes_the_directories_it_made_when_empty(tmp_path):
    (tmp_path / "there").mkdir()
    made = created({"path": str(tmp_path / "there" / "new" / "deeper" / "f")})
    run(made.delete())
    assert not (tmp_path / "there" / "new").exists()
    assert (tmp_path / "there").is_dir()  # it was there before


def test_delete_keeps_a_directory_it_made_that_is_not_empty(tmp_path):
    res = created({"path": str(tmp_path / "new" / "deeper" / "f")})
    (tmp_path / "new" / "other").write_text("not Stoker's")
    run(res.delete())
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["other"]


def test_retain_keeps_the_directories_too(tmp_path):
    res = created({"path": str(tmp_path / "new" / "f"), "retain": True})
    run(res.delete())
    assert (tmp_path / "new" / "f").exists()


def test_delete_of_a_missing_file_is_fine(tmp_path):
    target = tmp_path / "f"
    res = created({"path": str(target)})
    target.unlink()
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")


def test_retain_keeps_the_file(tmp_path):
    target = tmp_path / "f"
    res = created({"path": str(target), "content": "keep", "retain": True})
    run(res.delete())
    assert target.read_text() == "keep"


def test_delete_after_an_interrupted_create_removes_everything(tmp_path):
    """The process died mid-create: no resource id, maybe a file, maybe a temporary one."""
    target = tmp_path / "f"
    target.write_text("half")
    with open(temporary_path(str(target)), "w") as f:
        f.write("half")
    res = make(LocalFile, {"path": str(target)})
    res.action, res.status = "CREATE", "IN_PROGRESS"
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")
    assert list(tmp_path.iterdir()) == []


def test_check_fails_when_the_file_is_gone(tmp_path):
    target = tmp_path / "f"
    res = created({"path": str(target)})
    run(res.check())
    assert res.state == ("CHECK", "COMPLETE")
    target.unlink()
    with pytest.raises(Exception, match="does not exist"):
        run(res.check())
    assert res.state == ("CHECK", "FAILED")


@pytest.mark.parametrize("mode", ["644", "0755", "1777"])
def test_valid_modes(tmp_path, mode):
    make(LocalFile, {"path": str(tmp_path / "f"), "mode": mode}).validate_template()


@pytest.mark.parametrize("mode", ["0x1ff", "0888", "rw-r--r--", "", "12345"])
def test_invalid_modes(tmp_path, mode):
    with pytest.raises(ValidationFailed, match="octal"):
        make(LocalFile, {"path": str(tmp_path / "f"), "mode": mode}).validate_template()


def test_path_is_required():
    with pytest.raises(ValidationFailed):
        make(LocalFile, {"content": "x"}).validate_template()
