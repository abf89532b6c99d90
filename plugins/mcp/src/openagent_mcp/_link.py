"""One connection to a server (`Link`) and one request on it (`Call`): how each ends, and why.

A call runs in the caller's own task, not in the session's: nothing is pinned per call. It registers with
its link, so that whatever ends the link — the process exiting, the connection breaking, an HTTP error, the
conversation closing — cancels the call at once and the call reports that cause. A call also ends at its
deadline (``tool_timeout`` after the last sign of life, never past ``max_tool_timeout``), and soon after a
fault that may have lost its answer (a malformed message, an answer stream that ended without an answer)
unless the answer or a progress notification arrives within `FAULT_GRACE`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ._watch import Faults, StderrTail

__all__ = ["FAULT_GRACE", "Call", "Link"]

FAULT_GRACE = 0.5
"""Seconds a call may still get its answer after a fault that may have lost it."""


class Call:
    """One request in flight: its cancel scope, deadline and, if it was ended early, why."""

    __slots__ = ("cause", "limit", "on_progress", "request_id", "scope", "suspicion", "timeout")

    def __init__(
        self,
        timeout: float,
        max_total: float,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> None:
        now = anyio.current_time()
        self.timeout = timeout
        self.limit = now + max(max_total, timeout)
        self.scope = anyio.CancelScope(deadline=min(now + timeout, self.limit))
        self.cause: str | None = None
        """Why the link ended under the call (``None``: it ended on its own deadline)."""
        self.suspicion: str | None = None
        """A fault that may have lost the answer; the call ends soon unless the answer arrives."""
        self.request_id: int | str | None = None
        self.on_progress = on_progress

    def end(self, cause: str) -> None:
        """End the call now: its link ended."""
        if self.cause is None:
            self.cause = cause
        self.scope.cancel()

    def suspect(self, cause: str) -> None:
        """Give the call `FAULT_GRACE` seconds to get its answer."""
        self.suspicion = cause
        self.scope.deadline = min(self.scope.deadline, anyio.current_time() + FAULT_GRACE)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress notification: the server is working on it; the timeout starts again."""
        self.suspicion = None
        self.scope.deadline = min(anyio.current_time() + self.timeout, self.limit)
        if self.on_progress is not None:  # never awaited here: this runs in the session's receive loop
            self.on_progress(progress, total, message)


class Link:
    """One session with a server, from connecting to its end; calls on it end with it."""

    def __init__(self, stderr: StderrTail | None = None) -> None:
        self.session: Any = None
        """The ``mcp`` ``ClientSession`` once initialized."""
        self.stderr = stderr
        self.tasks: TaskGroup | None = None
        """The session's own background tasks (re-listing tools, cancel notifications, stderr)."""
        self.calls: set[Call] = set()
        self._by_id: dict[int | str, Call] = {}
        self.ended = anyio.Event()
        self.cause: str | None = None
        """Why it ended (the first fault, or the reason it was closed)."""
        self.on_purpose = False
        """Closed by us (disabled, reconnected, the conversation ended), not by a fault."""
        self.startup: anyio.CancelScope | None = None
        """The scope of connecting, while it lasts: closing the link cancels it."""
        self.on_fault: Callable[[], None] | None = None
        """Called once when a fault ends the link (not when it is closed on purpose)."""
        self.faults = Faults(self.fail, self._suspect, self._broken, self._sent, self._posted)
        self._posts: dict[int | str, anyio.Event] = {}

    def fail(self, cause: str) -> None:
        """A fault: the session cannot go on. Ends it and every call on it (the first cause is kept)."""
        self._end(cause + (self.stderr.tail() if self.stderr and "stderr:" not in cause else ""))

    def close(self, reason: str) -> None:
        """End the session on purpose."""
        if self.cause is None:
            self.on_purpose = True
        self._end(reason)
        if self.startup is not None:
            self.startup.cancel()

    def _end(self, cause: str) -> None:
        if self.cause is None:
            self.cause = cause
            if not self.on_purpose and self.on_fault is not None:
                self.on_fault()
        self.ended.set()
        for call in list(self.calls):
            call.end(self.cause)

    def _suspect(self, cause: str, request_id: int | str | None) -> None:
        calls = list(self.calls) if request_id is None else [self._by_id.get(request_id)]
        for call in calls:
            if call is not None:
                call.suspect(cause)

    def _broken(self, cause: str, request_id: int | str | None) -> None:
        call = self._by_id.get(request_id) if request_id is not None else None
        if call is not None:
            call.end(cause)
        if self.tasks is not None and self.session is not None and self.cause is None:
            self.tasks.start_soon(self._probe)  # a dead server fails the ping: the link ends with the cause

    async def _probe(self) -> None:
        with anyio.move_on_after(FAULT_GRACE * 4):
            try:
                await self.session.send_ping()
            except Exception as exc:  # the transport watchers have reported it already, if it was a fault
                self.fail(
                    f"the server does not answer a ping after a broken call ({type(exc).__name__}: {exc})"
                )

    def expect_post(self, request_id: int | str) -> anyio.Event:
        """An event set when the HTTP client begins posting ``request_id``."""
        self._posts[request_id] = event = anyio.Event()
        return event

    def _posted(self, request_id: int | str) -> None:
        event = self._posts.pop(request_id, None)
        if event is not None:
            event.set()

    def _sent(self, request_id: int | str, call: Any) -> None:
        if isinstance(call, Call) and call in self.calls:
            call.request_id = request_id
            self._by_id[request_id] = call

    def enter(self, call: Call) -> None:
        """Register a call (it ends at once when the link already has)."""
        self.calls.add(call)
        if self.cause is not None:
            call.end(self.cause)

    def leave(self, call: Call) -> None:
        """Forget a finished call."""
        self.calls.discard(call)
        if call.request_id is not None:
            self._by_id.pop(call.request_id, None)
