"""A scaling policy of a stack in a server: its ``alarm_url`` signals it without a token
(signed with the policy's own secret) and nothing else; ``signal_url`` needs the project's
token; the group's metadata says when a scaling is over, as Heat's functional tests read it."""

from __future__ import annotations

import time
import uuid

import httpx

from .helpers import heat, template, wait_for


def _outputs(client, name: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in client.stacks.get(name).outputs}


def _scaled_to(client, name: str, size: int, timeout: float = 30.0) -> None:
    """Wait for the group's scaling to end, then check its size."""
    deadline = time.monotonic() + timeout
    while client.resources.metadata(name, "group").get("scaling_in_progress"):
        assert time.monotonic() < deadline, "the scaling did not end"
        time.sleep(0.05)
    assert _outputs(client, name)["size"] == size


def test_alarm_url_signals_its_policy_without_a_token(token_server):
    client = heat(token_server, "beta", token_server.tokens["beta"])
    files, data = template("scaling.yaml")
    name = f"sc-{uuid.uuid4().hex[:6]}"
    client.stacks.create(stack_name=name, template=data, files=files)
    assert wait_for(client, name).stack_status == "CREATE_COMPLETE"
    got = _outputs(client, name)
    stack_id = client.stacks.get(name).id
    assert got["up_signal"] == f"{token_server.url}/v1/beta/stacks/{name}/{stack_id}/resources/up/signal"
    assert got["up_alarm"].startswith(got["up_signal"] + "?signature=")

    assert httpx.post(got["up_alarm"]).status_code == 200
    _scaled_to(client, name, 3)
    events = [e for e in client.events.list(name, resource_name="up") if e.resource_status == "SIGNAL_COMPLETE"]
    assert [e.resource_status_reason for e in events] == ["No signal details provided"]

    # the signature opens its own policy only, and only for signals
    signature = got["up_alarm"].split("?", 1)[1]
    down = got["up_signal"].replace("/resources/up/", "/resources/down/")
    assert httpx.post(f"{down}?{signature}", json={}).status_code == 401
    assert httpx.post(got["up_signal"] + "?signature=" + "0" * 64, json={}).status_code == 401
    assert httpx.post(got["up_signal"], json={}).status_code == 401
    assert httpx.get(f"{token_server.url}/v1/beta/stacks/{name}/{stack_id}?{signature}").status_code == 401

    # with the project's token, signal_url works as Heat's
    client.resources.signal(name, "down")
    _scaled_to(client, name, 2)
    assert httpx.post(got["down_alarm"], json={}).status_code == 200
    _scaled_to(client, name, 1)
