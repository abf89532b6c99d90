"""The ``cold`` scenario: one prompt from process start — to the first event, and to the process's exit.

Each client is a process of its own started by the suite, answering one prompt against the scripted server
(a short streamed text answer, no tools). The suite times, from just before it starts the process, the first
byte the process writes to stdout (each client writes the first text delta as soon as it has it) and the
process's exit. Clients run interleaved, round after round, so a slow moment of the machine hits all of them;
the medians are reported, with each one's ratio to the floor.

``python benchmarks/cold.py CLIENT URL`` runs one client (the suite does this); ``URL`` is the server's
``…/v1`` root. The clients:

- ``floor``: a minimal httpx script: one streamed POST, ``json.loads`` per ``data:`` line;
- ``openagent``: ``openagent.query()`` (the library, default options, ``include_partial_messages``), with the
  plugins of the README's install (``OPENAGENT_PLUGINS=openai,cli``: core, openai, cli);
- ``openagent-cli``: ``openagent run -m openai-compatible:cold --base-url URL PROMPT`` (the command), the same
  plugins;
- ``openagent-cli-all``: the command with every plugin of the repository installed and loaded (tools, MCP,
  tracing, the stores, anthropic, local: what each registers at start-up is paid here);
- ``openai``: the raw ``openai`` client, ``chat.completions.create(stream=True)``;
- ``openai-agents``: ``Runner.run_streamed`` with ``OpenAIChatCompletionsModel``, tracing off;
- ``pydantic-ai``: ``Agent.run_stream`` with ``OpenAIChatModel``;
- ``claude-agent-sdk``: ``claude_agent_sdk.query()``; its bundled CLI talks to the server's Anthropic
  messages side through ``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

import sys

MODEL = "cold"
PROMPT = "Say hello."
ANSWER = ["Hello", ", ", "how ", "can ", "I ", "help?"]
CLIENTS = [
    "floor", "openagent", "openagent-cli", "openagent-cli-all", "openai", "openai-agents", "pydantic-ai",
    "claude-agent-sdk",
]  # fmt: skip
README_PLUGINS = "openai,cli"
"""``OPENAGENT_PLUGINS`` for the clients that stand for the README's install."""


def _first(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def floor(url: str) -> None:
    import json

    import httpx

    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True}
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=60) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices") or ():
                    if text := (choice.get("delta") or {}).get("content"):
                        _first(text)


def openagent(url: str) -> None:
    import anyio

    from openagent import AgentOptions, StreamEvent, query

    async def main() -> None:
        options = AgentOptions(
            model=f"openai-compatible:{MODEL}", base_url=url, include_partial_messages=True
        )
        async for message in query(prompt=PROMPT, options=options):
            if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta":
                _first(message.event["delta"].get("text", ""))

    anyio.run(main)


def openai(url: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": PROMPT}], stream=True
    )
    for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                _first(choice.delta.content)


def openai_agents(url: str) -> None:
    import asyncio

    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    agent = Agent(name="cold", model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))

    async def main() -> None:
        result = Runner.run_streamed(agent, input=PROMPT)
        async for event in result.stream_events():
            if (
                event.type == "raw_response_event"
                and getattr(event.data, "type", "") == "response.output_text.delta"
            ):
                _first(event.data.delta)

    asyncio.run(main())


def pydantic_ai(url: str) -> None:
    import asyncio

    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=url, api_key="sk-bench")))

    async def main() -> None:
        async with agent.run_stream(PROMPT) as result:
            async for text in result.stream_text(delta=True, debounce_by=None):
                _first(text)

    asyncio.run(main())


def claude_agent_sdk(url: str) -> None:
    import os

    import anyio
    from claude_agent_sdk import ClaudeAgentOptions, StreamEvent, query

    env = {
        "ANTHROPIC_BASE_URL": url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "sk-bench",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    os.environ.update(env)
    options = ClaudeAgentOptions(model=MODEL, include_partial_messages=True, max_turns=1, env=env)

    async def main() -> None:
        async for message in query(prompt=PROMPT, options=options):
            event = getattr(message, "event", None) if isinstance(message, StreamEvent) else None
            if event and event.get("type") == "content_block_delta":
                _first(event["delta"].get("text", ""))

    anyio.run(main)


RUNNERS = {
    "floor": floor,
    "openagent": openagent,
    "openai": openai,
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "claude-agent-sdk": claude_agent_sdk,
}


if __name__ == "__main__":
    RUNNERS[sys.argv[1]](sys.argv[2])
