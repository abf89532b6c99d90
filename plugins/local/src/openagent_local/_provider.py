"""The ``local`` provider: a managed ``llama-server`` behind the chat-completions wire format.

``model="local:smollm2"`` (a model package) or ``model="local:/path/model.gguf"``. The first request starts
the server (building it first if it is not cached) in a worker thread; later requests, and other processes,
reuse it. The wire format is the openai plugin's; this module adds only the server's lifetime and the
errors that belong to it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio
import anyio.to_thread

from openagent.errors import ConfigError, ProviderConnectionError, ProviderError, StreamError
from openagent.models import ModelEvent, ModelRequest
from openagent.types import Usage

from ._build import BUILD_MINUTES, ServerBuild, build_server, find_server
from ._models import resolve_model
from ._server import RunningServer, ServerSpec, ensure_server, server_alive

if TYPE_CHECKING:
    from openagent_openai import ChatCompletionsProvider

__all__ = ["TEMPLATE_ENV", "LocalProvider"]

logger = logging.getLogger("openagent.local")

TEMPLATE_ENV = "OPENAGENT_LOCAL_CHAT_TEMPLATE"
"""A chat template for model strings to use: a file path, or the name of one shipped with llama.cpp
(``NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja``)."""


def _log_progress() -> ServerBuild:
    """Build with progress in the log: a library must not print, but a quarter-hour wait must be visible."""
    logger.warning(
        "building llama-server from source (once, cached): about %d minutes on 2 cores; "
        "`openagent local install` shows a progress bar",
        BUILD_MINUTES,
    )
    shown = -1

    def progress(percent: int, line: str) -> None:
        nonlocal shown
        if percent >= shown + 5:
            shown = percent
            logger.warning("building llama-server: %d%%", percent)

    return build_server(progress=progress)


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
    """A local GGUF model served by a managed ``llama-server``.

    Args:
        model: a model package's short name (``smollm2``) or a path to a ``.gguf`` file.
        base_url: an already running llama-server to use instead of a managed one.
        api_key: sent to ``base_url`` when given (a managed server needs none).
        chat_template: a Jinja chat template file, or the name of one shipped in llama.cpp's
            ``models/templates``; default: ``OPENAGENT_LOCAL_CHAT_TEMPLATE``, else the model's own.
        ctx_size: the server's context window in tokens.
        extra_args: more ``llama-server`` command-line arguments.
        root: the cache folder (default: the user cache directory's ``openagent``).

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
        extra_args: tuple[str, ...] = (),
        root: Path | None = None,
    ) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._root = root
        self._template = chat_template if chat_template is not None else os.environ.get(TEMPLATE_ENV) or None
        if base_url is None:
            found = resolve_model(model)
            self.model = found.name
            self.spec: ServerSpec | None = ServerSpec(
                model=found.path, alias=found.name, ctx_size=ctx_size, extra_args=extra_args
            )
        else:
            self.model = model
            self.spec = None
        self.server: RunningServer | None = None
        """The server the last request went to (``None`` before the first, or with ``base_url``)."""
        self._inner: ChatCompletionsProvider | None = None

    def _template_path(self, build: ServerBuild | None) -> Path | None:
        if self._template is None:
            return None
        path = Path(self._template).expanduser()
        if path.is_file():
            return path.resolve()
        if build is not None and build.template(str(self._template)).is_file():
            return build.template(str(self._template))
        shipped = sorted(p.name for p in build.templates.glob("*.jinja")) if build else []
        raise ConfigError(
            f"no chat template {str(self._template)!r}: not a file, and not one of llama.cpp's "
            f"{len(shipped)} shipped templates ({', '.join(shipped[:8])}{', …' if len(shipped) > 8 else ''})"
        )

    async def _provider(self) -> ChatCompletionsProvider:
        from openagent_openai import PROFILES, ChatCompletionsProvider

        if self.spec is None:
            self._inner = self._inner or ChatCompletionsProvider(
                self.model, profile=PROFILES["llamacpp"], base_url=self._base_url, api_key=self._api_key
            )
            return self._inner
        if self._template is not None and self.spec.chat_template is None:
            build = find_server(root=self._root)
            if build is None:  # the template may be one shipped with llama.cpp: build first
                build = await anyio.to_thread.run_sync(_log_progress, abandon_on_cancel=True)
            self.spec = ServerSpec(
                model=self.spec.model,
                alias=self.spec.alias,
                chat_template=self._template_path(build),
                ctx_size=self.spec.ctx_size,
                extra_args=self.spec.extra_args,
            )
        server = self.server
        if server is None or not server_alive(server):  # the fast path costs one read of /proc
            server = await ensure_server(self.spec, root=self._root, builder=_log_progress)
        if self._inner is None or server != self.server:  # first use, or a new server: new connections
            if self._inner is not None:
                await self._inner.aclose()
            self._inner = ChatCompletionsProvider(
                self.model, profile=PROFILES["llamacpp"], base_url=server.base_url
            )
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
                f"llama-server (pid {server.pid}, port {server.port}) died during the request; "
                f"its log ends:\n{server.log_tail()}",
                provider="local",
                body=exc.body,
            ) from exc
