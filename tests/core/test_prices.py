"""What a turn costs: a provider's own price, a registered one, local endpoints, the maintained data."""

from __future__ import annotations

import logging

import pytest

from openagent import AgentOptions, register_price, run
from openagent._prices import ModelPrice, cost_of, cost_usd, is_local_url, price_for
from openagent.models import ProviderProfile
from openagent.testing import ScriptedModel, text, usage
from openagent.types import Usage

pytestmark = pytest.mark.anyio


class Hosted:
    def __init__(self, name: str, base_url: str | None = None, local: bool = False) -> None:
        self.profile = ProviderProfile(name=name, base_url=base_url, local=local)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434", True), ("http://192.168.1.20/v1", True),
        ("http://10.0.0.5:8000", True), ("http://[::1]:9000", True), ("https://api.openai.com/v1", False),
        ("https://openrouter.ai/api/v1", False), (None, False), ("not a url", False),
    ],
)  # fmt: skip
def test_local_urls(url: str | None, local: bool) -> None:
    assert is_local_url(url) is local


def test_hosted_models_are_priced_from_the_maintained_data() -> None:
    cost = cost_of(Hosted("openai"), "gpt-4.1-mini", Usage(input_tokens=1_000_000, output_tokens=1_000_000))
    assert cost == pytest.approx(0.4 + 1.6)
    assert cost_of(
        Hosted("openrouter"), "openai/gpt-4.1-mini", Usage(input_tokens=1_000_000)
    ) == pytest.approx(0.4)


def test_a_local_endpoint_costs_nothing() -> None:
    assert cost_of(Hosted("ollama", local=True), "qwen3", Usage(output_tokens=10)) == 0.0
    assert (
        cost_of(Hosted("openai-compatible", "http://127.0.0.1:1234/v1"), "gpt-4.1", Usage(output_tokens=9))
        == 0.0
    )


def test_an_unknown_hosted_model_costs_none_and_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    provider = Hosted("openai-compatible", "https://models.example.com/v1")
    with caplog.at_level(logging.WARNING, "openagent.prices"):
        assert cost_of(provider, "house-model-7", Usage(output_tokens=5)) is None
        assert cost_of(provider, "house-model-7", Usage(output_tokens=5)) is None
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "register_price('house-model-7'" in caplog.records[0].getMessage()


def test_a_registered_price_wins_even_on_a_local_server() -> None:
    register_price("house-model-8", input=2.0, output=4.0)
    register_price("house-model-8", ModelPrice(10.0, 10.0), provider="special")
    used = Usage(input_tokens=500_000, output_tokens=250_000, cache_read_input_tokens=100_000)
    assert cost_of(
        Hosted("openai-compatible", "http://127.0.0.1/v1"), "house-model-8", used
    ) == pytest.approx(2.2)
    assert cost_usd("house-model-8", used, "special") == pytest.approx(8.5)
    assert price_for("HOUSE-MODEL-8") == ModelPrice(2.0, 4.0)
    with pytest.raises(TypeError):
        register_price("x", input=1.0)


def test_a_providers_own_cost_method_wins() -> None:
    model = ScriptedModel(["x"], cost_per_token=0.5)
    assert cost_of(model, "scripted", Usage(input_tokens=2, output_tokens=2)) == 2.0


async def test_the_run_reports_cost_per_model_and_the_budget_stops_it() -> None:
    register_price("priced-model", input=1_000_000.0, output=1_000_000.0)  # a dollar a token
    model = ScriptedModel([[text("a"), usage(1, 1)], [text("b"), usage(1, 1)]], model="priced-model")
    model.profile = ProviderProfile(name="test", requires_api_key=False)  # not local: the registered price
    result = (await run("hi", AgentOptions(model=model, max_budget_usd=1.5))).result
    assert result is not None and result.total_cost_usd == pytest.approx(2.0)
    assert result.model_usage == {
        "priced-model": {"inputTokens": 1, "outputTokens": 1, "cacheReadInputTokens": 0,
                         "cacheCreationInputTokens": 0, "costUSD": pytest.approx(2.0)},
    }  # fmt: skip
    assert (result.subtype, result.terminal_reason) == (
        "error_max_budget_usd",
        "max_budget",
    )  # after one turn
