"""Runs in a plugin's own virtualenv, by path (``plugin_envs.RUNNER``): never imported by Stoker."""
