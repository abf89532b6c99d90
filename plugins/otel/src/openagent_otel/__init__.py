"""OpenTelemetry tracing for openagent, following the GenAI semantic conventions.

Installed, the plugin traces every run through the global tracer provider: one ``invoke_agent`` span per
run, a ``chat {model}`` span per model call and an ``execute_tool {name}`` span per tool call, a subagent's
spans nested under its ``Task`` call. Message content is recorded only with
``OPENAGENT_OTEL_CAPTURE_CONTENT=1``. Without the plugin loaded (or to pick a provider), merge
`tracing_hooks` into ``AgentOptions.hooks``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from openagent.plugin import hookimpl

from ._tracing import CAPTURE_CONTENT_ENV, Tracing, tracing_hooks

__all__ = ["CAPTURE_CONTENT_ENV", "Tracing", "__version__", "register_hooks", "tracing_hooks"]

try:
    __version__ = version("openagent-otel")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0"


@hookimpl
def register_hooks(register: Callable[[str, Any], None]) -> None:
    """Trace every run through the global tracer provider."""
    for event, matchers in Tracing().hooks().items():
        for matcher in matchers:
            register(event, matcher)
