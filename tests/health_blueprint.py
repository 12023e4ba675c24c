"""The instance-health blueprint (``tests/templates/blueprints/health``) deployed on a local engine, with
its folder of marks and trace."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

BLUEPRINT = Path(__file__).resolve().parent / "templates" / "blueprints" / "health" / "blueprint.yaml"


class Marks:
    """The folder the blueprint's scripts read (``down``, ``drift``, ``noheal`` files) and trace into."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trace").write_text("")

    def set(self, node: str, what: str, text: str = "") -> None:
        (self.folder / f"{node}-{what}").write_text(text)

    def trace(self) -> list[str]:
        """The operations run since the last look (then forgotten)."""
        path = self.folder / "trace"
        lines = path.read_text().split("\n")
        path.write_text("")
        return [line for line in lines if line]


def installed(engine, folder: Path, name: str = "dep", start: Callable[..., dict] | None = None) -> Marks:
    """Deployment ``name`` of the blueprint, installed (``start(workflow, deployment)``: the execution as it
    ended, the engine's by default); its marks (trace emptied)."""
    marks = Marks(folder)
    engine.blueprints.upload(BLUEPRINT, f"{name}-bp")
    engine.blueprints.deployments.create(name, f"{name}-bp", {"folder": str(folder)})
    assert (start or engine.executions.start)("install", name)["status"] == "terminated"
    marks.trace()
    return marks


def instance(engine, deployment: str, node: str) -> dict:
    [found] = [i for i in engine.blueprints.deployments.node_instances(deployment) if i["node_id"] == node]
    return found
