"""A task of the running event loop that belongs to no caller's task group (asyncio or trio).

An async generator must not hold a task group or cancel scope across its ``yield``s, and must not be
closed by driving it by hand from a finalizer: under trio the first ``await`` would park the task that
happened to run the garbage collector. Work that outlives its caller's frames (closing an abandoned run,
the MCP servers of a conversation) runs in a task of its own instead: an asyncio task, or a trio system
task, as the event loops' own async-generator finalizers do.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["spawn"]

logger = logging.getLogger("openagent")
_RUNNING: set[asyncio.Task[Any]] = set()  # asyncio keeps only weak references to its tasks


def spawn(run: Callable[[], Awaitable[Any]], name: str = "openagent") -> None:
    """Start ``run()`` in the running event loop, outside every task group; its errors are logged.

    Raises:
        RuntimeError: When no asyncio or trio event loop runs in this thread.
    """

    async def guarded() -> None:
        try:
            await run()
        except Exception:  # a trio system task that raised would crash the whole run
            logger.exception("background task %s failed", name)

    import asyncio  # here, not at import: `import openagent` stays light

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        trio = sys.modules.get("trio")
        if trio is None:
            raise RuntimeError("no event loop is running") from None
        trio.lowlevel.spawn_system_task(guarded, name=name)  # RuntimeError outside trio.run
        return
    task = loop.create_task(guarded(), name=name)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
