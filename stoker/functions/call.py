"""What every intrinsic-function call is, in a HOT template or in a blueprint.

A document is read once into calls.  Each knows its ``name``, its ``args``, the
``path`` where it sits (for messages), its ``phase`` (when it can be computed)
and its ``dependencies`` (what must exist first).  Each family builds on this:
``functions.base.Function`` for HOT (``validate``/``result``, tables from the
template's version) and ``blueprint.functions.base.Function`` for blueprints
(``validate``/``evaluate``, the table handed in).
"""

from __future__ import annotations

from typing import Any, Iterator

#: static: at deployment creation only; hybrid: as soon as its arguments are known;
#: runtime: only once what it reads exists (a resource, a node instance, a secret)
STATIC, HYBRID, RUNTIME = "static", "hybrid", "runtime"


class FunctionCall:
    """One call of ``name`` found at ``path`` (steps in HOT, dotted text in blueprints)."""

    name = "function"
    phase = HYBRID
    #: the arguments, as the family's ``parse_args`` keeps them
    args: Any = None

    def __init__(self, name: str, path: Any):
        self.name = name
        self.path = path

    def dependencies(self) -> Iterator[Any]:
        """What must exist before this call can be computed (default: nothing)."""
        return iter(())

    def __repr__(self) -> str:
        return f"{{{self.name}: {self.args!r}}}"
