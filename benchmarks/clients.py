"""One benchmark client per process: N conversations against the scripted server, then one JSON line.

``python benchmarks/clients.py --client floor --url http://127.0.0.1:PORT/v1 --conversations 40
--concurrency 1`` → ``{"client", "wall_s", "cpu_s", "maxrss_kb", "errors", "ttfe_ms", "cold_ttfe_ms", …}``.

``floor-anthropic``, ``anthropic`` and ``openagent-anthropic`` run the same conversation over the Anthropic
messages wire (``POST /v1/messages``) instead of chat completions; ``floor-responses``, ``openai-responses``
(the raw client's ``responses.stream``) and ``openagent-responses`` over the OpenAI Responses API
(``POST /v1/responses``).

A conversation is the scenario of the issue: the model asks for the ``lookup`` tool (its arguments streamed in
fragments), the client runs it and sends the result back, then the model streams a ``deltas``-piece answer.
Each client consumes the stream incrementally and the final text is checked, so an SDK that drops or
mangles a delta counts an error. Only the measured conversations count in ``cpu_s``/``wall_s``: imports
and two warm-up conversations come before (``cold_ttfe_ms`` covers the cold start instead).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # before any heavy import: the cold time-to-first-event starts here

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

PROMPT = "What is the weather in Paris for the next three days?"
TOOL_RESULT = "Paris: sunny, 21 degrees, for 3 days"
TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look up the weather forecast of a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string"},
                "days": {"type": "integer"},
            },
            "required": ["city", "units", "days"],
        },
    },
}

Conversation = Callable[[Callable[[], None]], Awaitable[str]]
"""``conversation(first_event) -> final text``; ``first_event()`` is called at the first model event."""


def lookup_impl(city: str, units: str, days: int) -> str:
    assert (city, units, days) == ("Paris", "metric", 3), (city, units, days)
    return TOOL_RESULT


# --- the floor: httpx + json.loads per SSE line, a hand-written loop -------------------------------------


def _floor_chunk(chunk: dict[str, Any], text: list[str], calls: dict[int, dict[str, Any]]) -> str | None:
    finish = None
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content"):
            text.append(delta["content"])
        for fragment in delta.get("tool_calls") or ():
            slot = calls.setdefault(fragment["index"], {"id": "", "name": "", "arguments": []})
            slot["id"] = fragment.get("id") or slot["id"]
            function = fragment.get("function") or {}
            slot["name"] = function.get("name") or slot["name"]
            slot["arguments"].append(function.get("arguments") or "")
        finish = choice.get("finish_reason") or finish
    return finish


def floor_http(url: str, headers: dict[str, str]) -> Any:
    """The floors' HTTP client: plain httpx, one connection pool for every conversation."""
    import httpx

    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
    return httpx.AsyncClient(base_url=url, timeout=120, limits=limits, headers=headers)


async def make_floor(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    http = floor_http(url, {"authorization": "Bearer sk-bench"})

    async def one_request(messages: list[dict[str, Any]], first_event: Callable[[], None] | None) -> tuple:
        body = {"model": model, "messages": messages, "tools": [TOOL_SCHEMA], "stream": True}
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish = None
        async with http.stream("POST", "/chat/completions", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if first_event is not None:
                    first_event()
                    first_event = None
                finish = _floor_chunk(chunk, text, calls) or finish
        return "".join(text), calls, finish

    async def conversation(first_event: Callable[[], None]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        for _ in range(10):
            text, calls, _finish = await one_request(messages, first_event)
            first_event = None  # type: ignore[assignment]
            if not calls:
                return text
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                }
                for c in calls.values()
            ]
            messages.append({"role": "assistant", "content": text or None, "tool_calls": tool_calls})
            for call in tool_calls:
                result = lookup_impl(**json.loads(call["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        raise RuntimeError("too many turns")

    return conversation, http.aclose


# --- the raw openai client, hand-written loop -------------------------------------------------------------


async def make_openai(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=120)

    async def conversation(first_event: Callable[[], None]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        notify: Callable[[], None] | None = first_event
        for _ in range(10):
            stream = await client.chat.completions.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]
                tools=[TOOL_SCHEMA],  # type: ignore[list-item]
                stream=True,
            )
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async for chunk in stream:
                if notify is not None:
                    notify()
                    notify = None
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                    for fragment in delta.tool_calls or ():
                        slot = calls.setdefault(fragment.index, {"id": "", "name": "", "arguments": []})
                        slot["id"] = fragment.id or slot["id"]
                        if fragment.function is not None:
                            slot["name"] = fragment.function.name or slot["name"]
                            slot["arguments"].append(fragment.function.arguments or "")
            if not calls:
                return "".join(text)
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                }
                for c in calls.values()
            ]
            messages.append({"role": "assistant", "content": "".join(text) or None, "tool_calls": tool_calls})
            for call in tool_calls:
                result = lookup_impl(**json.loads(call["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        raise RuntimeError("too many turns")

    return conversation, client.close


# --- openai-agents: Runner.run_streamed -------------------------------------------------------------------


async def make_agents(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # no trace export to api.openai.com from a benchmark
    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=120)

    @function_tool
    def lookup(city: str, units: str, days: int) -> str:
        """Look up the weather forecast of a city."""
        return lookup_impl(city, units, days)

    agent = Agent(
        name="bench",
        instructions="Answer weather questions.",
        model=OpenAIChatCompletionsModel(model=model, openai_client=client),
        tools=[lookup],
    )

    async def conversation(first_event: Callable[[], None]) -> str:
        result = Runner.run_streamed(agent, input=PROMPT)
        notify: Callable[[], None] | None = first_event
        async for event in result.stream_events():
            if notify is not None and event.type == "raw_response_event":
                notify()
                notify = None
        return str(result.final_output)

    return conversation, client.close


# --- pydantic-ai: run_stream ------------------------------------------------------------------------------


async def make_pydantic_ai(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=url, api_key="sk-bench")
    agent = Agent(OpenAIChatModel(model, provider=provider), instructions="Answer weather questions.")

    @agent.tool_plain
    def lookup(city: str, units: str, days: int) -> str:
        """Look up the weather forecast of a city."""
        return lookup_impl(city, units, days)

    async def conversation(first_event: Callable[[], None]) -> str:
        notify: Callable[[], None] | None = first_event
        parts: list[str] = []
        async with agent.run_stream(PROMPT) as result:
            async for delta in result.stream_text(delta=True, debounce_by=None):
                if notify is not None:
                    notify()
                    notify = None
                parts.append(delta)
        return "".join(parts)

    async def close() -> None:
        await provider.client.close()

    return conversation, close


# --- openagent: query() with the openai plugin ------------------------------------------------------------


def _make_openagent(
    partial: bool, provider: str = "openai-compatible"
) -> Callable[[str, str], Awaitable[tuple[Conversation, Callable[[], Awaitable[None]]]]]:
    async def make(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
        from openagent import AgentOptions, query, tool
        from openagent.types import AssistantMessage, ResultMessage, StreamEvent

        @tool
        def lookup(city: str, units: str, days: int) -> str:
            """Look up the weather forecast of a city."""
            return lookup_impl(city, units, days)

        options = AgentOptions(
            model=f"{provider}:{model}",
            base_url=_anthropic_root(url) if provider == "anthropic" else url,
            api_key="sk-bench",
            tools=[lookup],
            system_prompt="Answer weather questions.",
            include_partial_messages=partial,
        )
        first_kind = StreamEvent if partial else AssistantMessage

        async def conversation(first_event: Callable[[], None]) -> str:
            notify: Callable[[], None] | None = first_event
            result = None
            async for message in query(prompt=PROMPT, options=options):
                if notify is not None and isinstance(message, first_kind):
                    notify()
                    notify = None
                if isinstance(message, ResultMessage):
                    if message.is_error:
                        raise RuntimeError(f"openagent run failed: {message.subtype}: {message.result}")
                    result = message.result
            return result or ""

        async def close() -> None:
            return None

        return conversation, close

    return make


# --- the Anthropic messages wire: floor, raw anthropic client, openagent's anthropic plugin -----------------

ANTHROPIC_TOOL = {
    "name": "lookup",
    "description": TOOL_SCHEMA["function"]["description"],  # type: ignore[index]
    "input_schema": TOOL_SCHEMA["function"]["parameters"],  # type: ignore[index]
}


def _anthropic_root(url: str) -> str:
    """Anthropic clients append ``/v1/messages`` themselves: the server's root URL."""
    return url.rstrip("/").removesuffix("/v1")


def _anthropic_content(
    blocks: dict[int, dict[str, Any]], parts: dict[int, list[str]]
) -> list[dict[str, Any]]:
    """The assistant's content blocks once their streamed pieces are joined."""
    for index, block in blocks.items():
        if block["type"] == "text":
            block["text"] = "".join(parts[index])
        elif block["type"] == "tool_use":
            block["input"] = json.loads("".join(parts[index]) or "{}")
    return list(blocks.values())


def _anthropic_turn(
    assistant: list[dict[str, Any]], calls: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> None:
    """Append the assistant turn and the tool results that answer its calls."""
    messages.append({"role": "assistant", "content": assistant})
    results = [
        {"type": "tool_result", "tool_use_id": c["id"], "content": lookup_impl(**c["input"])} for c in calls
    ]
    messages.append({"role": "user", "content": results})


async def make_floor_anthropic(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    http = floor_http(_anthropic_root(url), {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"})

    async def one_request(messages: list[dict[str, Any]], first_event: Callable[[], None] | None) -> tuple:
        body = {
            "model": model,
            "max_tokens": 4096,
            "messages": messages,
            "tools": [ANTHROPIC_TOOL],
            "stream": True,
        }
        blocks: dict[int, dict[str, Any]] = {}
        parts: dict[int, list[str]] = {}
        async with http.stream("POST", "/v1/messages", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])
                if first_event is not None:
                    first_event()
                    first_event = None
                kind = event["type"]
                if kind == "content_block_delta":
                    delta = event["delta"]
                    piece = delta["text"] if delta["type"] == "text_delta" else delta.get("partial_json", "")
                    parts[event["index"]].append(piece)
                elif kind == "content_block_start":
                    blocks[event["index"]] = dict(event["content_block"])
                    parts[event["index"]] = []
                elif kind == "error":
                    raise RuntimeError(event["error"])
        return _anthropic_content(blocks, parts)

    async def conversation(first_event: Callable[[], None]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        notify: Callable[[], None] | None = first_event
        for _ in range(10):
            content = await one_request(messages, notify)
            notify = None
            calls = [b for b in content if b["type"] == "tool_use"]
            if not calls:
                return "".join(b["text"] for b in content if b["type"] == "text")
            _anthropic_turn(content, calls, messages)
        raise RuntimeError("too many turns")

    return conversation, http.aclose


async def make_anthropic(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(base_url=_anthropic_root(url), api_key="sk-bench", max_retries=0, timeout=120)

    async def conversation(first_event: Callable[[], None]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        notify: Callable[[], None] | None = first_event
        for _ in range(10):
            stream = await client.messages.create(
                model=model,
                max_tokens=4096,
                messages=messages,  # type: ignore[arg-type]
                tools=[ANTHROPIC_TOOL],  # type: ignore[list-item]
                stream=True,
            )
            blocks: dict[int, dict[str, Any]] = {}
            parts: dict[int, list[str]] = {}
            async for event in stream:
                if notify is not None:
                    notify()
                    notify = None
                if event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        parts[event.index].append(delta.text)
                    elif delta.type == "input_json_delta":
                        parts[event.index].append(delta.partial_json)
                elif event.type == "content_block_start":
                    blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                    parts[event.index] = []
            content = _anthropic_content(blocks, parts)
            calls = [b for b in content if b["type"] == "tool_use"]
            if not calls:
                return "".join(b["text"] for b in content if b["type"] == "text")
            _anthropic_turn(content, calls, messages)
        raise RuntimeError("too many turns")

    return conversation, client.close


# --- the Responses wire: floor, the raw openai client's responses.stream, openagent's Responses wire -------

RESPONSES_TOOL = {"type": "function", "strict": False, **TOOL_SCHEMA["function"]}  # type: ignore[dict-item]


def _responses_turn(calls: list[dict[str, Any]], items: list[dict[str, Any]]) -> None:
    """Append the model's calls and the tool results that answer them."""
    for call in calls:
        items.append(call)
        result = lookup_impl(**json.loads(call["arguments"]))
        items.append({"type": "function_call_output", "call_id": call["call_id"], "output": result})


async def make_floor_responses(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    http = floor_http(url, {"authorization": "Bearer sk-bench"})

    async def one_request(items: list[dict[str, Any]], first_event: Callable[[], None] | None) -> tuple:
        body = {"model": model, "input": items, "tools": [RESPONSES_TOOL], "stream": True}
        text: list[str] = []
        calls: dict[str, dict[str, Any]] = {}
        async with http.stream("POST", "/responses", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])
                if first_event is not None:
                    first_event()
                    first_event = None
                kind = event["type"]
                if kind == "response.output_text.delta":
                    text.append(event["delta"])
                elif kind == "response.function_call_arguments.delta":
                    calls[event["item_id"]]["parts"].append(event["delta"])
                elif kind == "response.output_item.added" and event["item"]["type"] == "function_call":
                    item = event["item"]
                    calls[item["id"]] = {"call_id": item["call_id"], "name": item["name"], "parts": []}
                elif kind in ("error", "response.failed"):
                    raise RuntimeError(event)
        done = [
            {
                "type": "function_call",
                "call_id": c["call_id"],
                "name": c["name"],
                "arguments": "".join(c["parts"]),
            }
            for c in calls.values()
        ]
        return "".join(text), done

    async def conversation(first_event: Callable[[], None]) -> str:
        items: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        notify: Callable[[], None] | None = first_event
        for _ in range(10):
            text, calls = await one_request(items, notify)
            notify = None
            if not calls:
                return text
            _responses_turn(calls, items)
        raise RuntimeError("too many turns")

    return conversation, http.aclose


async def make_openai_responses(url: str, model: str) -> tuple[Conversation, Callable[[], Awaitable[None]]]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=120)

    async def conversation(first_event: Callable[[], None]) -> str:
        items: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        notify: Callable[[], None] | None = first_event
        for _ in range(10):
            text: list[str] = []
            async with client.responses.stream(
                model=model,
                input=items,  # type: ignore[arg-type]
                tools=[RESPONSES_TOOL],  # type: ignore[list-item]
            ) as stream:
                async for event in stream:
                    if notify is not None:
                        notify()
                        notify = None
                    if event.type == "response.output_text.delta":
                        text.append(event.delta)
                final = await stream.get_final_response()
            calls = [
                {"type": "function_call", "call_id": o.call_id, "name": o.name, "arguments": o.arguments}
                for o in final.output
                if o.type == "function_call"
            ]
            if not calls:
                return "".join(text)
            _responses_turn(calls, items)
        raise RuntimeError("too many turns")

    return conversation, client.close


CLIENTS: dict[str, Callable[[str, str], Awaitable[tuple[Conversation, Callable[[], Awaitable[None]]]]]] = {
    "floor": make_floor,
    "openagent": _make_openagent(partial=False),
    "openagent-partial": _make_openagent(partial=True),
    "openai": make_openai,
    "openai-agents": make_agents,
    "pydantic-ai": make_pydantic_ai,
    "floor-anthropic": make_floor_anthropic,
    "openagent-anthropic": _make_openagent(partial=False, provider="anthropic"),
    "anthropic": make_anthropic,
    "floor-responses": make_floor_responses,
    "openagent-responses": _make_openagent(partial=False, provider="openai-responses"),
    "openai-responses": make_openai_responses,
}


# --- the measurement --------------------------------------------------------------------------------------


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    expected = "".join(f"word{i} " for i in range(args.deltas))
    conversation, close = await CLIENTS[args.client](args.url, args.model)
    ttfe: list[float] = []
    errors: list[str] = []

    async def one(record: bool) -> None:
        start = time.perf_counter()

        def first_event() -> None:
            if record:
                ttfe.append(time.perf_counter() - start)

        try:
            text = await conversation(first_event)
        except Exception as exc:  # a benchmark counts failures instead of stopping at the first
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
            return
        if text != expected:
            errors.append(f"wrong answer: {len(text)} chars, starts {text[:60]!r}")

    cold_start = time.perf_counter()
    cold: list[float] = []
    try:
        cold_text = await conversation(lambda: cold.append(time.perf_counter()))
        cold_ok = cold_text == expected
    except Exception as exc:
        print(f"warm-up failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        cold_ok = False
    cold_ttfe = (cold[0] - T0) * 1000 if cold else None
    del cold_start
    await one(record=False)

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time if args.profile_clock == "cpu" else time.perf_counter)
        profiler.enable()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if args.concurrency <= 1:
        for _ in range(args.conversations):
            await one(record=True)
    else:
        gate = asyncio.Semaphore(args.concurrency)

        async def gated() -> None:
            async with gate:
                await one(record=True)

        await asyncio.gather(*(gated() for _ in range(args.conversations)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    await close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "client": args.client,
        "conversations": args.conversations,
        "concurrency": args.concurrency,
        "deltas": args.deltas,
        "wall_s": wall,
        "cpu_s": cpu,
        "wall_ms_per_conversation": wall * 1000 / args.conversations,
        "cpu_ms_per_conversation": cpu * 1000 / args.conversations,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "ttfe_ms": statistics.median(ttfe) * 1000 if ttfe else None,
        "cold_ttfe_ms": cold_ttfe,
        "warmup_ok": cold_ok,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=sorted(CLIENTS), required=True)
    parser.add_argument("--url", required=True, help="the scripted server's base URL, ending in /v1")
    parser.add_argument("--model", default="bench")
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--deltas", type=int, default=300)
    parser.add_argument("--profile", help="write a cProfile of the measured conversations to this file")
    parser.add_argument("--profile-clock", choices=["cpu", "wall"], default="cpu", help="profile clock")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    result = asyncio.run(measure(args))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
