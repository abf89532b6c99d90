"""A plugin whose lazily registered provider and tool point at a module that is not there."""

from openagent import hookimpl
from openagent.hookspecs import lazy


@hookimpl
def register_providers(register):
    """Registers fine; fails when ``ghost:`` is first used."""
    register("ghost", lazy("openagent_broken.not_a_module:GhostProvider"))


@hookimpl
def register_tools(register):
    """Registers fine; fails when ``Ghost`` is first used."""
    register(lazy("openagent_broken.not_a_module:ghost"), name="Ghost")
