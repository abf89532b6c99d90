"""Interrupt a long answer, then ask something else in the same conversation."""

import anyio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    StreamEvent,
)


async def main() -> list[ResultMessage]:
    results: list[ResultMessage] = []
    options = ClaudeAgentOptions(include_partial_messages=True)
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Count to one thousand, slowly.")
        async for message in client.receive_response():
            if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta":
                await client.interrupt()  # enough: stop as soon as the first words arrive
            elif isinstance(message, AssistantMessage):
                print(f"partial answer kept: {bool(message.content)}")
            elif isinstance(message, ResultMessage):
                results.append(message)
                print(f"interrupted: {message.subtype}")
        await client.query("Just say hi.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                results.append(message)
                print(f"then: {message.result}")
    return results


if __name__ == "__main__":
    anyio.run(main)
