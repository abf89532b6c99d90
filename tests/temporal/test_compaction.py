"""Compaction in durable runs: an activity, triggered by the model's window, as the in-process loop does."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from temporalio.client import Client

from openagent import AgentOptions, Compaction, HookMatcher, ModelProfile, SystemMessage, query, tool
from openagent.testing import ScriptedModel, tool_call
from openagent_temporal import start_run, worker

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@tool
def lookup(n: int) -> str:
    """Look something up."""
    return f"result {n}: " + "data " * 40


def tokens(messages: list[Any]) -> int:
    return sum(len(m.model_dump_json()) for m in messages) // 4


async def test_a_long_durable_run_compacts_and_stays_within_its_window(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    turns: list[Any] = [[tool_call("lookup", {"n": i}, id=f"l{i}")] for i in range(24)] + ["all done"]
    model = ScriptedModel(turns)
    summariser = ScriptedModel(["a short summary of earlier work"] * 50)
    triggers: list[str] = []

    async def on_compact(data: dict[str, Any], tool_use_id: Any, context: Any) -> dict[str, Any]:
        triggers.append(data["trigger"])
        return {}

    options = AgentOptions(
        model=model, tools=[lookup], cwd=str(tmp_path), max_turns=40, permission_mode="bypassPermissions",
        compaction=Compaction(context_window=2_000, keep_last=4, max_tool_result_chars=100, model=summariser),
        hooks={"PreCompact": [HookMatcher(hooks=[on_compact])]},
    )  # fmt: skip
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"long": options}):
        run = await start_run(
            client, "look up 24 things", task_queue=task_queue, agent="long", session_id="c-1"
        )
        with anyio.fail_after(60):
            got = [m async for m in run.messages()]
    assert got[-1].subtype == "success" and got[-1].result == "all done" and got[-1].num_turns == 25
    boundaries = [m for m in got if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert boundaries and len(boundaries) == len(triggers) and set(triggers) == {"auto"}
    assert max(tokens(r.messages) for r in model.requests) < 2_000  # 25 turns of output would be far more
    again = ScriptedModel(["resumed"])
    later = [
        m
        async for m in query(
            prompt="and now?", options=AgentOptions(model=again, cwd=str(tmp_path), resume="c-1")
        )
    ]
    assert later[-1].result == "resumed"
    resumed = again.requests[0].messages  # the compacted history, not the 50 messages of the run
    assert "was compacted" in resumed[0].content and len(resumed) < 50


class ReportingModel(ScriptedModel):
    """A scripted model whose server reports its context window (as llama.cpp's ``/props`` does)."""

    def __init__(self, turns: list[Any]) -> None:
        super().__init__(turns)
        self.asked = 0

    async def model_profile(self) -> ModelProfile:
        self.asked += 1
        return ModelProfile(context_window=2_000)


async def test_a_durable_run_asks_the_server_for_its_window_once_as_query_does(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    def options(model: ScriptedModel) -> AgentOptions:
        return AgentOptions(
            model=model, tools=[lookup], cwd=str(tmp_path), max_turns=40, permission_mode="bypassPermissions",
            compaction=Compaction(keep_last=4, max_tool_result_chars=100, model=ScriptedModel(["summary"] * 50)),
        )  # fmt: skip

    def turns() -> list[Any]:
        return [[tool_call("lookup", {"n": i}, id=f"l{i}")] for i in range(24)] + ["all done"]

    local = ReportingModel(turns())
    expected = [m async for m in query(prompt="look up 24 things", options=options(local))]
    model = ReportingModel(turns())
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"long": options(model)}):
        run = await start_run(client, "look up 24 things", task_queue=task_queue, agent="long")
        with anyio.fail_after(60):
            got = [m async for m in run.messages()]
    assert got[-1].result == expected[-1].result == "all done"
    assert model.asked == local.asked == 1  # asked once, not per turn: the answer is in the history

    def boundaries(messages: list[Any]) -> int:
        return sum(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in messages)

    assert boundaries(got) == boundaries(expected) > 0  # the reported window set it off, as in-process
    assert max(tokens(r.messages) for r in model.requests) < 2_000


class BrokenReportingModel(ReportingModel):
    """A model whose server answers the window question with something its provider cannot handle."""

    async def model_profile(self) -> ModelProfile:
        self.asked += 1
        raise RuntimeError("garbage from /props")


async def test_a_server_that_cannot_say_its_window_does_not_fail_a_durable_run(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    model = BrokenReportingModel([[tool_call("lookup", {"n": i}, id=f"l{i}")] for i in range(12)] + ["done"])
    options = AgentOptions(
        model=model, tools=[lookup], cwd=str(tmp_path), max_turns=40, permission_mode="bypassPermissions",
        compaction=Compaction(keep_last=4, max_tool_result_chars=100, model=ScriptedModel(["summary"] * 50)),
    )  # fmt: skip
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"long": options}):
        run = await start_run(client, "look up 12 things", task_queue=task_queue, agent="long")
        with anyio.fail_after(60):
            got = [m async for m in run.messages()]
    assert got[-1].subtype == "success" and got[-1].result == "done"
    assert model.asked == 1  # asked once, not retried, and the run went on without a window
    assert not any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in got)


async def test_a_context_overflow_compacts_for_real_and_asks_again(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent.plugin import ContextWindowExceededError

    def options() -> AgentOptions:
        overflow = ContextWindowExceededError("prompt is too long", provider="test", status_code=400)
        model = ScriptedModel([[tool_call("lookup", {"n": 1}, id="l1")], overflow, "fits now"])
        summariser = ScriptedModel(["a short summary"])
        return AgentOptions(
            model=model, tools=[lookup], cwd=str(tmp_path), permission_mode="bypassPermissions",
            compaction=Compaction(keep_last=1, model=summariser),
        )  # fmt: skip

    in_process = options()
    expected = [m async for m in query(prompt="look it up", options=in_process)]
    durable = options()
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"tight": durable}):
        run = await start_run(client, "look it up", task_queue=task_queue, agent="tight")
        with anyio.fail_after(30):
            got = [m async for m in run.messages()]
    kinds = [getattr(m, "subtype", None) or m.type for m in got]
    assert kinds == [getattr(m, "subtype", None) or m.type for m in expected]
    assert "compact_boundary" in kinds and got[-1].result == expected[-1].result == "fits now"
    assert len(durable.model.requests) == len(in_process.model.requests) == 3  # the overflow asked again once
