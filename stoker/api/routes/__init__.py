"""One module per family of Heat's v1 routes (and of the cloud-in-a-box service routes under
``/cloud/{tenant_id}/``: compute's key pairs, network's listings); ``all_routers`` in registration order."""

from __future__ import annotations


def all_routers() -> list:
    from stoker.api.routes import compute, events, info, network, resources, software, stacks, templates

    # stacks first: its literal paths (/stacks/preview, /stacks/{name}/resources ...)
    # must win over the /stacks/{stack_name}/{stack_id} pattern
    return [info.router, templates.router, stacks.router, resources.router, events.router,
            software.router, compute.router, network.router]
