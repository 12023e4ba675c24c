"""A REST API compatible with OpenStack Heat's Orchestration API v1 (``stoker api``).

The API is a thin shell over ``stoker.engine.engine.Engine``: ``app`` builds
the FastAPI application, ``routes/`` hold one module per family of Heat's
routes, ``errors`` turns Stoker's errors into Heat's error bodies, ``auth``
checks the tokens Stoker issues, ``runner`` runs stack actions in the
background so that requests return at once, as Heat's do.
"""
