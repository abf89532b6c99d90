"""Sessions kept in a SessionStore: run, list, read, rename, fork at a message, resume from the store."""

import anyio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    InMemorySessionStore,
    ResultMessage,
    fork_session_via_store,
    get_session_info_from_store,
    get_session_messages_from_store,
    list_sessions_from_store,
    query,
    rename_session_via_store,
)


async def ask(prompt: str, store: InMemorySessionStore, **options: object) -> tuple[str, list[str]]:
    session_id, answers = "", []
    async for message in query(prompt=prompt, options=ClaudeAgentOptions(session_store=store, **options)):
        if isinstance(message, AssistantMessage):
            answers.append(message.uuid)
        if isinstance(message, ResultMessage):
            session_id = message.session_id
            print(f"{prompt!r} -> {message.result!r}")
    return session_id, answers


async def main() -> None:
    store = InMemorySessionStore()
    first, answers = await ask("Remember the number 42.", store)
    await ask("And the number 7.", store, resume=first)
    await rename_session_via_store(store, first, "numbers")
    for info in await list_sessions_from_store(store):
        print(f"session {info.summary}: first prompt {info.first_prompt!r}")
    messages = await get_session_messages_from_store(store, first)
    print(
        "messages:",
        [
            (m.type, m.message["content"] if isinstance(m.message["content"], str) else "...")
            for m in messages
        ],
    )
    fork = await fork_session_via_store(store, first, up_to_message_id=answers[0], title="only 42")
    print("fork:", (await get_session_info_from_store(store, fork.session_id)).custom_title)
    await ask("Which numbers did I give you?", store, resume=fork.session_id)


if __name__ == "__main__":
    anyio.run(main)
