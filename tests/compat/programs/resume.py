"""Resume a session by id, then fork it, from the sessions guide."""

import anyio

from openagent.compat.claude import ClaudeAgentOptions, ResultMessage, SystemMessage, query


async def ask(prompt: str, options: ClaudeAgentOptions) -> str:
    session_id = ""
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            session_id = message.data["session_id"]
        elif isinstance(message, ResultMessage):
            print(f"{prompt!r} -> {message.result!r} in session {message.session_id == session_id}")
    return session_id


async def main() -> list[str]:
    first = await ask("Remember the number 42.", ClaudeAgentOptions())
    resumed = await ask("What number did I give you?", ClaudeAgentOptions(resume=first))
    forked = await ask("And doubled?", ClaudeAgentOptions(resume=first, fork_session=True))
    return [first, resumed, forked]


if __name__ == "__main__":
    anyio.run(main)
