"""Work folders operations keep between runs: a deployment's, and a plugin's per deployment.

Cloudify gives an operation ``ctx.local_deployment_workdir()``:
``<resources root>/deployments/<tenant>/<deployment>``, the root named by the
``CFY_RESOURCES_ROOT`` environment variable (here ``$STOKER_HOME/resources``),
and ``ctx.plugin.workdir``.  Both go when the deployment is deleted.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from stoker.home import stoker_home

#: the variable cloudify-common reads the local resources root from
RESOURCES_ROOT_VARIABLE = "CFY_RESOURCES_ROOT"


def resources_root() -> Path:
    return stoker_home(create=True) / "resources"


def deployment_workdir(tenant: str, deployment_id: str, create: bool = True) -> Path:
    """The deployment's own work folder (made on first use)."""
    folder = resources_root() / "deployments" / safe_name(tenant) / safe_name(deployment_id)
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def deployment_plugins_workdir(deployment_id: str) -> Path:
    """Where the deployment's plugins keep their folders (cloudify-common adds ``plugins/<name>``)."""
    return stoker_home(create=True) / "plugin-workdirs" / safe_name(deployment_id)


def plugin_workdir(deployment_id: str, plugin: str) -> Path:
    """``ctx.plugin.workdir``: the plugin's folder for this deployment (made on first use)."""
    folder = deployment_plugins_workdir(deployment_id) / "plugins" / safe_name(plugin)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def remove(tenant: str, deployment_id: str) -> None:
    """The deployment is gone: so are its work folders."""
    for folder in (deployment_workdir(tenant, deployment_id, create=False),
                   deployment_plugins_workdir(deployment_id)):
        shutil.rmtree(folder, ignore_errors=True)


def safe_name(name: str) -> str:
    """A name as one path component (ids may hold anything)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "_"
