"""The ``local`` provider: a managed llama.cpp engine (`_engine`) behind the chat-completions wire format.

``model="local:smollm2"`` (a model package) or ``model="local:/path/model.gguf"``. The first request starts
the engine in a worker thread; later requests, and other processes, reuse it. The wire format is the openai
plugin's; this module adds the engine's lifetime, the errors that belong to it, and tool calls held to a
grammar (`_grammar`) when a turn must call a tool.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio

from openagent.errors import ConfigError, ProviderConnectionError, ProviderError, StreamError
from openagent.models import ModelEvent, ModelRequest
from openagent.types import Usage

from ._grammar import forced_call_grammar, must_call
from ._models import resolve_model
from ._server import RunningServer, ServerSpec, ensure_server, server_alive

if TYPE_CHECKING:
    from openagent_openai import ChatCompletionsProvider, OpenAIProfile

__all__ = ["KEEP_ALIVE_ENV", "TEMPLATE_ENV", "LocalProvider"]

logger = logging.getLogger("openagent.local")

TEMPLATE_ENV = "OPENAGENT_LOCAL_CHAT_TEMPLATE"
"""A Jinja chat template file for model strings to use (the model's own template otherwise)."""
KEEP_ALIVE_ENV = "OPENAGENT_LOCAL_KEEP_ALIVE"
"""Seconds a server stays up after its last request when the provider does not say (default 0)."""


def _profile() -> OpenAIProfile:
    """llama.cpp's profile, speaking the text tool-call protocol the engine's grammar holds calls to."""
    from openagent_openai import PROFILES

    return dataclasses.replace(PROFILES["llamacpp"], name="local", tool_call_protocol="text")


async def _dies(server: RunningServer, within: float = 1.0) -> bool:
    """Whether the server is gone, or goes within ``within`` seconds.

    A killed process closes its sockets before it can be reaped, so the broken connection is seen a moment
    before the death is.
    """
    for _ in range(int(within / 0.02)):
        if not server_alive(server):
            return True
        await anyio.sleep(0.02)
    return not server_alive(server)


class LocalProvider:
    """A local GGUF model served by a managed llama.cpp engine (the ``xllamacpp`` wheel; no compiler).

    Tools are described in the prompt and calls read from ``<tool_call>`` blocks; when ``tool_choice``
    requires a call on a turn that answers the user, the engine is held to a grammar of valid calls.

    Args:
        model: a model package's short name (``smollm2``) or a path to a ``.gguf`` file.
        base_url: an already running llama.cpp server to use instead of a managed one (native tool calls).
        api_key: sent to ``base_url`` when given (a managed server needs none).
        chat_template: a Jinja chat template file; default: ``OPENAGENT_LOCAL_CHAT_TEMPLATE``, else the
            model's own.
        ctx_size: the server's context window in tokens.
        threads: CPU threads for decoding (default: half the cores, at least one).
        keep_alive: seconds the engine stays up after its last request, for later processes to reuse
            (default: ``OPENAGENT_LOCAL_KEEP_ALIVE``, else 0: it stops when this process exits).
        root: the cache folder for state files (default: the user cache directory's ``openagent``).

    Raises:
        ConfigError: the model is not installed, or the file does not exist.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        chat_template: str | Path | None = None,
        ctx_size: int = 4096,
        threads: int | None = None,
        keep_alive: float | None = None,
        root: Path | None = None,
    ) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._root = root
        template = chat_template if chat_template is not None else os.environ.get(TEMPLATE_ENV) or None
        if base_url is None:
            found = resolve_model(model)
            self.model = found.name
            self.spec: ServerSpec | None = ServerSpec(
                model=found.path,
                alias=found.name,
                chat_template=_template_file(template),
                ctx_size=ctx_size,
                threads=threads,
                keep_alive=keep_alive if keep_alive is not None else _keep_alive_env(),
            )
        else:
            self.model = model
            self.spec = None
        self.server: RunningServer | None = None
        """The server the last request went to (``None`` before the first, or with ``base_url``)."""
        self._inner: ChatCompletionsProvider | None = None

    @property
    def profile(self) -> OpenAIProfile:
        """The endpoint's capabilities and quirks (llama.cpp's; text tool calls for a managed engine)."""
        if self.spec is None:
            from openagent_openai import PROFILES

            return PROFILES["llamacpp"]
        return _profile()

    async def _provider(self) -> ChatCompletionsProvider:
        from openagent_openai import PROFILES, ChatCompletionsProvider

        if self.spec is None:
            self._inner = self._inner or ChatCompletionsProvider(
                self.model, profile=PROFILES["llamacpp"], base_url=self._base_url, api_key=self._api_key
            )
            return self._inner
        server = self.server
        if server is None or not server_alive(server):  # the fast path costs one read of /proc
            server = await ensure_server(self.spec, root=self._root)
        if self._inner is None or server != self.server:  # first use, or a new server: new connections
            if self._inner is not None:
                await self._inner.aclose()
            self._inner = ChatCompletionsProvider(self.model, profile=_profile(), base_url=server.base_url)
        self.server = server
        return self._inner

    def __repr__(self) -> str:
        return f"LocalProvider({self.model!r})"

    def cost(self, usage: Usage) -> float:
        """A model on this machine costs nothing per token."""
        return 0.0

    async def aclose(self) -> None:
        """Close the connection pool. The server keeps running for reuse; it stops when the process exits."""
        inner, self._inner = self._inner, None
        if inner is not None:
            await inner.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Start or reuse the server, then stream ``request`` through the chat-completions adapter.

        Raises:
            ProviderConnectionError: the server died (before or during the stream); the message holds
                the tail of its log. A retry starts a new one.
        """
        inner = await self._provider()
        if self.spec is not None and (name := must_call(request)) is not None:
            extra = {**(request.extra_body or {}), "grammar": forced_call_grammar(request, name)}
            request = dataclasses.replace(request, extra_body=extra)
        try:
            stream = cast(AsyncGenerator[ModelEvent, None], inner.stream(request))  # the adapter's generator
            async with aclosing(stream) as events:  # closed with us, not by the collector
                async for event in events:
                    yield event
        except ProviderError as exc:
            server = self.server
            if server is None or not isinstance(exc, ProviderConnectionError | StreamError):
                raise
            if not await _dies(server):
                raise
            raise ProviderConnectionError(
                f"the local engine (pid {server.pid}, port {server.port}) died during the request; "
                f"its log ends:\n{server.log_tail()}",
                provider="local",
                body=exc.body,
            ) from exc


def _template_file(template: str | Path | None) -> Path | None:
    if template is None:
        return None
    path = Path(template).expanduser()
    if not path.is_file():
        raise ConfigError(f"no chat template file {str(path)!r}")
    return path.resolve()


def _keep_alive_env() -> float:
    raw = os.environ.get(KEEP_ALIVE_ENV, "")
    try:
        return max(float(raw), 0.0) if raw else 0.0
    except ValueError:
        raise ConfigError(f"{KEEP_ALIVE_ENV} must be a number of seconds, not {raw!r}") from None
