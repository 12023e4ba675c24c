"""Where the tests' plugin virtualenvs take their wheels from: a folder kept between runs, so that
cloudify-common is built once per machine (``conftest.plugin_wheels`` fills it; servers a test module
starts are pointed at it)."""
from __future__ import annotations

import tempfile
from pathlib import Path

PLUGIN_WHEELS = Path(tempfile.gettempdir()) / "stoker-test-plugin-wheels"
