"""Streaming text as it is generated with include_partial_messages."""

import anyio

from openagent.compat.claude import AssistantMessage, ClaudeAgentOptions, StreamEvent, query


async def main() -> None:
    options = ClaudeAgentOptions(include_partial_messages=True)
    async for message in query(prompt="Write a haiku about rivers.", options=options):
        if isinstance(message, StreamEvent):
            event = message.event
            if event.get("type") == "content_block_delta" and event["delta"].get("type") == "text_delta":
                print(event["delta"]["text"], end="|", flush=True)
        elif isinstance(message, AssistantMessage):
            print()
            print(f"complete: {message.content[0].text}")


if __name__ == "__main__":
    anyio.run(main)
