"""``cloudify.state``: the running operation's context and its parameters (its inputs)."""

from cloudify import ctx

ctx_parameters = {}
current_ctx = ctx
