"""``openagent run``: one prompt, headless; text to stdout as it streams, events to stderr."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

import anyio

from openagent.errors import ConfigError, OpenAgentError, mask_url
from openagent.types import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)

from ._events import call_line, failure_line, result_line

__all__ = ["Printer", "run_headless"]


class Printer:
    """Writes a run's messages: answer text to ``out`` as it streams, one-line events to ``err``."""

    def __init__(self, out: TextIO, err: TextIO, *, as_json: bool) -> None:
        self.out, self.err, self.as_json = out, err, as_json
        self.names: dict[str, str] = {}  # tool_use_id → tool name, for result lines
        self.at_line_start = True
        self.result: ResultMessage | None = None

    def _text(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self.at_line_start = text.endswith("\n")

    def _event(self, line: str) -> None:
        self.end_line()
        self.err.write(line + "\n")
        self.err.flush()

    def end_line(self) -> None:
        """Finish the answer's last line, so what follows starts on its own."""
        if not self.at_line_start:
            self._text("\n")

    def __call__(self, message: Message) -> None:
        """Show one message."""
        if isinstance(message, ResultMessage):
            self.result = message
        if self.as_json:
            self.out.write(json.dumps(message.model_dump(mode="json"), ensure_ascii=False) + "\n")
            self.out.flush()
        elif isinstance(message, StreamEvent):
            delta: dict[str, Any] = message.event.get("delta") or {}
            if message.event.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                self._text(delta.get("text", ""))
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock | ToolUseError):
                    self.names[block.id] = block.name
                    self._event(call_line(block))
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    self._event(result_line(block, self.names.get(block.tool_use_id, "")))


async def _drive(prompt: str, options: Any, printer: Printer) -> None:
    from openagent import query

    async for message in query(prompt=prompt, options=options):
        printer(message)


def run_headless(prompt: str, options: Any, *, as_json: bool) -> int:
    """Run ``prompt`` to its result; returns the exit status (0 success, 1 failure, 2 bad usage)."""
    for stream in (sys.stdout, sys.stderr):  # hostile text (a lone surrogate) must not end the run
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    printer = Printer(sys.stdout, sys.stderr, as_json=as_json)
    try:
        anyio.run(_drive, prompt, options, printer)
    except ConfigError as exc:
        printer.end_line()
        print(f"openagent: error: {mask_url(str(exc))}", file=sys.stderr)
        return 2
    except OpenAgentError as exc:
        printer.end_line()
        print(f"openagent: error: {type(exc).__name__}: {mask_url(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        printer.end_line()
        print("openagent: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    printer.end_line()
    if printer.result is None:
        print("openagent: error: the run ended without a result", file=sys.stderr)
        return 1
    if printer.result.is_error:
        print(failure_line(printer.result), file=sys.stderr)
        return 1
    return 0
