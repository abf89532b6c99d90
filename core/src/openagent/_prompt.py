"""A prompt on its way to the model: the user message it becomes, hooks, slash commands and added context."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .hooks import run_hooks
from .types import UserMessage

if TYPE_CHECKING:
    from .loop import Conversation

__all__ = ["submit", "user_message"]


def user_message(prompt: str | UserMessage | Mapping[str, Any]) -> UserMessage:
    """A prompt as a `UserMessage`: a string, a message, or Claude's streaming-input dict (``uuid`` kept)."""
    if isinstance(prompt, UserMessage):
        return prompt
    if isinstance(prompt, str):
        return UserMessage(content=prompt)
    message = prompt.get("message", prompt)  # Claude's streaming input: {"type": "user", "message": {...}}
    uuid = prompt.get("uuid")
    return UserMessage(
        content=message["content"],
        parent_tool_use_id=prompt.get("parent_tool_use_id"),
        uuid=uuid if isinstance(uuid, str) else None,
    )


async def submit(
    conversation: Conversation, prompt: str | UserMessage | Mapping[str, Any], first_run: bool
) -> UserMessage | str:
    """The prompt as it goes to the model (hooks may add context), or why a hook blocked it."""
    hooks = conversation.hooks
    if first_run:
        source = "resume" if conversation.options.resume else "startup"
        data = conversation.hook_input(source=source)
        started = await run_hooks(hooks, "SessionStart", data, target=source)
        conversation.session_context = started.additional_context
    message = user_message(prompt)
    if not isinstance(message.content, str):
        return message
    text = message.content
    if conversation.settings.commands and text.startswith("/"):
        try:
            text = conversation.settings.expand(text)
        except ValueError as exc:  # an unknown command: say which ones exist
            return str(exc)
    submitted = await run_hooks(hooks, "UserPromptSubmit", conversation.hook_input(prompt=text))
    if submitted.is_blocked:
        return submitted.block_reason or submitted.stop_reason or "blocked by a hook"
    extra = [*conversation.session_context, *submitted.additional_context]
    conversation.session_context = []
    if extra or text != message.content:
        return UserMessage(content="\n\n".join([text, *extra]), uuid=message.uuid)
    return message
