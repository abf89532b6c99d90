"""A provider plugin exactly as a third party would write one: it answers with the last user message."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from openagent import hookimpl
from openagent.hookspecs import lazy
from openagent.models import ModelEvent, ModelRequest, Stop, TextDelta

__all__ = ["EchoProvider"]


class EchoProvider:
    """Answers with the last user message, prefixed with the model name."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None) -> None:
        self.model = model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Echo."""
        yield TextDelta(f"{self.model}: {request.last_user_text()}")
        yield Stop(reason="end_turn")


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
    """Register ``echo`` (and the alias ``parrot``)."""
    register("echo", EchoProvider, aliases=("parrot",))
    register("lazyecho", lazy("openagent_echo._slow:SlowEchoProvider", prefix="lazy-"))


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Register ``Shout`` without importing its module."""
    register(lazy("openagent_echo._slow:shout"), name="Shout")
