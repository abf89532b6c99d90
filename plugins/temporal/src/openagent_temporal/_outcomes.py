"""The steps' typed outcomes as JSON data, for the activities that decide on the workflow's behalf."""

from __future__ import annotations

from typing import Any

from openagent import ToolUseBlock, ToolUseError, UserMessage
from openagent.plugin import Finish, FollowUp, Outcome, Pause, RunTools, parse_message

__all__ = ["call_from_json", "outcome_from_json", "outcome_to_json"]


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    """An outcome as JSON data."""
    if isinstance(outcome, Finish):
        return {
            "kind": "finish", "subtype": outcome.subtype, "result": outcome.result,
            "stop_reason": outcome.stop_reason, "structured": outcome.structured,
        }  # fmt: skip
    if isinstance(outcome, FollowUp):
        return {"kind": "follow_up", "message": outcome.message.model_dump(mode="json")}
    if isinstance(outcome, Pause):
        return {"kind": "pause", "result": outcome.result}
    return {
        "kind": "run_tools",
        "calls": [call.model_dump(mode="json") for call in outcome.calls],
        "pending": [call.model_dump(mode="json") for call in outcome.pending],
    }


def call_from_json(data: dict[str, Any]) -> ToolUseBlock | ToolUseError:
    """A tool call (or a garbled one) from its JSON data."""
    if data.get("type") == "tool_use_error":
        return ToolUseError.model_validate(data)
    return ToolUseBlock.model_validate(data)


def outcome_from_json(data: dict[str, Any]) -> Outcome:
    """Rebuild an outcome from `outcome_to_json`'s data."""
    kind = data["kind"]
    if kind == "finish":
        return Finish(data["subtype"], data["result"], data.get("stop_reason"), data.get("structured"))
    if kind == "follow_up":
        message = parse_message(data["message"])
        assert isinstance(message, UserMessage)
        return FollowUp(message)
    if kind == "pause":
        return Pause(data["result"])
    pending = [call_from_json(c) for c in data["pending"]]
    return RunTools([call_from_json(c) for c in data["calls"]], pending)  # type: ignore[arg-type]
