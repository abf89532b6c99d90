"""A plugin whose command registration raises: the CLI must report it and keep working."""

from openagent import hookimpl


@hookimpl
def register_commands(cli):
    raise RuntimeError("cannot add my command")
