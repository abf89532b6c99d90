from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest

from openagent._errors import ConfigError, ProviderConnectionError
from openagent._models import ModelRequest, Stop, TextDelta, Usage
from openagent._types import UserMessage
from openagent_local import TEMPLATE_ENV, LocalProvider, ServerSpec, stop_server
from openagent_local._server import ensure_server_sync

pytestmark = pytest.mark.anyio


def _request(prompt: str = "hi") -> ModelRequest:
    return ModelRequest(model="tiny", messages=[UserMessage(content=prompt)])


async def _drain(provider: LocalProvider) -> list[object]:
    return [event async for event in provider.stream(_request())]


def _args(provider: LocalProvider) -> list[str]:
    assert provider.server is not None
    return httpx.get(provider.server.base_url.removesuffix("/v1") + "/args").json()["args"]


async def _close(provider: LocalProvider, root: Path) -> None:
    await provider.aclose()
    if provider.server is not None:
        stop_server(provider.server, root=root)


async def test_the_first_request_starts_the_server_and_events_pass_through(root: Path, model: Path):
    provider = LocalProvider(str(model), root=root)
    assert provider.server is None  # nothing starts before the first request
    try:
        events = await _drain(provider)
        first = provider.server
        await _drain(provider)
        assert provider.server == first  # reused
    finally:
        await _close(provider, root)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert any(isinstance(e, Usage) and e.output_tokens == 3 for e in events)
    assert isinstance(events[-1], Stop) and events[-1].reason == "end_turn"
    assert first is not None and first.model.endswith(model.name)


@pytest.mark.parametrize("how", ["argument", "environment"])
async def test_a_template_shipped_with_llama_cpp_is_found_by_name(
    root: Path, model: Path, how: str, monkeypatch: pytest.MonkeyPatch
):
    if how == "environment":
        monkeypatch.setenv(TEMPLATE_ENV, "tool_use.jinja")
        provider = LocalProvider(str(model), root=root)
    else:
        provider = LocalProvider(str(model), root=root, chat_template="tool_use.jinja")
    try:
        await _drain(provider)
        args = _args(provider)
    finally:
        await _close(provider, root)
    shipped = root / "llama-server" / "11434.0.0" / "templates" / "tool_use.jinja"
    assert args[args.index("--chat-template-file") + 1] == str(shipped)


async def test_a_template_given_as_a_path_is_used(root: Path, model: Path, tmp_path: Path):
    template = tmp_path / "mine.jinja"
    template.write_text("{{ messages }}")
    provider = LocalProvider(str(model), root=root, chat_template=template, ctx_size=1024)
    try:
        await _drain(provider)
        args = _args(provider)
    finally:
        await _close(provider, root)
    assert args[args.index("--chat-template-file") + 1] == str(template)
    assert args[args.index("-c") + 1] == "1024"


async def test_an_unknown_template_is_a_config_error_naming_the_shipped_ones(root: Path, model: Path):
    provider = LocalProvider(str(model), root=root, chat_template="nope.jinja")
    with pytest.raises(ConfigError, match=r"no chat template 'nope.jinja'.*\(tool_use.jinja\)"):
        await _drain(provider)
    assert provider.server is None


async def test_an_unknown_model_fails_before_anything_starts(root: Path):
    with pytest.raises(ConfigError, match="no installed model package provides 'no-such-model'"):
        LocalProvider("no-such-model", root=root)


async def test_a_server_killed_mid_stream_is_a_connection_error_and_the_next_request_restarts_it(
    root: Path, model: Path
):
    provider = LocalProvider(str(model), root=root)
    try:
        seen = []
        with pytest.raises(ProviderConnectionError) as info:
            async for event in provider.stream(_request("answer slowly")):
                seen.append(event)
                if len(seen) == 2:
                    assert provider.server is not None
                    killed = provider.server.pid
                    os.kill(killed, signal.SIGKILL)
        assert info.value.provider == "local"
        assert f"pid {killed}" in str(info.value) and "died during the request" in str(info.value)
        assert isinstance(info.value.__cause__, ProviderConnectionError)  # the wire format's own error, kept

        events = await _drain(provider)
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
        assert provider.server is not None and provider.server.pid != killed
    finally:
        await _close(provider, root)


async def test_base_url_uses_a_server_someone_else_runs(root: Path, model: Path):
    server = ensure_server_sync(ServerSpec(model=model, alias="tiny"), root=root)
    provider = LocalProvider("anything", base_url=server.base_url)
    try:
        events = await _drain(provider)
    finally:
        await provider.aclose()
        stop_server(server, root=root)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert provider.server is None
