"""What a model turn cost: prices from ``genai-prices`` (pydantic's maintained price data), overridable.

`cost_of` is what the loop asks after each turn. In order: a provider's own ``cost(usage)`` method; a price
registered with `register_price`; ``0.0`` for an endpoint on the user's machine or network (a ``local``
profile, or a loopback / private address); the ``genai-prices`` data for the provider and model. A hosted
model nobody prices costs ``None`` (and a warning says so once per model), so ``max_budget_usd`` cannot
end its runs. ``genai-prices`` is imported on the first hosted-model lookup only.

Example:
    >>> from openagent import register_price
    >>> register_price("my-proxy-model", input=1.0, output=4.0)   # USD per million tokens
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .types import Usage

__all__ = ["ModelPrice", "cost_of", "cost_usd", "is_local_url", "price_for", "register_price"]

logger = logging.getLogger("openagent.prices")

# openagent provider names → genai-prices provider ids, where they differ or where a name alone is ambiguous
_PROVIDER_IDS = {"gemini": "google", "xai": "x-ai", "grok": "x-ai", "bedrock": "aws", "azure-openai": "azure"}


@dataclass(slots=True, frozen=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input: float
    """Uncached prompt tokens."""
    output: float
    """Generated tokens, reasoning included."""
    cache_write: float | None = None
    """Prompt tokens written to the cache (``None``: the input rate)."""
    cache_read: float | None = None
    """Prompt tokens read from the cache (``None``: the input rate)."""

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs at this price, in USD."""
        write = self.input if self.cache_write is None else self.cache_write
        read = self.input if self.cache_read is None else self.cache_read
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * write
            + usage.cache_read_input_tokens * read
        ) / 1_000_000


_REGISTERED: dict[tuple[str | None, str], ModelPrice] = {}
_WARNED: set[tuple[str | None, str]] = set()
_LOCK = threading.Lock()


def register_price(
    model: str,
    price: ModelPrice | None = None,
    *,
    input: float | None = None,
    output: float | None = None,
    cache_write: float | None = None,
    cache_read: float | None = None,
    provider: str | None = None,
) -> None:
    """Price ``model`` (for every provider, or only ``provider``), overriding the maintained data.

    Args:
        model: The model name as sent to the endpoint (``"gpt-4.1-mini"``, ``"my-proxy-model"``).
        price: A `ModelPrice`; or give the rates as keywords (USD per million tokens).
        input: Uncached prompt tokens.
        output: Generated tokens.
        cache_write: Prompt tokens written to the cache (default: the input rate).
        cache_read: Prompt tokens read from the cache (default: the input rate).
        provider: Limit the price to one provider (``"openrouter"``); ``None`` for any.
    """
    if price is None:
        if input is None or output is None:
            raise TypeError("register_price needs a ModelPrice or both input= and output= rates")
        price = ModelPrice(input, output, cache_write, cache_read)
    _REGISTERED[(provider, model.strip().lower())] = price


def is_local_url(url: str | None) -> bool:
    """Whether ``url`` points at this machine or a private network (``localhost``, 127.x, 192.168.x …)."""
    host = (urlsplit(url).hostname or "") if url else ""
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


_MISSING = "-"
_RESOLVED: dict[tuple[str, str | None], str | None] = {}
"""(model, openagent provider) → the genai-prices provider id that prices it (``None``: any), or _MISSING."""


def _calc(model: str, provider: str | None, usage: Usage) -> float | None:
    """``usage`` priced by ``genai-prices`` (tiered prices included), or ``None`` when it has no price."""
    try:
        from genai_prices import Usage as GenaiUsage
        from genai_prices import calc_price
    except ImportError:  # pragma: no cover - a dependency of openagent; tolerate a broken install
        return None
    priced = GenaiUsage(
        input_tokens=usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
        output_tokens=usage.output_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
    )
    key = (model, provider)
    with _LOCK:  # the first lookup imports the price data; concurrent runs wait for it once
        known = _RESOLVED.get(key)
        bedrock = "aws" if model.startswith(("anthropic.", "us.", "eu.", "apac.", "global.")) else None
        candidates = (
            [known] if key in _RESOLVED else [_PROVIDER_IDS.get(provider or "", provider), None, bedrock]
        )
        for provider_id in dict.fromkeys(candidates):
            if provider_id == _MISSING:
                break
            try:
                total = calc_price(priced, model, provider_id=provider_id).total_price
            except (LookupError, ValueError):
                continue
            _RESOLVED[key] = provider_id
            return float(total)
        _RESOLVED[key] = _MISSING
    return None


def price_for(model: str, provider: str | None = None) -> ModelPrice | None:
    """The price of ``model`` per million tokens (registered first, then the maintained data), or ``None``."""
    name = model.strip().lower()
    registered = _REGISTERED.get((provider, name)) or _REGISTERED.get((None, name))
    if registered is not None:
        return registered
    fields = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    rates = [_calc(name, provider, Usage(**{field: 1_000})) for field in fields]  # the base tier
    if rates[0] is None or rates[1] is None:
        return None
    return ModelPrice(*(None if rate is None else rate * 1_000 for rate in rates))  # type: ignore[arg-type]


def cost_usd(model: str, usage: Usage, provider: str | None = None) -> float | None:
    """What ``usage`` cost on ``model`` in USD, or ``None`` for a model without a price."""
    name = model.strip().lower()
    registered = _REGISTERED.get((provider, name)) or _REGISTERED.get((None, name))
    if registered is not None:
        return registered.cost(usage)
    return _calc(name, provider, usage)


def cost_of(provider: Any, model: str, usage: Usage) -> float | None:
    """The cost of one turn of ``model`` on ``provider`` (see the module docstring for the order)."""
    own = getattr(provider, "cost", None)
    if callable(own):
        stated = own(usage)
        if stated is not None:
            return float(stated)
    profile = getattr(provider, "profile", None)
    name = getattr(profile, "name", None)
    name = name if isinstance(name, str) else None
    registered = _REGISTERED.get((name, model.strip().lower())) or _REGISTERED.get(
        (None, model.strip().lower())
    )
    if registered is not None:  # the caller's own price wins, even for a server on their network
        return registered.cost(usage)
    url = getattr(provider, "base_url", None) or getattr(profile, "base_url", None)
    if getattr(profile, "local", False) or is_local_url(url):
        return 0.0
    cost = cost_usd(model, usage, name)
    if cost is None and (name, model) not in _WARNED:
        _WARNED.add((name, model))
        logger.warning(
            "no price is known for %s:%s: its cost is reported as None and max_budget_usd cannot stop it; "
            "give one with openagent.register_price(%r, input=..., output=...)",
            name, model, model,
        )  # fmt: skip
    return cost
