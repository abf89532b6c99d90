"""``python -m openagent_local run|start|status|stop``: the same commands without the CLI package."""

from ._commands import local

__all__: list[str] = []

local(prog_name="python -m openagent_local")
