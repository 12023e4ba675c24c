"""``cloudify.state``: the running operation's context and its parameters (its inputs).

``ctx_parameters`` holds the operation's inputs, as Cloudify's script plug-in
gives them to a Python script (``from cloudify.state import ctx_parameters as inputs``).
"""

import os

from cloudify import _client, ctx

ctx_parameters = dict(_client.request(["operation", "inputs"]) or {}) \
    if os.environ.get(_client.SOCKET_VARIABLE) else {}
current_ctx = ctx
