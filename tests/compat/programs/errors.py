"""Error handling as the Claude Agent SDK documents it."""

import anyio

from openagent.compat.claude import ClaudeSDKError, CLINotFoundError, ProcessError, query


async def main() -> str:
    try:
        async for _ in query(prompt="Hello"):
            pass
    except CLINotFoundError:
        return "not configured"
    except ProcessError as exc:
        return f"process failed: {type(exc).__name__} (caused by {type(exc.__cause__).__name__})"
    except ClaudeSDKError as exc:
        return f"sdk error: {exc}"
    return "ok"


if __name__ == "__main__":
    print(anyio.run(main))
