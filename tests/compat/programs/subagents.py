"""A code reviewer subagent the main agent delegates to through the Task tool."""

import anyio

from openagent.compat.claude import AgentDefinition, AssistantMessage, ClaudeAgentOptions, TextBlock, query


async def main() -> None:
    options = ClaudeAgentOptions(
        forward_subagent_text=True,  # without it only the subagent's tool calls and results are forwarded
        agents={
            "code-reviewer": AgentDefinition(
                description="Reviews code for bugs",
                prompt="You are a careful code reviewer.",
                tools=["Read"],
                model="sonnet",
                maxTurns=3,
            )
        },
    )
    async for message in query(prompt="Review utils.py with the code-reviewer agent.", options=options):
        if isinstance(message, AssistantMessage):
            who = "subagent" if message.parent_tool_use_id else "main"
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"{who}: {block.text}")


if __name__ == "__main__":
    anyio.run(main)
