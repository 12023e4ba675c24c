"""A resource's ``data`` written as edits of its keys, applied to the row as stored.

A worker (or the in-process writer) writes what its resource changed, not
the whole map it loaded: a signal or a hook clear written meanwhile by an
API process, to other keys of the same row, stays.  The store applies the
edits to the row read under its lock (``FOR UPDATE``; SQLite's writers
begin IMMEDIATE), so two writers of one row keep both their keys.
"""

from __future__ import annotations

from typing import Any

from stoker.secretbox import MARK, seal, unseal

#: an edit's value for a key it removes
DELETED = object()


class DataEdits(dict):
    """Key -> new value (``DELETED``: removed), in the order made; ``sealing``: the row's data
    is stored sealed (its stack holds hidden values)."""

    sealing = False

    def sealed(self) -> "DataEdits":
        """The same edits, their result stored sealed."""
        edits = DataEdits(self)
        edits.sealing = True
        return edits

    def then(self, later: Any) -> Any:
        """These edits followed by ``later`` (edits, or a whole map that replaces the data)."""
        if not isinstance(later, DataEdits):
            return later
        edits = DataEdits({**self, **later})
        edits.sealing = self.sealing or later.sealing
        return edits

    def applied(self, stored: Any) -> Any:
        """The data ``stored`` (as the row holds it, sealed or not) with these edits made."""
        data = dict((unseal(stored) if isinstance(stored, dict) and MARK in stored else stored) or {})
        for key, value in self.items():
            if value is DELETED:
                data.pop(key, None)
            else:
                data[key] = value
        return seal(data) if self.sealing else data


def merge_into(fields: dict, later: dict) -> None:
    """``later`` changes of a resource's row over ``fields`` (queued, not written yet): data
    edits add up instead of the later replacing the earlier."""
    earlier = fields.get("data")
    fields.update(later)
    if isinstance(earlier, DataEdits) and "data" in later:
        fields["data"] = earlier.then(later["data"])
