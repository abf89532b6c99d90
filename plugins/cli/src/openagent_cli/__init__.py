"""The ``openagent`` command line: headless runs, an interactive chat, sessions, plugins, doctor, config.

Other plugins add subcommands through the ``register_commands(cli)`` hook (``cli`` is the click group).
"""

from __future__ import annotations

from . import _chat, _config, _doctor, _plugins, _sessions  # noqa: F401 - each adds its commands to `cli`
from ._app import cli, main

__all__ = ["cli", "main"]
