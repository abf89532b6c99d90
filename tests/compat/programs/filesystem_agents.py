"""Agents defined in .claude/agents/*.md, loaded through setting_sources=["project"]."""

import asyncio
import sys
from pathlib import Path

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    TextBlock,
)


def extract_agents(msg: SystemMessage) -> list[str]:
    agents = msg.data.get("agents", []) if msg.subtype == "init" else []
    return [a if isinstance(a, str) else a.get("name", "") for a in agents]


async def main(project: Path) -> list[str]:
    options = ClaudeAgentOptions(setting_sources=["project"], cwd=project)
    message_types: list[str] = []
    agents_found: list[str] = []
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Say hello in exactly 3 words")
        async for msg in client.receive_response():
            message_types.append(type(msg).__name__)
            if isinstance(msg, SystemMessage) and msg.subtype == "init":
                agents_found = extract_agents(msg)
                print(f"Init message received. Agents loaded: {agents_found}")
            elif isinstance(msg, AssistantMessage):
                for block in msg.content:
                    if isinstance(block, TextBlock):
                        print(f"Assistant: {block.text}")
            elif isinstance(msg, ResultMessage):
                print(f"Result: subtype={msg.subtype}, cost=${msg.total_cost_usd or 0:.4f}")
    print(f"Message types received: {message_types}")
    return agents_found


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
