"""Cloudify's REST API v3.1 routes, one module per family; ``routers`` in registration order (``user_groups``
before ``tenants``: its ``/tenants/user-groups`` comes before ``/tenants/{name}``)."""

from __future__ import annotations


def routers() -> list:
    from stoker.api.cloudify.routes import (audit, blueprints, components, deployment_updates, deployments,
                                            executions, groups, manager, modifications, nodes, operations,
                                            permissions, plugins, plugins_updates, schedules, searches, secrets,
                                            secrets_providers, sites, snapshots, standard_types, summary, tenants,
                                            tokens, user_groups)

    return [manager.unversioned, manager.routes, audit.routes, components.routes, permissions.routes,
            blueprints.routes, blueprints.resources, deployments.routes, deployment_updates.routes,
            modifications.routes, executions.routes, operations.routes, nodes.routes, groups.routes, plugins.routes,
            plugins_updates.routes, schedules.routes, searches.routes, secrets.routes, secrets_providers.routes,
            sites.routes, snapshots.routes, standard_types.routes, summary.routes, user_groups.routes, tenants.routes,
            tokens.routes, manager.unknown]
