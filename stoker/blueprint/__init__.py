"""The blueprint DSL (Cloudify-style ``cloudify_dsl_1_x``): parse, plan, deploy.

``parser.parse_blueprint`` turns blueprint text into a plan (plain dicts, the
shape Cloudify's own parser produces), ``deployment.prepare`` applies inputs,
evaluates what is static and lays out the node instances, and
``service.Blueprints`` / ``service.Deployments`` keep them in the store.
"""
