"""Cost from the price table; the table is extendable; the plugin registers its provider."""

from __future__ import annotations

import pytest

from openagent.plugins import load_plugins
from openagent.types import Usage
from openagent_anthropic import PRICES, MessagesProvider, ModelPrice, cost_usd, price_for, register_price

USAGE = Usage(
    input_tokens=1_000_000,
    output_tokens=1_000_000,
    cache_creation_input_tokens=1_000_000,
    cache_read_input_tokens=1_000_000,
)


@pytest.mark.parametrize(
    ("model", "expected"),
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
def test_cost_of_known_models(model: str, expected: float) -> None:
    assert cost_usd(model, USAGE) == pytest.approx(expected)


@pytest.mark.parametrize("model", ["claude-haiku-5-5", "claude-fable-5-2", "smollm2-135m-instruct"])
def test_unknown_or_tiered_models_cost_none(model: str) -> None:
    assert price_for(model) is None and cost_usd(model, USAGE) is None


def test_register_price_extends_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("openagent_anthropic._prices.PRICES", dict(PRICES))
    register_price(
        "my-proxy-model-20260101", ModelPrice(input=1.0, output=2.0, cache_write=0.0, cache_read=0.0)
    )
    assert cost_usd("my-proxy-model", Usage(input_tokens=500_000, output_tokens=250_000)) == pytest.approx(
        1.0
    )


@pytest.mark.anyio
async def test_provider_cost_uses_its_model() -> None:
    provider = MessagesProvider("claude-haiku-4-5", api_key="k")
    assert provider.cost(Usage(input_tokens=2_000_000)) == pytest.approx(2.0)
    await provider.aclose()


def test_plugin_registers_the_anthropic_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "anthropic")
    registry = load_plugins()
    assert registry.plugins["anthropic"].error is None
    assert registry.provider_factory("anthropic") is MessagesProvider
