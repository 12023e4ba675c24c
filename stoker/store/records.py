"""The base of the store's record classes: the stack store's connections, and rows as plain dicts."""

from __future__ import annotations

from typing import Any


class Records:
    """Reads and writes through the one store's connections (``Store._read``/``_write``)."""

    def __init__(self, store: Any):
        self._read, self._write = store._read, store._write

    @staticmethod
    def _rows(result: Any) -> list[dict]:
        keys = list(result.keys())  # once, not per row (deployments have 100,000 instance rows)
        return [dict(zip(keys, row)) for row in result]
