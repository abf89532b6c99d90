"""``python -m openagent_cli``."""

from ._app import main

__all__: list[str] = []

main()
