"""setting_sources: which .claude/ settings load, read from the init message as the SDK's example does."""

import asyncio
import sys
from pathlib import Path

from openagent.compat.claude import ClaudeAgentOptions, ClaudeSDKClient, SystemMessage


def extract_slash_commands(msg: SystemMessage) -> list[str]:
    return msg.data.get("slash_commands", []) if msg.subtype == "init" else []


async def commands_with(project: Path, **options: object) -> list[str]:
    async with ClaudeSDKClient(options=ClaudeAgentOptions(cwd=project, **options)) as client:
        await client.query("What is 2 + 2?")
        async for msg in client.receive_response():
            if isinstance(msg, SystemMessage) and msg.subtype == "init":
                return extract_slash_commands(msg)
    return []


async def main(project: Path) -> None:
    for label, options in [
        ("default", {}),
        ("disable_all", {"setting_sources": []}),
        ("user_only", {"setting_sources": ["user"]}),
        ("project_and_user", {"setting_sources": ["user", "project"]}),
    ]:
        commands = await commands_with(project, **options)
        print(f"{label}: commit {'available' if 'commit' in commands else 'NOT available'} {commands}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
