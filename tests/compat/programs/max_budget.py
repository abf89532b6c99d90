"""max_budget_usd with a priced model: the run stops once the spend passes the budget."""

import anyio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultError,
    ResultMessage,
    TextBlock,
    query,
)


async def run(prompt: str, budget: float | None) -> None:
    options = ClaudeAgentOptions(max_budget_usd=budget, allowed_tools=["Read"])
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(f"Claude: {block.text}")
            elif isinstance(message, ResultMessage):
                if message.total_cost_usd > 0:
                    print(f"Total cost: ${message.total_cost_usd:.4f}")
                print(f"Status: {message.subtype}")
    except ResultError as error:
        print(f"Run ended with an error result: {error.subtype}")


async def main() -> None:
    await run("What is 2 + 2?", None)
    await run("What is 2 + 2?", 0.10)
    await run("Read README.md and summarize it", 0.0001)


if __name__ == "__main__":
    anyio.run(main)
