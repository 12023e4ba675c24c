"""The ``update`` workflow: a deployment moved onto its new plan, as Cloudify's deployment update runs it.

What the update decided (``deployment_updates.plan_update``: the nodes, the instances added and removed,
the relationships rewired) is in the execution's memo, so a resumed update builds the same graph.  The
deployment's rows hold the new plan while it runs (``memo["update"]["before"]``, written when it starts),
with the old relationships a kept instance loses and the removed nodes still there to be unlinked and
uninstalled; once it ended well ``memo["update"]["after"]`` drops them.  In order: removed relationships
unlinked and removed instances uninstalled (unless ``skip_uninstall``), the kept instances checked for drift,
healed, updated or reinstalled as Cloudify 7 decides (``update_checks``), added instances installed and added
relationships established (unless ``skip_install``); ``install_first`` turns the order round.
"""

from __future__ import annotations

from stoker import secretbox
from stoker.engine.graph import Graph
from stoker.workflows.lifecycle import in_order, install_graph, link_steps, uninstall_graph
from stoker.workflows import update_checks
from stoker.workflows.model import Deployment, Instance
from stoker.workflows.workflow_error import WorkflowError

#: the workflow a deployment update runs as (the name Cloudify's manager gives its execution)
WORKFLOW = "update"


def update(deployment: Deployment, params: dict, memo: dict) -> Graph:
    decided = memo.get(WORKFLOW)
    if not decided:
        raise WorkflowError("the update workflow runs as a deployment update (stoker deployment update, "
                            "cfy deployments update), not on its own")
    laid_out(deployment, decided["before"])
    down = up = Graph()
    if not params.get("skip_uninstall"):
        chains = uninstall_graph(deployment, decided["removed"], phase="update-uninstall")
        link_steps(deployment, chains, decided["unlinked"], "unlink", "update-unlink")
        down = chains.graph
    again = update_checks.graph(deployment, decided, params)
    if not params.get("skip_install"):
        chains = install_graph(deployment, [row["id"] for row in decided["before"]["added"]], phase="update-install")
        link_steps(deployment, chains, decided["established"], "establish", "update-establish")
        up = chains.graph
    return in_order([up, again, down] if params.get("install_first") else [down, again, up])


def laid_out(deployment: Deployment, before: dict) -> None:
    """The model as the rows are while the update runs (as ``before`` writes them): built from the old rows
    when the execution is planned, the same again when it resumes."""
    for node_id, columns in before["nodes"].items():
        deployment.nodes[node_id] = secretbox.unseal(columns["definition"])
    deployment._implements.clear()
    for row in before["added"]:
        if row["id"] not in deployment.instances:
            deployment.instances[row["id"]] = Instance(row["id"], row["node_id"], row["index"], row["state"], {},
                                                       list(row["relationships"]), row["host_id"],
                                                       list(row["scaling_groups"]))
    for instance_id, relationships in before["relinked"].items():
        deployment.instances[instance_id].relationships = list(relationships)
