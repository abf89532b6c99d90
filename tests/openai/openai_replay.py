"""Replaying event streams through the real provider over an httpx mock transport, at several chunkings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2

from openagent_openai import PROFILES, ChatCompletionsProvider, OpenAIProfile

__all__ = ["SPLITS", "Replay", "chunked", "sse"]


def sse(*chunks: dict[str, Any] | str, done: bool = True) -> bytes:
    """An event-stream body: each chunk a ``data:`` event (dicts as JSON), then ``[DONE]``."""
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return "".join([*lines, "data: [DONE]\n\n" if done else ""]).encode()


def natural(body: bytes) -> list[bytes]:
    """The chunking a server produces: one network chunk per event."""
    parts = body.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def fixed(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


SPLITS: list[Any] = ["natural", 1, 3, 17]
"""How every stream is replayed: at its natural chunking and at small fixed byte splits."""


def chunked(body: bytes, split: Any) -> list[bytes]:
    return natural(body) if split == "natural" else fixed(body, split)


class Replay:
    """Builds providers whose HTTP exchanges are answered by a handler, recording the requests sent."""

    def __init__(self) -> None:
        self.requests: list[httpx2.Request] = []

    def provider(
        self,
        body: bytes = b"",
        *,
        split: Any = "natural",
        status: int = 200,
        headers: dict[str, str] | None = None,
        profile: OpenAIProfile | str = "llamacpp",
        handler: Callable[[httpx2.Request], httpx2.Response] | None = None,
        wire: type[Any] = ChatCompletionsProvider,
    ) -> Any:
        headers = {"content-type": "text/event-stream", **(headers or {})}

        async def stream() -> AsyncIterator[bytes]:
            for part in chunked(body, split):
                yield part

        def answer(request: httpx2.Request) -> httpx2.Response:
            self.requests.append(request)
            if handler is not None:
                return handler(request)
            return httpx2.Response(status, headers=headers, content=stream())

        client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        profile = PROFILES[profile] if isinstance(profile, str) else profile
        return wire("test-model", profile=profile, http_client=client)

    def sent(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)
