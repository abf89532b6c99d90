"""A plugin whose registration raises."""

from openagent import hookimpl


@hookimpl
def register_providers(register):
    """Fails halfway."""
    register("half", object)
    raise RuntimeError("cannot reach the license server")
