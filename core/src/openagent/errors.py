"""The exception hierarchy: everything openagent raises derives from `OpenAgentError`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ContextWindowExceededError",
    "OpenAgentError",
    "PluginError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "SessionError",
    "StreamError",
    "ToolError",
    "error_for_status",
    "mask_secret",
    "mask_url",
    "masked",
]

_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]+@")
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|credential|auth|cookie")


def mask_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: ``https://user:pw@host`` → ``https://****@host``."""
    return _URL_CREDENTIALS.sub(r"\1****@", text) if "@" in text else text


def mask_secret(value: str) -> str:
    """A secret shown safely: its last four characters only (nothing of a short one)."""
    return "****" + value[-4:] if len(value) > 8 else "****"


def masked(value: Any, name: str = "") -> Any:
    """``value`` fit to print: strings under a secret-looking key (``api_key``, ``Authorization``,
    ``*_TOKEN``) masked, credentials in URLs masked, mappings and lists walked (``repr`` of options).
    """  # noqa: D205
    if isinstance(value, str):
        return mask_secret(value) if name and _SECRET_NAME.search(name) else mask_url(value)
    if isinstance(value, Mapping):
        return {k: masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(masked(v, name) for v in value)
    return value


class OpenAgentError(Exception):
    """Root of every error openagent raises."""


class ConfigError(OpenAgentError, ValueError):
    """Options that cannot work: an unknown provider, a malformed model string, a bad setting."""


class PluginError(OpenAgentError):
    """A plugin failed to load or registered something invalid."""

    def __init__(self, message: str, *, plugin: str | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        """Name of the plugin at fault, when known."""


class SessionError(OpenAgentError):
    """A session store failed to read or write, or a session does not exist."""


class ToolError(OpenAgentError):
    """A tool could not run. Raised inside tools; the loop turns it into an error tool result."""


class ProviderError(OpenAgentError):
    """A model endpoint failed.

    Attributes carry what the server said, so the message a user sees names the provider, the HTTP status
    and the server's own words.
    """

    is_retryable: bool = False
    """Whether a retry policy may try the request again (only before any output was handed on)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = mask_url(message)
        """The server's message, or a description of what went wrong (credentials in URLs masked)."""
        self.provider = provider
        """The provider name (``openai``, ``ollama``, ``anthropic`` …)."""
        self.status_code = status_code
        """The HTTP status, when there was one."""
        self.body = mask_url(body) if body else body
        """The raw response body or offending stream data, for diagnosis."""
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After`` / ``retry-after-ms``)."""
        super().__init__(self._describe())

    def redact(self, *secrets: str | None) -> ProviderError:
        """Replace each secret (an API key a server echoed back) in the message and body; returns self."""
        for secret in filter(None, secrets):
            if len(secret) >= 8:  # a placeholder key such as "local" is no secret, and too common to scrub
                self.message = self.message.replace(secret, "[redacted]")
                self.body = self.body.replace(secret, "[redacted]") if self.body else self.body
        self.args = (self._describe(),)
        return self

    def _describe(self) -> str:
        where = self.provider or "provider"
        status = f" (HTTP {self.status_code})" if self.status_code is not None else ""
        return f"{where}{status}: {self.message}"


class ProviderConnectionError(ProviderError):
    """The endpoint could not be reached, or the connection broke before any output."""

    is_retryable = True


class ProviderTimeoutError(ProviderError):
    """The endpoint did not answer within the timeout."""

    is_retryable = True


class AuthenticationError(ProviderError):
    """The endpoint refused the credentials (401/403)."""


class RateLimitError(ProviderError):
    """The endpoint asked us to slow down (429); `retry_after` says for how long when it said."""

    is_retryable = True


class BadRequestError(ProviderError):
    """The endpoint rejected the request as malformed (400/404/422)."""


class ContextWindowExceededError(BadRequestError):
    """The request does not fit the model's context window."""


class ServerError(ProviderError):
    """The endpoint failed on its side (5xx, 529 overloaded, 408/409)."""

    is_retryable = True


class StreamError(ProviderError):
    """The response stream was malformed: garbage data, an error event inside a 200, a truncated stream."""


_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "exceeds the context",
    "n_ctx",
    "available context",
)


def error_for_status(
    status_code: int,
    message: str,
    *,
    provider: str | None = None,
    body: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """Map an HTTP error status to the typed `ProviderError` subclass every wire format shares.

    A 400 whose message says the prompt overflowed the context becomes `ContextWindowExceededError`, so
    the loop can compact and retry whatever the vendor's wording.
    """
    cls: type[ProviderError]
    if status_code in (401, 403):
        cls = AuthenticationError
    elif status_code == 429:
        cls = RateLimitError
    elif status_code in (408, 409) or status_code >= 500:
        cls = ServerError
    elif status_code in (400, 413) and any(m in message.lower() for m in _CONTEXT_MARKERS):
        cls = ContextWindowExceededError
    elif 400 <= status_code < 500:
        cls = BadRequestError
    else:
        cls = ProviderError
    return cls(message, provider=provider, status_code=status_code, body=body, retry_after=retry_after)
