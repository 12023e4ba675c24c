"""Stoker: an orchestration engine for Heat templates and Cloudify-style blueprints.

``from stoker import ctx`` gives a blueprint's Python scripts the ``ctx`` of
the operation running them (imported only when asked for).
"""


def __getattr__(name: str):
    if name == "ctx":
        from stoker.workflows.ctx_client import ctx

        return ctx
    raise AttributeError(f"module 'stoker' has no attribute {name!r}")
