"""The Claude Agent SDK quick start: one query, print the answer and the cost."""

import anyio

from openagent.compat.claude import AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock, query


async def main() -> None:
    options = ClaudeAgentOptions(system_prompt="You are a concise assistant.", max_turns=1)
    async for message in query(prompt="What is 2 + 2?", options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"Claude: {block.text}")
        elif isinstance(message, ResultMessage):
            print(f"Done: {message.subtype} in {message.num_turns} turn(s)")


if __name__ == "__main__":
    anyio.run(main)
