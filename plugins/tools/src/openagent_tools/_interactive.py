"""TodoWrite (the model's task list) and AskUserQuestion (questions answered by a user-supplied callback)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from openagent import Tool, ToolError, tool

__all__ = ["Question", "Todo", "ask_user_question", "todo_write"]


class Todo(BaseModel):
    """One task on the model's list."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    content: Annotated[str, Field(min_length=1)]
    """What is to be done, in the imperative ("Run the tests")."""
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str | None = None  # the Claude Code field name
    """The same task in the present continuous ("Running the tests")."""


TODO_DESCRIPTION = """Keep a task list for the current work, replacing the previous list with this one.

- Use it for work of three or more steps: list the steps, mark one in_progress before starting it, and mark
  it completed as soon as it is done.
- Each todo has content (imperative: "Run the tests"), status (pending / in_progress / completed) and
  optionally activeForm ("Running the tests")."""

_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


@tool("TodoWrite", TODO_DESCRIPTION, is_read_only=True)
def todo_write(todos: list[Todo]) -> str:
    """Replace the task list.

    Args:
        todos: The whole updated list.
    """
    active = [t for t in todos if t.status == "in_progress"]
    lines = [f"{_MARK[t.status]} {t.content}" for t in todos]
    done = sum(t.status == "completed" for t in todos)
    note = " Only one task should be in_progress at a time." if len(active) > 1 else ""
    summary = f"Todo list updated: {done}/{len(todos)} completed.{note}"
    return "\n".join([summary, *lines]) if todos else "Todo list cleared."


class Option(BaseModel):
    """One answer the user can pick."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    label: Annotated[str, Field(min_length=1)]
    description: str = ""


class Question(BaseModel):
    """One question for the user, with 2–4 options (the user may also answer freely)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    question: Annotated[str, Field(min_length=1)]
    header: str = ""
    """A short label (a few words) for the question."""
    options: Annotated[list[Option], Field(min_length=2, max_length=4)]
    multiSelect: bool = False  # the Claude Code field name


AskCallback = Callable[[list[dict[str, Any]]], Awaitable[Mapping[str, Any]] | Mapping[str, Any]]
"""``(questions) -> {question text: answer}``; questions are dicts as the model sent them."""

ASK_DESCRIPTION = """Ask the user one to four multiple-choice questions and wait for the answers.

- Use it when a decision needs the user (a preference, an ambiguity, a choice between approaches), not for
  things you can find out yourself.
- Each question has 2-4 options with a label and a description; set multiSelect to allow several answers.
  The user may also answer in their own words."""


def ask_user_question(callback: AskCallback | None = None) -> Tool:
    """The AskUserQuestion tool answered by ``callback``; without one every call is an error result.

    Args:
        callback: Receives the questions (a list of dicts) and returns ``{question: answer}``; sync or async.
            Raising `openagent.ToolError` (e.g. when the user dismissed the questions) reaches the model.
    """

    @tool("AskUserQuestion", ASK_DESCRIPTION)
    async def ask(questions: Annotated[list[Question], Field(min_length=1, max_length=4)]) -> str:
        """Ask the user.

        Args:
            questions: The questions to ask (1-4).
        """
        if callback is None:
            raise ToolError(
                "AskUserQuestion has no way to reach the user here. The application must pass a callback: "
                "AgentOptions(tools=[openagent_tools.ask_user_question(my_callback)])"
            )
        asked = [q.model_dump() for q in questions]
        answers: Any = callback(asked)
        if inspect.isawaitable(answers):
            answers = await answers
        if not isinstance(answers, Mapping):
            raise ToolError(f"the question callback returned {type(answers).__name__}, not a dict of answers")
        lines = [f"{q['question']} → {_answer(answers.get(q['question']))}" for q in asked]
        return "The user answered:\n" + "\n".join(lines)

    return ask


def _answer(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "(no answer)"
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
