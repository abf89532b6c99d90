"""A conversation over several prompts with ClaudeSDKClient."""

import anyio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
)


async def main() -> None:
    async with ClaudeSDKClient(
        options=ClaudeAgentOptions(system_prompt="Remember what you are told.")
    ) as client:
        for prompt in ("My name is Ada.", "What is my name?"):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
                    print(f"Claude: {text}")
                elif isinstance(message, ResultMessage):
                    print(f"turn done: {message.subtype}")


if __name__ == "__main__":
    anyio.run(main)
