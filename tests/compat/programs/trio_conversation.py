"""A multi-turn conversation under trio (the SDK's streaming_mode_trio example)."""

import trio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    TextBlock,
    UserMessage,
)


def display_message(msg: object) -> None:
    if isinstance(msg, UserMessage):
        for block in msg.content:
            if isinstance(block, TextBlock):
                print(f"User: {block.text}")
    elif isinstance(msg, AssistantMessage):
        for block in msg.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
    elif isinstance(msg, SystemMessage):
        pass
    elif isinstance(msg, ResultMessage):
        print("Result ended")


async def multi_turn_conversation() -> None:
    async with ClaudeSDKClient(options=ClaudeAgentOptions(model="claude-sonnet-4-5")) as client:
        for prompt in [
            "What's 15 + 27?",
            "Now multiply that result by 2",
            "Divide that by 7 and round to 2 decimal places",
        ]:
            print(f"User: {prompt}")
            await client.query(prompt)
            async for message in client.receive_response():
                display_message(message)
        print("Conversation complete!")


if __name__ == "__main__":
    trio.run(multi_turn_conversation)
