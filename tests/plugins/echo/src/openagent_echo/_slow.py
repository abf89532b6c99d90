"""What the echo plugin registers lazily: imported only when ``lazyecho:`` or the ``Shout`` tool is used."""

from __future__ import annotations

from openagent import tool

from . import EchoProvider

__all__ = ["SlowEchoProvider", "shout"]


class SlowEchoProvider(EchoProvider):
    """`EchoProvider` behind a lazy registration, with a bound prefix."""

    def __init__(self, model: str, *, prefix: str = "", **kwargs: str | None) -> None:
        super().__init__(f"{prefix}{model}", **kwargs)


@tool("Shout")
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()
