"""Helpers the reliability tests share: counting live tasks, waiting for the server thread to catch up."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

__all__ = ["live_tasks", "wait_until"]


def live_tasks() -> int:
    """How many tasks the running event loop has (asyncio or trio)."""
    try:
        import trio

        root = trio.lowlevel.current_root_task()
    except (ImportError, RuntimeError):  # not running under trio
        root = None
    if root is not None:
        count, stack = 0, [root]
        while stack:
            task = stack.pop()
            count += 1
            for nursery in task.child_nurseries:
                stack.extend(nursery.child_tasks)
        return count
    import asyncio

    return len(asyncio.all_tasks())


async def wait_until(condition: Callable[[], bool], limit: float = 5.0) -> None:
    """Poll a condition another thread makes true (a bound on waiting, not a timing assert)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await anyio.sleep(0.01)
