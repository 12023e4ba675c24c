"""A wait condition handle of a stack in a server is signalled with its own ``curl_cli``:
Heat's token handle, the handle's token admitting that one signal and nothing else."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
import uuid

import httpx

from .helpers import heat, template, wait_for


def _handle_attributes(client, name: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        handle = client.resources.get(name, "handle")
        if handle.resource_status == "CREATE_COMPLETE" and handle.attributes.get("curl_cli"):
            return handle.attributes
        assert time.monotonic() < deadline, f"the handle is {handle.resource_status}"
        time.sleep(0.1)


def test_the_handles_curl_cli_signals_it_with_the_handles_token(token_server):
    client = heat(token_server, "beta", token_server.tokens["beta"])
    files, data = template("wait.yaml")
    name = f"ws-{uuid.uuid4().hex[:6]}"
    client.stacks.create(stack_name=name, template=data, files=files)
    attributes = _handle_attributes(client, name)
    command = attributes["curl_cli"]
    token = attributes["token"]
    assert token and token not in token_server.tokens.values()  # not the project's token
    assert attributes["endpoint"].startswith(f"{token_server.url}/v1/beta/stacks/{name}/")

    # the token opens nothing else
    assert httpx.get(f"{token_server.url}/v1/beta/stacks", headers={"X-Auth-Token": token}).status_code == 401
    wrong = httpx.post(attributes["endpoint"], headers={"X-Auth-Token": "stk_wrong"}, json={})
    assert wrong.status_code == 401

    argv = shlex.split(command) + ["-s", "-f", "--data-binary", json.dumps({"status": "SUCCESS", "data": "up"})]
    assert argv[0] == "curl"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)

    stack = wait_for(client, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert json.loads(outputs["data"]) == {"1": "up"}
