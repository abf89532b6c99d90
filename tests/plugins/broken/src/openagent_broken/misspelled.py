"""A plugin with a misspelled hook name."""

from openagent import hookimpl


@hookimpl
def register_provider(register):
    """Singular: matches no specification."""
    register("never", object)
