"""What travels between the client, the workflow and its activities: small, JSON-shaped dataclasses.

Messages travel as their JSON data (``model_dump(mode="json")``); nothing here holds a key, a provider or
a callable: those live in the worker's agents, named by ``agent``.

The annotations are real types, not strings (no ``from __future__ import annotations``): temporalio reads
them for every payload it decodes, and evaluating strings each time costs it twice as much.
"""

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Approval", "RunSpec", "StartInput", "ToolInput", "TurnInput"]

WORKFLOW = "openagent.run"
"""The workflow's type name (the class may move; the name is what histories record)."""

OVERRIDABLE = frozenset(
    {
        "max_turns",
        "max_budget_usd",
        "permission_mode",
        "system_prompt",
        "resume",
        "fork_session",
        "continue_conversation",
        "resume_session_at",
        "max_tokens",
        "temperature",
        "top_p",
        "effort",
        "metadata",
        "user",
        "allowed_tools",
        "disallowed_tools",
        "persist_session",
    }
)
"""The `AgentOptions` fields a run may set for itself: plain data, the same on every worker. Anything
else (the model, tools, hooks, stores) is the worker's agent's: define another agent to change it."""


@dataclass
class Approval:
    """A person's answer to a call that asked: ``allow`` or ``deny``, with what Claude's callback returns."""

    behavior: str
    message: str = ""
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False
    by: str | None = None
    """Who answered (free text: a user name, a process), recorded in the run's messages."""


@dataclass
class RunSpec:
    """One durable run: which agent, which prompt, which session, and per-run option changes."""

    agent: str
    prompt: Any
    """A string, or a user message's JSON data (content blocks)."""
    session_id: str
    overrides: dict[str, Any] = field(default_factory=dict)
    """`AgentOptions` fields this run sets (only `OVERRIDABLE` ones)."""
    subagent: str | None = None
    """For a child workflow: the ``Task`` subagent it runs."""
    parent_tool_use_id: str | None = None
    depth: int = 0
    parent_permission_mode: str | None = None


@dataclass
class StartInput:
    """The first activity's input: the run, and the state id the workflow knows it by."""

    spec: RunSpec


@dataclass
class TurnInput:
    """A model turn: the run (to find its provider) and the request as `ModelRequest.to_json` data."""

    spec: RunSpec
    request: dict[str, Any]
    session_key: dict[str, str] | None = None
    """Where stored tool results are (see `openagent_temporal._payloads`)."""
    hook_base: dict[str, Any] = field(default_factory=dict)
    """What every hook input of the run holds (PreModelRequest and PostModelResponse hooks run here)."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """Messages to write to the session first (those since the last write), saving an activity."""
    fallback: bool = False
    """The run switched to the agent's ``fallback_model``."""


@dataclass
class ToolInput:
    """One tool call: the call, the rules and mode in force, where its notes go, an approval if given."""

    spec: RunSpec
    call: dict[str, Any]
    session_id: str
    permission_mode: str
    allowed: list[str]
    disallowed: list[str]
    ask: list[str]
    session_key: dict[str, str] | None = None
    approval: Approval | None = None
    hook_base: dict[str, Any] = field(default_factory=dict)
