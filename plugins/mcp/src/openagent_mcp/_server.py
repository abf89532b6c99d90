"""One configured MCP server: its connection's life (connect, fail, reconnect, disable) and its requests.

A session lives in a task of the toolset's task group (see `_toolset`), entered and left by that one task;
requests run in the callers' tasks (`request`). Whatever ends a session ends the requests on it with the
cause (`_link`). The status follows the Claude Agent SDK's values: ``pending`` (starting or reconnecting),
``connected``, ``failed``, ``needs-auth`` (HTTP 401) and ``disabled``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup, TaskStatus

from openagent.errors import ConfigError

from ._config import ServerConfig
from ._errors import McpConnectionError, McpServerError
from ._link import FAULT_GRACE, Call, Link
from ._transports import open_transport
from ._watch import CURRENT_CALL, Inbox, Outbox, StderrTail

__all__ = ["RemoteServer", "describe", "leaf", "list_all"]

logger = logging.getLogger("openagent.mcp")
T = TypeVar("T")
_MAX_PAGES = 100  # of a paginated list: a server that never stops paging is cut off here


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        real = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        exc = (real or list(exc.exceptions))[0]
    return exc


def describe(exc: BaseException) -> str:
    """The first real error inside exception groups, as ``Type: message``."""
    exc = leaf(exc)
    if isinstance(exc, McpServerError):
        return str(exc).split(": ", 1)[-1]
    message = str(exc).splitlines()[0] if str(exc) else "no message"
    return f"{type(exc).__name__}: {message}"


async def list_all(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated MCP list (``tools``, ``resources``, ``prompts``)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await fetch(cursor)
        items += getattr(page, field)
        cursor = page.nextCursor
        if not cursor:
            break
    return items


class RemoteServer:
    """A server reached over a transport (stdio, HTTP, SSE, or an ``mcp`` server object in memory)."""

    def __init__(
        self, config: ServerConfig, group: TaskGroup, changed: Callable[[RemoteServer], None]
    ) -> None:
        self.key = config.key
        self.config = config
        self.status = "pending"
        self.error: str | None = None
        self.info: dict[str, str] | None = None
        """``serverInfo`` from the handshake: ``name`` and ``version``."""
        self.listed: list[Any] = []
        """The tools it offers (``mcp.types.Tool``), as last listed."""
        self.skipped: list[dict[str, str]] = []
        """Tools not offered, and why (task-only tools)."""
        self.capabilities: Any = None
        self.settled = anyio.Event()
        """Set while the server is not ``pending``."""
        self._group = group
        self._changed = changed
        self._link: Link | None = None
        self._lock = anyio.Lock()
        self._closing = False
        self._attempt: anyio.CancelScope | None = None
        self._relisting = False

    # -- life --

    async def start(self) -> None:
        """The first connection (under the ``reconnect`` policy, if any); failures only set the status."""
        async with self._lock:
            with anyio.CancelScope() as self._attempt:
                try:
                    await self._connect()
                except McpServerError:
                    pass

    async def reconnect(self) -> None:
        """End the current session, if any, and connect again.

        Raises:
            McpServerError: When the server is disabled, or cannot connect (then it is ``failed``).
        """
        if self.status == "disabled":
            raise McpServerError("is disabled; enable it with toggle_mcp_server()", server=self.key)
        async with self._lock:
            await self._end_session("is reconnecting")
            await self._connect()

    async def set_enabled(self, enabled: bool) -> None:
        """Disable (end the session, withdraw the tools) or enable (connect) the server."""
        async with self._lock:
            if not enabled:
                await self._end_session("was disabled")
                self._set("disabled")
            elif self.status == "disabled":
                await self._connect()

    def close(self) -> None:
        """End the session for good (the conversation ended); does not wait."""
        self._closing = True
        if self._attempt is not None:  # stop a connection attempt (or a retry policy's wait) at once
            self._attempt.cancel()
        if self._link is not None:
            self._link.close("was closed: the conversation ended")

    async def _end_session(self, reason: str) -> None:
        link, self._link = self._link, None
        if link is not None and link.cause is None:
            link.close(reason)
            with anyio.move_on_after(self.config.timeout):
                await link.ended.wait()

    async def _connect(self) -> None:
        self._set("pending")
        policy = self.config.reconnect
        try:
            await (self._connect_once() if policy is None else policy(self._connect_once))
        except McpServerError as exc:
            message = str(exc).split(": ", 1)[-1]
            self._set("needs-auth" if "HTTP 401" in message else "failed", message)
            raise

    async def _connect_once(self) -> None:
        if self._closing:
            raise McpServerError("was closed: the conversation ended", server=self.key)
        link = Link(StderrTail() if self.config.kind == "stdio" else None)
        self._link = link
        try:
            await self._group.start(self._session, link)
        except BaseException:
            if link.stderr is not None:  # when the session task never ran, nobody else closes the pipe
                link.stderr.close()
            raise

    def _set(self, status: str, error: str | None = None) -> None:
        self.status, self.error = status, error
        if status == "pending":
            if self.settled.is_set():
                self.settled = anyio.Event()
        else:
            self.settled.set()
        self._changed(self)

    # -- the session task --

    async def _session(self, link: Link, *, task_status: TaskStatus[None]) -> None:
        """Connect, initialize and list the tools within ``timeout``; then serve until the link ends."""
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.config.timeout) as startup:
                link.startup = startup
                async with AsyncExitStack() as stack:
                    await self._open(stack, link)
                    startup.deadline, link.startup = math.inf, None
                    started = True
                    link.on_fault = lambda: self._lost(link)
                    self._set("connected")
                    task_status.started()
                    await link.ended.wait()
                    assert link.tasks is not None
                    link.tasks.cancel_scope.cancel()
            if not started:
                link.fail(f"TimeoutError: no answer within {self.config.timeout:g} s (timeout)")
        except Exception as exc:
            link.fail(describe(exc))
            if not started:
                raise self._startup_error(exc, link) from exc
        finally:
            link.fail("the session ended")  # a no-op when it already has a cause: ends the calls
            if link.stderr is not None:
                link.stderr.close()
        if not started:
            raise self._startup_error(None, link)

    def _startup_error(self, exc: BaseException | None, link: Link) -> McpServerError:
        final = isinstance(exc and leaf(exc), ConfigError | FileNotFoundError | PermissionError)
        kind = McpServerError if final else McpConnectionError
        return kind(link.cause or "could not start", server=self.key)

    async def _open(self, stack: AsyncExitStack, link: Link) -> None:
        from mcp import ClientSession
        from mcp.types import Implementation

        read, write = await open_transport(stack, self.config, link.faults, link.stderr)
        link.tasks = await stack.enter_async_context(anyio.create_task_group())
        if link.stderr is not None:
            link.tasks.start_soon(link.stderr.pump)

        async def on_message(message: Any) -> None:
            await self._on_message(link, message)

        session = ClientSession(
            Inbox(read, link.faults),  # type: ignore[arg-type]
            Outbox(write, link.faults, handoff=link.expect_post if self.config.kind == "http" else None),  # type: ignore[arg-type]
            message_handler=on_message,
            client_info=Implementation(name="openagent", version="1"),
        )
        await stack.enter_async_context(session)
        result = await session.initialize()
        self.info = {"name": result.serverInfo.name, "version": result.serverInfo.version}
        self.capabilities = result.capabilities
        self._take_tools(await list_all(lambda c: session.list_tools(cursor=c), "tools"))
        link.session = session

    def _lost(self, link: Link) -> None:
        """A live session ended by a fault: the server is failed now (it may still be unwinding)."""
        if self._closing or self._link is not link:
            return
        self._link = None
        logger.warning("MCP server %r failed: %s", self.key, link.cause)
        self._set("needs-auth" if "HTTP 401" in (link.cause or "") else "failed", link.cause)
        if self.config.reconnect is not None:
            self._group.start_soon(self.start)

    async def _on_message(self, link: Link, message: Any) -> None:
        from mcp.types import ServerNotification, ToolListChangedNotification

        if isinstance(message, ServerNotification) and isinstance(message.root, ToolListChangedNotification):
            if link.tasks is not None and not self._relisting:  # a burst of notices: one listing
                self._relisting = True
                link.tasks.start_soon(self._relist, link)

    async def _relist(self, link: Link) -> None:
        try:
            with anyio.fail_after(self.config.timeout):
                tools = await list_all(lambda c: link.session.list_tools(cursor=c), "tools")
        except Exception as exc:
            logger.warning("MCP server %r: listing its changed tools failed: %s", self.key, exc)
            return
        finally:
            self._relisting = False
        self._take_tools(tools)
        self._changed(self)

    def _take_tools(self, tools: list[Any]) -> None:
        self.listed, self.skipped = [], []
        for found in tools:
            execution = getattr(found, "execution", None)
            if getattr(execution, "taskSupport", None) == "required":
                reason = "runs only as an MCP task (execution.taskSupport: required), which is not supported"
                self.skipped.append({"name": found.name, "reason": reason})
            else:
                self.listed.append(found)

    # -- requests --

    async def request(
        self,
        what: str,
        send: Callable[[Any, Any], Awaitable[T]],
        *,
        within: float,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> T:
        """Run ``send(session, progress_callback)`` on the live session, in the caller's task.

        Raises:
            McpServerError: Naming the server and the cause: not connected, failed during the request,
                a malformed or lost answer, no answer ``within`` seconds, or the server's own error.
        """
        from mcp.shared.exceptions import McpError
        from mcp.types import CONNECTION_CLOSED

        link = await self._live(within)
        call = Call(within, self.config.max_tool_timeout, on_progress)
        token = CURRENT_CALL.set(call)
        link.enter(call)
        try:
            with call.scope:
                try:
                    return await send(link.session, call.progress)
                except McpError as exc:
                    if exc.error.code == CONNECTION_CLOSED and link.cause:
                        raise McpServerError(f"{what} failed: {link.cause}", server=self.key) from None
                    raise McpServerError(f"{what} failed: {exc.error.message}", server=self.key) from None
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    cause = link.cause or "the connection is closed"
                    raise McpServerError(f"{what} failed: {cause}", server=self.key) from None
        except anyio.get_cancelled_exc_class():
            self._abandon(link, call, "cancelled by the client")
            raise
        finally:
            link.leave(call)
            CURRENT_CALL.reset(token)
        self._abandon(link, call, "timed out")
        raise McpServerError(self._ended(call, what), server=self.key)

    def _ended(self, call: Call, what: str) -> str:
        if call.cause is not None:
            return f"{what} failed: {call.cause}"
        if call.suspicion is not None:
            return f"{what} failed: {call.suspicion}, and no answer came within {FAULT_GRACE:g} s"
        if anyio.current_time() >= call.limit:
            return f"{what} was cancelled after {self.config.max_tool_timeout:g} s in all (max_tool_timeout)"
        return f"no answer to {what} within {call.timeout:g} s (tool_timeout); the request was cancelled"

    async def _live(self, within: float) -> Link:
        if self.status == "pending":
            with anyio.move_on_after(within):
                await self.settled.wait()
        link = self._link
        if self.status == "connected" and link is not None and link.session is not None and not link.cause:
            return link
        if self.status == "disabled":
            raise McpServerError("is disabled", server=self.key)
        if self.status == "pending":
            raise McpServerError(f"is not connected yet (still starting after {within:g} s)", server=self.key)
        raise McpServerError(f"is not connected ({self.status}: {self.error})", server=self.key)

    def _abandon(self, link: Link, call: Call, reason: str) -> None:
        """Tell the server to stop working on a request nobody waits for any more (MCP cancellation)."""
        if link.cause is None and call.request_id is not None and link.tasks is not None:
            link.tasks.start_soon(self._cancel, link, call.request_id, reason)

    async def _cancel(self, link: Link, request_id: int | str, reason: str) -> None:
        from mcp import types

        params = types.CancelledNotificationParams(requestId=request_id, reason=reason)
        note = types.ClientNotification(types.CancelledNotification(params=params))
        with anyio.move_on_after(FAULT_GRACE * 2):
            try:
                await link.session.send_notification(note)
            except Exception as exc:  # the session may be ending: the cancellation is only a courtesy
                logger.debug("MCP server %r: cancelling request %s failed: %s", self.key, request_id, exc)
