import pytest

from openagent._errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    OpenAgentError,
    ProviderError,
    RateLimitError,
    ServerError,
    error_for_status,
)


@pytest.mark.parametrize(
    ("status", "message", "kind", "retryable"),
    [
        (401, "bad key", AuthenticationError, False),
        (403, "forbidden", AuthenticationError, False),
        (429, "slow down", RateLimitError, True),
        (408, "timeout", ServerError, True),
        (409, "conflict", ServerError, True),
        (500, "oops", ServerError, True),
        (529, "overloaded", ServerError, True),
        (400, "This model's maximum context length is 8192 tokens", ContextWindowExceededError, False),
        (400, "the request exceeds the available context size (n_ctx)", ContextWindowExceededError, False),
        (400, "missing field", BadRequestError, False),
        (404, "no such model", BadRequestError, False),
        (302, "moved", ProviderError, False),
    ],
)
def test_status_codes_map_to_typed_errors(status, message, kind, retryable):
    error = error_for_status(status, message, provider="ollama", body="{...}", retry_after=2.0)
    assert type(error) is kind and isinstance(error, OpenAgentError)
    assert error.is_retryable is retryable
    assert (error.status_code, error.provider, error.body, error.retry_after) == (
        status,
        "ollama",
        "{...}",
        2.0,
    )
    assert str(error) == f"ollama (HTTP {status}): {message}"


def test_an_error_without_status_names_the_provider():
    assert str(ProviderError("connection refused", provider="lmstudio")) == "lmstudio: connection refused"


def test_redact_scrubs_an_echoed_key_from_message_body_and_str():
    key = "sk-test-0123456789abcdef"
    error = error_for_status(
        401, f"Incorrect API key provided: {key}", provider="openai", body=f'{{"key": "{key}"}}'
    )
    assert error.redact(key, None, "local") is error
    assert key not in str(error) and key not in error.body and key not in repr(error)
    assert "[redacted]" in error.message
