"""include_partial_messages: every raw stream event, as the SDK's partial-messages example prints them."""

import anyio

from openagent.compat.claude import ClaudeSDKClient
from openagent.compat.claude.types import AssistantMessage, ClaudeAgentOptions, ResultMessage, StreamEvent


async def main() -> None:
    options = ClaudeAgentOptions(
        include_partial_messages=True, max_turns=2, env={"MAX_THINKING_TOKENS": "8000"}
    )
    client = ClaudeSDKClient(options)
    try:
        await client.connect()
        await client.query("Think of three jokes, then tell one")
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                event = message.event
                detail = (
                    event.get("delta", {}).get("type") or event.get("content_block", {}).get("type") or ""
                )
                print(event["type"], detail)
                if event["type"] == "message_delta":
                    print(
                        "  stop:",
                        event["delta"]["stop_reason"],
                        "output tokens:",
                        event["usage"]["output_tokens"],
                    )
            elif isinstance(message, AssistantMessage):
                print("assistant:", [type(b).__name__ for b in message.content])
            elif isinstance(message, ResultMessage):
                print("result:", message.subtype)
    finally:
        await client.disconnect()


if __name__ == "__main__":
    anyio.run(main)
