"""Engine methods written in other modules and imported on first use.

``Engine.list_stacks = BoundLater("reads")`` binds ``stoker.engine.reads.list_stacks`` the first
time it is read: a blueprint or workflow command never imports the stack machinery (walking,
updates, type checks: ~20 ms of its start).  The first use puts the plain function on the class
for good, so later calls cost what a plain method costs.
"""

from __future__ import annotations

import importlib
from typing import Any


class BoundLater:
    def __init__(self, module: str, static: bool = False):
        self.module = f"stoker.engine.{module}"
        self.static = static

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner, self.name = owner, name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        function = getattr(importlib.import_module(self.module), self.name)
        setattr(self.owner, self.name, staticmethod(function) if self.static else function)
        return getattr(instance if instance is not None else self.owner, self.name)
