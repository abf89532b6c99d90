"""Streaming input: an async iterable of user messages, drained with receive_response and a timeout."""

import asyncio

from openagent.compat.claude import AssistantMessage, ClaudeSDKClient, ResultMessage, TextBlock

DRAIN_TIMEOUT = (
    1.0  # the official example waits 30 s for a response that never comes; the server here is fast
)


def display_message(msg: object) -> None:
    if isinstance(msg, AssistantMessage):
        for block in msg.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
    elif isinstance(msg, ResultMessage):
        print("Result ended")


async def create_message_stream():
    for text in [
        "Hello! I have multiple questions.",
        "First, what's the capital of Japan?",
        "Second, what's 15% of 200?",
    ]:
        print(f"User: {text}")
        yield {
            "type": "user",
            "message": {"role": "user", "content": text},
            "parent_tool_use_id": None,
            "session_id": "qa-session",
        }


async def main() -> int:
    results = 0
    async with ClaudeSDKClient() as client:
        await client.query(create_message_stream())
        while True:
            try:
                async with asyncio.timeout(DRAIN_TIMEOUT):
                    async for msg in client.receive_response():
                        display_message(msg)
                        results += isinstance(msg, ResultMessage)
            except (TimeoutError, StopAsyncIteration):
                break
    return results


if __name__ == "__main__":
    asyncio.run(main())
