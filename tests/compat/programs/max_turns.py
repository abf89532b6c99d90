"""A turn limit stops an agent that keeps calling tools; the result says so."""

from typing import Any

import anyio

from openagent.compat.claude import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, query, tool


@tool("search", "Search the web", {"q": str})
async def search(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "nothing found"}]}


async def main() -> ResultMessage | None:
    options = ClaudeAgentOptions(
        mcp_servers={"web": create_sdk_mcp_server("web", tools=[search])}, max_turns=2
    )
    async for message in query(prompt="Find it, however long it takes.", options=options):
        if isinstance(message, ResultMessage):
            print(f"stopped: {message.subtype} after {message.num_turns} turns")
            return message
    return None


if __name__ == "__main__":
    anyio.run(main)
