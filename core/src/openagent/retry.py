"""Retry policies: the protocol, and the default one built on stamina.

The loop wraps only the *opening* of a model stream (up to its first event) in the policy, so a request is
never retried once output has been handed on. Providers raise typed errors; `ProviderError.is_retryable`
and `retry_after` tell the policy what to do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast, runtime_checkable

from .errors import ConfigError, ProviderError

__all__ = ["NoRetry", "RetryPolicy", "StaminaRetry", "resolve_retry"]

T = TypeVar("T")


@runtime_checkable
class RetryPolicy(Protocol):
    """Calls ``attempt`` until it succeeds or the policy gives up (then the last error propagates)."""

    async def __call__(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt``, retrying it as the policy allows."""
        ...


@dataclass(frozen=True, slots=True)
class StaminaRetry:
    """Exponential backoff with jitter (stamina), honouring ``Retry-After``; bounded in attempts and time.

    Retries connection errors, timeouts, 408/409/429/5xx/529 (`ProviderError.is_retryable`). Tests can make
    it instant with ``stamina.set_testing(True)``.
    """

    attempts: int = 4
    timeout: float = 60.0
    wait_initial: float = 0.5
    wait_max: float = 10.0
    wait_jitter: float = 1.0
    max_retry_after: float = 60.0
    """A server asking to wait longer than this is not retried: the error is raised at once."""

    async def __call__(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` under the policy."""
        try:  # most requests succeed the first time: stamina (and tenacity) load only for a retry
            return await attempt()
        except Exception as exc:
            if self._backoff(exc) is False:
                raise
            failed: Exception | None = exc
        import stamina

        async for trial in stamina.retry_context(
            on=self._backoff,
            attempts=self.attempts,
            timeout=self.timeout,
            wait_initial=self.wait_initial,
            wait_max=self.wait_max,
            wait_jitter=self.wait_jitter,
        ):
            with trial:
                if failed is not None:  # the first attempt's error, handed to stamina as its first trial's
                    error, failed = failed, None
                    raise error
                return await attempt()
        raise AssertionError("unreachable: stamina re-raises the last error")  # pragma: no cover

    def _backoff(self, exc: Exception) -> bool | float:
        if not isinstance(exc, ProviderError) or not exc.is_retryable:
            return False
        if exc.retry_after is not None:
            return exc.retry_after if exc.retry_after <= self.max_retry_after else False
        return True


@dataclass(frozen=True, slots=True)
class NoRetry:
    """Never retries."""

    async def __call__(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` once."""
        return await attempt()


def resolve_retry(spec: RetryPolicy | str | None) -> RetryPolicy:
    """The policy for ``AgentOptions.retry``: the default, a registered name, or the policy itself."""
    if spec is None:
        return StaminaRetry()
    if isinstance(spec, str):
        from .plugins import registry

        policies = registry().retry_policies
        if spec not in policies:
            raise ConfigError(f"unknown retry policy {spec!r}; installed: {', '.join(policies) or 'none'}")
        return cast(RetryPolicy, policies[spec])
    return spec
