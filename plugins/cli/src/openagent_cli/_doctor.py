"""``openagent doctor``: which model servers answer, which models they serve, and what to do next."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import click

from openagent.errors import ConfigError

from ._app import EXIT_USAGE, cli, fail
from ._embedded import INSTALL, embedded_model
from ._settings import load_settings

__all__ = ["LOCAL_SERVERS", "Probe", "doctor", "probe", "tool_support"]

LOCAL_SERVERS: dict[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "llamacpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
}
"""The local servers probed by default, at their usual ports (the openai plugin's profiles override)."""


@dataclass
class Probe:
    """What one endpoint answered."""

    provider: str
    url: str
    reachable: bool = False
    status: int | None = None
    models: list[str] = field(default_factory=list)
    error: str | None = None


async def probe(provider: str, url: str, seconds: float, api_key: str | None = None) -> Probe:
    """``GET {url}/models`` with a short timeout; never raises."""
    import httpx

    result = Probe(provider, url)
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=seconds) as client:
            response = await client.get(url.rstrip("/") + "/models", headers=headers)
    except httpx.HTTPError as exc:
        result.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return result
    result.reachable, result.status = True, response.status_code
    if response.status_code != 200:
        result.error = f"HTTP {response.status_code} from /models"
        return result
    try:
        data = response.json().get("data", [])
        result.models = [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
    except (ValueError, AttributeError):
        result.error = "the /models answer is not the OpenAI list format"
    return result


def _profiles() -> dict[str, Any] | None:
    try:
        from openagent_openai import PROFILES
    except ImportError:
        return None
    return dict(PROFILES)


def tool_support(provider: str, profiles: dict[str, Any] | None) -> str:
    """Tool calling as the provider's profile describes it."""
    if profiles is None:
        return 'unknown (pip install "openagent[openai]" for the provider profiles)'
    profile = profiles.get(provider)
    if profile is None:
        return "unknown (no profile)"
    if not profile.supports_tools:
        return "no"
    if profile.tool_call_protocol == "text":
        return "yes, through prompted <tool_call> tags"
    return "yes, native" + ("" if profile.supports_parallel_tool_calls else " (one call per turn)")


def _targets(settings: Any, urls: tuple[str, ...], profiles: dict[str, Any] | None) -> list[tuple[str, str]]:
    targets = {
        name: (profiles[name].base_url if profiles and name in profiles else url)
        for name, url in LOCAL_SERVERS.items()
    }
    model = settings.get("model")
    if model and ":" in model:
        name = model.partition(":")[0]
        url = settings.get("base_url") or (profiles[name].base_url if profiles and name in profiles else None)
        if url:
            targets[f"{name} (configured)"] = url
    pairs = list(targets.items())
    pairs += [(f"--url {i + 1}", url) for i, url in enumerate(urls)]
    return pairs


async def _probe_all(targets: list[tuple[str, str]], seconds: float, api_key: str | None) -> list[Probe]:
    results: list[Probe | None] = [None] * len(targets)

    async def one(index: int, name: str, url: str) -> None:
        results[index] = await probe(name, url, seconds, api_key if "configured" in name else None)

    async with anyio.create_task_group() as group:
        for index, (name, url) in enumerate(targets):
            group.start_soon(one, index, name, url)
    return [r for r in results if r is not None]


def _key_step(name: str, settings: Any, profiles: dict[str, Any] | None) -> str | None:
    profile = (profiles or {}).get(name)
    if profile is None or not profile.requires_api_key or not profile.api_key_env:
        return None
    if settings.get("api_key") or os.environ.get("OPENAGENT_API_KEY") or os.environ.get(profile.api_key_env):
        return None
    return f"{name} needs an API key: export {profile.api_key_env}=… (or api_key in the settings)"


def _next_steps(
    results: list[Probe],
    settings: Any,
    providers: list[str],
    profiles: dict[str, Any] | None = None,
    embedded: str | None = None,
) -> list[str]:
    steps = []
    model = settings.get("model")
    up = [r for r in results if r.reachable and r.models]
    if model:
        name = model.partition(":")[0]
        if key_step := _key_step(name, settings, profiles):
            steps.append(key_step)
        if name not in providers:
            steps.append(
                f'the configured model {model!r} needs the {name!r} provider: pip install "openagent[openai]"'
            )
        configured = [r for r in results if r.provider.startswith(name) and "configured" in r.provider]
        if configured and not configured[0].reachable:
            steps.append(
                f"the configured endpoint {configured[0].url} does not answer: start it or fix base_url"
            )
    if not up and not model and embedded:
        steps.append(
            "no model server answered; the offline model is installed: openagent run 'Hello' uses "
            f"{embedded} (llama.cpp on this machine, no server to start)"
        )
    elif not up:
        offline = (
            f"use the offline model ({embedded})"
            if embedded
            else f"answer offline on this machine: {INSTALL}, then openagent run 'Hello'"
        )
        steps.append(
            "no model server answered: start one (ollama serve && ollama pull qwen3; or llama-server -m "
            f"model.gguf), {offline}, or use a hosted model: export OPENAI_API_KEY=… and --model "
            "openai:gpt-4.1-mini"
        )
    elif not model:
        first = up[0]
        name = first.provider.split(" ")[0] if not first.provider.startswith("--url") else "openai-compatible"
        steps.append(f"try: openagent run --model {name}:{first.models[0]} 'Hello'")
        steps.append('or set it once: model = "…" in .openagent/settings.toml, or export OPENAGENT_MODEL')
    return steps


@cli.command()
@click.option("--url", "urls", multiple=True, help="Also probe this OpenAI-compatible base URL; repeatable.")
@click.option("--timeout", type=float, default=1.5, show_default=True, help="Seconds per probe.")
def doctor(urls: tuple[str, ...], timeout: float) -> None:
    """Probe local model servers and the configured provider; suggest what to do next."""
    from rich.console import Console

    from openagent.plugins import registry

    try:
        settings = load_settings({}, Path.cwd())
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    profiles = _profiles()
    providers = sorted(registry().providers)
    api_key = settings.get("api_key") or os.environ.get("OPENAGENT_API_KEY")
    results = anyio.run(_probe_all, _targets(settings, urls, profiles), timeout, api_key)
    console = Console(highlight=False)
    console.print(f"providers installed: {', '.join(providers) or 'none'}", markup=False)
    console.print(f"model: {settings.get('model') or '(not set)'}", markup=False)
    for r in results:
        console.print(_line(r, profiles), markup=False, soft_wrap=True)
    embedded = embedded_model()
    if embedded:
        console.print(f"✓ {'local':<12} {embedded} runs offline here (llama.cpp, xllamacpp)", markup=False)
    for step in _next_steps(results, settings, providers, profiles, embedded):
        console.print(f"• {step}", markup=False, soft_wrap=True)


def _line(r: Probe, profiles: dict[str, Any] | None) -> str:
    if not r.reachable:
        why = "not running (connection refused)" if r.error and "ConnectError" in r.error else r.error
        return f"✗ {r.provider:<12} {r.url}  {why}"
    models = ", ".join(r.models[:5]) + (f" (+{len(r.models) - 5} more)" if len(r.models) > 5 else "")
    listed = f"models: {models}" if models else (r.error or "no models listed")
    tools = tool_support(r.provider.split(" ")[0], profiles)
    return f"✓ {r.provider:<12} {r.url}  {listed} · tool calling: {tools}"
