"""`openagent_temporal.run`: a worker process's event loop (uvloop where installed)."""

from __future__ import annotations

import asyncio

import anyio
import anyio.lowlevel
import pytest

from openagent_temporal import run


def test_run_drives_the_coroutine_on_uvloop_and_returns_its_value() -> None:
    async def main() -> tuple[str, int]:
        await anyio.lowlevel.checkpoint()
        return type(asyncio.get_running_loop()).__module__, 42

    loop_module, value = run(main())
    assert value == 42
    assert loop_module.startswith("uvloop")


def test_run_raises_what_the_coroutine_raises() -> None:
    async def main() -> None:
        raise LookupError("no such agent")

    with pytest.raises(LookupError, match="no such agent"):
        run(main())
