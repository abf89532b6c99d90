"""openagent-anthropic: the Anthropic messages wire format, as the provider ``anthropic``.

``AgentOptions(model="anthropic:claude-sonnet-4-5")`` after ``pip install "openagent[anthropic]"``; any
Anthropic-compatible server (llama.cpp's ``/v1/messages`` …) with ``base_url``. What a turn costs comes from
core's price data (`openagent.register_price` overrides it).
"""

from __future__ import annotations

from typing import Any

from openagent.hookspecs import hookimpl

from ._messages import PROFILE, MessagesProvider

__all__ = ["PROFILE", "MessagesProvider"]


@hookimpl
def register_providers(register: Any) -> None:
    """Register the ``anthropic`` provider."""
    register("anthropic", MessagesProvider)
