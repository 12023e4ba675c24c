"""server.start: serve the config folder over HTTP from a background process, and wait until it answers."""
import os
import socket
import subprocess
import sys

from cloudify.state import ctx_parameters as inputs
from stoker import ctx

props = ctx.instance.runtime_properties
port = int(inputs["port"])
if "pid" not in props:  # the first attempt starts it; retries only wait for it
    with open(os.path.join(inputs["folder"], "server.log"), "ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
             "--directory", inputs["folder"]],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    props["pid"] = server.pid
    props["port"] = port
    ctx.logger.info(f"started the server (pid {server.pid}) on port {port}")
try:
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
except OSError:
    ctx.operation.retry(f"port {port} does not answer yet", 0.5)
