"""Blueprint workflows: operations as graphs on the engine's walker, script operations, ``ctx``."""
