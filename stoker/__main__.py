"""``python -m stoker ...``: the ``stoker`` command without needing it on PATH."""

from stoker.cli import run

run()
