"""``query()`` and ``ClaudeSDKClient`` over openagent's `query` and `Client`.

What differs from the native calls is only what the SDK promises: an error result ends a one-shot
``query()`` with `ResultError` (the CLI exits non-zero after it), the ``stderr`` callback receives
openagent's warnings (what the CLI would print on its stderr), ``verbatim_prompts`` skips slash-command
expansion, and the client's reports (`get_server_info`, `get_context_usage`) have the SDK's keys
(`Client`'s own MCP methods, `get_mcp_status` and the others, already have them).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Mapping
from contextlib import aclosing
from typing import Any

from ...client import Client
from ...errors import ConfigError, ProviderError
from ...query import MessageStream
from ...query import query as _query
from ...types import Message, ResultMessage, TextBlock, UserMessage
from ._options import ClaudeAgentOptions, to_agent_options

__all__ = ["ClaudeSDKClient", "ResultError", "Transport", "query"]

_NO_TRANSPORT = "custom transports drive the Claude Code CLI; openagent talks to models directly"
_stderr: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar("stderr", default=None)


class ResultError(ProviderError):
    """A one-shot ``query()`` ended with an error result (raised after that `ResultMessage` is yielded).

    ``subtype``, ``result``, ``errors``, ``terminal_reason``, ``session_id`` and ``data`` (the result as a
    dict) come from the result; ``exit_code`` is always ``None``: there is no process.
    """

    def __init__(
        self, message: str, data: Mapping[str, Any] | None = None, exit_code: int | None = None
    ) -> None:
        self.data = dict(data or {})
        self.subtype: str | None = self.data.get("subtype")
        self.result: str | None = self.data.get("result")
        self.errors: list[str] = [self.result] if self.result else []
        self.terminal_reason: str | None = self.data.get("terminal_reason")
        self.session_id: str | None = self.data.get("session_id")
        self.api_error_status: int | None = None
        self.exit_code = exit_code
        self.stderr: str | None = None
        super().__init__(message)


class Transport:
    """The SDK's transport interface (to the CLI process). openagent has no CLI: passing one is refused."""

    async def connect(self) -> None:
        """Start the transport."""
        raise NotImplementedError

    async def write(self, data: str) -> None:
        """Send raw data."""
        raise NotImplementedError

    def read_messages(self) -> AsyncIterable[dict[str, Any]]:
        """Receive parsed messages."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop the transport."""
        raise NotImplementedError

    def is_ready(self) -> bool:
        """Whether the transport is ready."""
        raise NotImplementedError

    async def end_input(self) -> None:
        """Close the input stream."""
        raise NotImplementedError


class _StderrBridge(logging.Handler):
    """Hands openagent's log records to the ``stderr`` callback of the run that logged them."""

    def emit(self, record: logging.LogRecord) -> None:
        callback = _stderr.get()
        if callback is not None:
            try:
                callback(self.format(record))
            except Exception:
                pass


_BRIDGE = _StderrBridge(logging.WARNING)
logging.getLogger("openagent").addHandler(_BRIDGE)


def _verbatim(prompt: Any) -> Any:
    """A prompt the loop will not expand (``/command`` stays text): its content as a list of blocks."""
    if isinstance(prompt, str):
        return UserMessage(content=[TextBlock(text=prompt)])
    return prompt


async def _one_shot(prompt: Any, options: ClaudeAgentOptions | None) -> AsyncGenerator[Message, None]:
    token = _stderr.set(getattr(options, "stderr", None))
    verbatim = bool(getattr(options, "verbatim_prompts", False))
    error: ResultMessage | None = None
    try:
        source = _verbatim(prompt) if verbatim and isinstance(prompt, str) else prompt
        if isinstance(source, UserMessage):
            source = _single(source)
        try:
            async with aclosing(_query(prompt=source, options=to_agent_options(options))) as messages:
                async for message in messages:
                    if isinstance(message, ResultMessage) and message.is_error:
                        error = message
                    yield message
        except ProviderError as exc:
            if error is None:
                raise
            raise _result_error(error) from exc
        if error is not None:
            raise _result_error(error)
    finally:
        try:
            _stderr.reset(token)
        except ValueError:  # finalised in another context (an abandoned run): nothing of ours is left set
            pass


async def _single(message: UserMessage) -> AsyncGenerator[UserMessage, None]:
    yield message


def _result_error(result: ResultMessage) -> ResultError:
    text = result.result or result.subtype
    return ResultError(f"the run ended with an error result: {text}", result.model_dump(mode="json"))


def query(
    *,
    prompt: str | AsyncIterable[dict[str, Any]],
    options: ClaudeAgentOptions | None = None,
    transport: Any = None,
) -> MessageStream[Message]:
    """The SDK's one-shot ``query()``: `SystemMessage`, `AssistantMessage` … `ResultMessage`.

    Raises:
        ResultError: After an error `ResultMessage` (max turns, budget, a failed model request) was yielded.
        ConfigError: For a custom ``transport`` (there is no CLI to talk to).
    """
    if transport is not None:
        raise ConfigError(_NO_TRANSPORT)
    return MessageStream(_one_shot(prompt, options))


class ClaudeSDKClient(Client):
    """The SDK's multi-turn client: ``query()``, ``receive_response()``, ``interrupt()`` and the rest."""

    def __init__(self, options: ClaudeAgentOptions | None = None, transport: Any = None) -> None:
        if transport is not None:
            raise ConfigError(_NO_TRANSPORT)
        self._claude_options = options or ClaudeAgentOptions()
        self._stderr_token: contextvars.Token[Any] | None = None
        super().__init__(to_agent_options(self._claude_options))

    async def connect(self, prompt: str | AsyncIterable[Mapping[str, Any]] | None = None) -> None:
        """Start the session; a prompt (or an async iterable of user messages) is answered as it is read."""
        if self._stderr_token is None:
            self._stderr_token = _stderr.set(self._claude_options.stderr)
        await super().connect(prompt)

    async def query(self, prompt: str | AsyncIterable[dict[str, Any]], session_id: str = "default") -> None:  # type: ignore[override]
        """Queue a prompt: a string, a user-message dict, or an async iterable of them (read now)."""
        if isinstance(prompt, str | Mapping):
            await super().query(self._prompt(prompt), session_id)
            return
        async for item in prompt:
            await super().query(self._prompt(item), session_id)

    def _prompt(self, prompt: Any) -> Any:
        return _verbatim(prompt) if self._claude_options.verbatim_prompts else prompt

    async def get_server_info(self) -> dict[str, Any] | None:
        """Model, tools, slash ``commands`` (name, description, argumentHint), agents, skills."""
        return self.server_info()

    async def get_context_usage(self) -> dict[str, Any]:
        """How full the context window is, by category (the SDK's ``ContextUsageResponse`` keys)."""
        return self.context_usage()

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:  # type: ignore[override]
        await self.disconnect()
        return False

    async def disconnect(self) -> None:
        """End the session (queued prompts are dropped)."""
        try:
            await super().disconnect()
        finally:
            if self._stderr_token is not None:
                try:
                    _stderr.reset(self._stderr_token)
                except ValueError:  # disconnected from another context: just forget the callback
                    _stderr.set(None)
                self._stderr_token = None
