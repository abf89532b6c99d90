"""What Anthropic models cost, per million tokens, and how to add models to the table.

Prices come from Anthropic's public pricing page (standard tier, 5-minute cache writes). A plugin or an
application that uses another model, a negotiated rate or a proxy with its own prices adds them with
`register_price`; `price_for` looks a model name up the same way the provider does.

Example:
    >>> from openagent_anthropic import ModelPrice, register_price
    >>> register_price("claude-custom-1", ModelPrice(input=2.0, output=8.0, cache_write=2.5, cache_read=0.2))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openagent.models import ModelProfile
from openagent.types import Usage

__all__ = ["PRICES", "ModelPrice", "cost_usd", "model_profile", "price_for", "register_price"]


@dataclass(slots=True, frozen=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input: float
    """Uncached prompt tokens."""
    output: float
    """Generated tokens, thinking included."""
    cache_write: float
    """Prompt tokens written to the cache (the 5-minute rate)."""
    cache_read: float
    """Prompt tokens read from the cache."""


def _price(input: float, output: float, cache_read: float) -> ModelPrice:
    # Anthropic's 5-minute cache writes cost 1.25 times the input rate on every model.
    return ModelPrice(input=input, output=output, cache_write=input * 1.25, cache_read=cache_read)


PRICES: dict[str, ModelPrice] = {
    "claude-fable-5-1": _price(10.0, 50.0, 0.25),
    "claude-mythos-5-1": _price(10.0, 50.0, 0.25),
    "claude-fable-5": _price(10.0, 50.0, 1.0),
    "claude-mythos-5": _price(10.0, 50.0, 1.0),
    "claude-opus-5-5": _price(4.0, 20.0, 0.20),
    "claude-opus-5": _price(5.0, 25.0, 0.50),
    "claude-opus-4-8": _price(5.0, 25.0, 0.50),
    "claude-opus-4-7": _price(5.0, 25.0, 0.50),
    "claude-opus-4-6": _price(5.0, 25.0, 0.50),
    "claude-opus-4-5": _price(5.0, 25.0, 0.50),
    "claude-opus-4-1": _price(15.0, 75.0, 1.50),
    "claude-opus-4": _price(15.0, 75.0, 1.50),
    "claude-3-opus": _price(15.0, 75.0, 1.50),
    "claude-sonnet-5-5": _price(2.0, 10.0, 0.10),
    "claude-sonnet-5": _price(2.0, 10.0, 0.20),
    "claude-sonnet-4-6": _price(3.0, 15.0, 0.30),
    "claude-sonnet-4-5": _price(3.0, 15.0, 0.30),
    "claude-sonnet-4": _price(3.0, 15.0, 0.30),
    "claude-3-7-sonnet": _price(3.0, 15.0, 0.30),
    "claude-3-5-sonnet": _price(3.0, 15.0, 0.30),
    "claude-haiku-4-5": _price(1.0, 5.0, 0.10),
    "claude-3-5-haiku": _price(0.80, 4.0, 0.08),
    "claude-3-haiku": _price(0.25, 1.25, 0.03),
}
"""Model name (without date suffix) → price. Models whose price depends on the prompt length (Haiku 5.5)
are left out rather than priced wrongly: their cost is ``None`` unless a price is registered."""

# A dated snapshot (-20250929), a -latest alias, -0 (claude-opus-4-0) and a Bedrock/Vertex wrapper
# (anthropic.claude-…-v1:0, claude-…@20250514) name the same model as the bare name in the table.
_SUFFIX = re.compile(r"(?:@\d{8}|-\d{8}|-latest|-v\d+(?::\d+)?|-0)+$")


def register_price(model: str, price: ModelPrice) -> None:
    """Add or replace the price of ``model`` (a bare name such as ``claude-sonnet-4-5``)."""
    PRICES[_normalize(model)] = price


def _normalize(model: str) -> str:
    name = model.strip().lower()
    if name.startswith(("anthropic.", "us.", "eu.", "apac.", "global.")):
        name = name.rpartition(".")[2]
    return _SUFFIX.sub("", name)


def price_for(model: str) -> ModelPrice | None:
    """The price of ``model``, or ``None`` when the table does not know it (never a guess)."""
    return PRICES.get(model) or PRICES.get(_normalize(model))


def cost_usd(model: str, usage: Usage) -> float | None:
    """What ``usage`` cost on ``model`` in USD, or ``None`` for a model without a price."""
    price = price_for(model)
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / 1_000_000


def model_profile(model: str) -> ModelProfile:
    """The prices of ``model`` as a model profile (an empty one when the table does not know it)."""
    price = price_for(model)
    if price is None:
        return ModelProfile()
    return ModelProfile(
        input_price=price.input,
        output_price=price.output,
        cache_write_price=price.cache_write,
        cache_read_price=price.cache_read,
    )
