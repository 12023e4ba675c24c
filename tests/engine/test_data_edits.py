"""A resource's data written as edits of its keys (in-process, SQLite and PostgreSQL): a signal
stored by another process while the create runs keeps its key through the create's own write."""

from __future__ import annotations

import threading
import time
from pathlib import Path

PLUGINS = Path(__file__).parents[1] / "dispatch" / "plugins"


def wait_for(path: Path, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_signal_stored_during_a_create_keeps_its_key_through_the_creates_write(make_engine, tmp_path):
    creator, api = make_engine(plugin_dirs=[str(PLUGINS)]), make_engine(plugin_dirs=[str(PLUGINS)])
    ready, go = tmp_path / "ready", tmp_path / "go"
    template = {"heat_template_version": "2018-08-31", "resources": {
        "sig": {"type": "Test::Signalled", "properties": {"ready": str(ready), "go": str(go)}}}}
    creating = threading.Thread(target=creator.create_stack, args=("signalled", template))
    creating.start()
    try:
        wait_for(ready)
        api.signal("signalled", "sig", {"id": "one", "status": "SUCCESS"})  # another process's write
    finally:
        go.touch()
        creating.join(120)

    record = api.get_record("signalled")
    assert (record.action, record.status) == ("CREATE", "COMPLETE"), record.status_reason
    row, = api.store.get_resources(record.id)
    assert row.data == {"signal-one": {"id": "one", "status": "SUCCESS"}, "made": "yes"}
