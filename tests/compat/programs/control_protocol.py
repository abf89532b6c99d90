"""Server info, context usage and file checkpoints of a live client (the SDK's control-protocol calls)."""

import anyio

from openagent.compat.claude import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, UserMessage


async def main() -> None:
    options = ClaudeAgentOptions(enable_file_checkpointing=True, allowed_tools=["Write"], cwd=".")
    async with ClaudeSDKClient(options) as client:
        info = await client.get_server_info()
        print(
            f"Available commands: {len(info.get('commands', []))}, output style: {info.get('output_style')}"
        )
        checkpoint = None
        prompt = {
            "type": "user",
            "message": {"role": "user", "content": "Write notes.txt"},
            "uuid": "prompt-1",
        }

        async def prompts():
            yield prompt

        await client.query(prompts())
        async for message in client.receive_response():
            if isinstance(message, UserMessage) and message.uuid and checkpoint is None:
                checkpoint = message.uuid
            if isinstance(message, ResultMessage):
                print(f"result: {message.subtype}")
        print(f"notes.txt: {await anyio.Path('notes.txt').read_text()!r}")
        usage = await client.get_context_usage()
        print(
            f"context: {usage['totalTokens']} tokens, categories {[c['name'] for c in usage['categories']]}"
        )
        await client.rewind_files("prompt-1")
        if not await anyio.Path("notes.txt").exists():
            print("rewound: notes.txt is gone")


if __name__ == "__main__":
    anyio.run(main)
