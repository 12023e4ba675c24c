"""``$STOKER_HOME``: where local state, the key and ``stoker.conf`` live.

Everything made here is private to the user running Stoker (folders 0700,
files 0600): the database holds other projects' stacks and the key opens
their secrets.
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path


def stoker_home(create: bool = False) -> Path:
    """``$STOKER_HOME``, default ``~/.local/share/stoker``; made 0700 when ``create``."""
    home = Path(os.environ.get("STOKER_HOME") or "~/.local/share/stoker").expanduser()
    if create and not home.is_dir():
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        home.chmod(0o700)  # mkdir's mode is filtered by the umask
    return home


def private_file(path: Path) -> Path:
    """Create ``path`` empty and 0600 if it does not exist (before anything is written to it)."""
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return path


def config() -> configparser.ConfigParser:
    """``$STOKER_HOME/stoker.conf`` (an INI file; missing means empty)."""
    parser = configparser.ConfigParser()
    parser.read(stoker_home() / "stoker.conf")
    return parser
