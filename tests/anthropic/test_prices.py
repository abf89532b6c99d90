"""Anthropic models are priced from core's price data, by every name Anthropic's endpoints use."""

from __future__ import annotations

import pytest

from openagent._prices import cost_of, cost_usd, price_for
from openagent.plugins import load_plugins
from openagent.types import Usage
from openagent_anthropic import MessagesProvider

USAGE = Usage(
    input_tokens=1_000, output_tokens=1_000, cache_creation_input_tokens=1_000, cache_read_input_tokens=1_000
)


@pytest.mark.parametrize(
    ("model", "per_million"),
    [
        pytest.param("claude-sonnet-4-5", 3 + 15 + 3.75 + 0.30, id="bare-name"),
        pytest.param("claude-sonnet-4-5-20250929", 3 + 15 + 3.75 + 0.30, id="dated-snapshot"),
        pytest.param("claude-opus-4-0", 15 + 75 + 18.75 + 1.50, id="dash-zero-alias"),
        pytest.param("claude-opus-4-5-20251101", 5 + 25 + 6.25 + 0.50, id="opus-4-5-not-opus-4"),
        pytest.param("anthropic.claude-3-5-haiku-20241022-v1:0", 0.80 + 4 + 1.0 + 0.08, id="bedrock-id"),
        pytest.param("claude-3-5-sonnet-latest", 3 + 15 + 3.75 + 0.30, id="latest-alias"),
        pytest.param("claude-haiku-4-5@20251001", 1 + 5 + 1.25 + 0.10, id="vertex-id"),
    ],
)
def test_cost_of_known_models(model: str, per_million: float) -> None:
    assert cost_usd(model, USAGE, "anthropic") == pytest.approx(per_million / 1_000)


def test_a_long_prompt_is_priced_at_its_tier() -> None:
    """Sonnet 4.5 costs twice as much per input token past 200k tokens: a table of one price cannot say so."""
    short = cost_usd("claude-sonnet-4-5", Usage(input_tokens=100_000), "anthropic")
    long = cost_usd("claude-sonnet-4-5", Usage(input_tokens=300_000), "anthropic")
    assert short == pytest.approx(0.3) and long == pytest.approx(1.8)


@pytest.mark.parametrize("model", ["claude-fable-9-9", "smollm2-135m-instruct"])
def test_unknown_models_cost_none(model: str) -> None:
    assert price_for(model, "anthropic") is None and cost_usd(model, USAGE, "anthropic") is None


@pytest.mark.anyio
async def test_the_provider_is_priced_by_its_model_and_a_local_server_is_free() -> None:
    hosted = MessagesProvider("claude-haiku-4-5", api_key="k")
    local = MessagesProvider("claude-haiku-4-5", api_key="k", base_url="http://127.0.0.1:8080")
    try:
        assert cost_of(hosted, "claude-haiku-4-5", Usage(input_tokens=2_000_000)) == pytest.approx(2.0)
        assert cost_of(local, "claude-haiku-4-5", Usage(input_tokens=2_000_000)) == 0.0
    finally:
        await hosted.aclose()
        await local.aclose()


def test_plugin_registers_the_anthropic_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "anthropic")
    registry = load_plugins()
    assert registry.plugins["anthropic"].error is None
    assert registry.provider_factory("anthropic") is MessagesProvider
