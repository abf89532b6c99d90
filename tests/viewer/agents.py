"""Real runs that write the sessions the viewer tests look at, each in its own process (as a user's would).

``python agents.py SCENARIO CWD [--store URL] [--control DIR]`` runs one agent in ``CWD`` against its store
and prints the session id. Scenarios:

- ``demo``: ScriptedModel; thinking, a tool call with a long result, a ``Task`` subagent that calls a tool
  itself, a markdown answer with code.
- ``wire``: the openai plugin over HTTP against the scripted loopback server (benchmarks/scripted_server.py).
- ``inject``: prompts, answers, tool names and results full of HTML and script.
- ``steps``: waits before each tool result until the test creates ``CONTROL/go-<n>`` (a run the test watches
  live from another process); ``CONTROL/waiting-<n>`` says it got there.
- ``approval``: a tool whose call ``can_use_tool`` must approve; approval comes when ``CONTROL/approve``
  appears; ``CONTROL/asked`` says it is asking.
- ``secret``: a tool result that echoes the value of ``$VIEWER_TEST_SECRET_TOKEN``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from openagent import AgentDefinition, AgentOptions, PermissionResultAllow, run, tool
from openagent.testing import ScriptedModel, text, thinking, tool_call, usage

HERE = Path(__file__).resolve().parent
INJECTION = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
LONG_LINES = 900


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" + "".join(f"line {n}\n" for n in range(1, LONG_LINES + 1))


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def _until(path: Path) -> None:
    """Wait for ``path`` to exist: the test creates it from outside this process."""
    while not path.exists():  # noqa: ASYNC110, ASYNC240 - the signal is a file another process creates
        await anyio.sleep(0.05)


def _waiter(control: Path) -> Any:
    @tool
    async def wait_for(step: int) -> str:
        """Wait until the test says go."""
        (control / f"waiting-{step}").touch()  # what came before is in the store by now
        await _until(control / f"go-{step}")
        return f"step {step} done"

    return wait_for


async def demo(options: dict[str, Any]) -> str:
    model = ScriptedModel(
        [
            [
                thinking("I should read the file first.", "sig"),
                text("Let me **look**."),
                tool_call("read_file", {"path": "README.md"}),
                usage(120, 30),
            ],  # fmt: skip
            [
                tool_call("Task", {"description": "sum", "prompt": "add 2 and 3", "subagent_type": "math"}),
                usage(200, 20),
            ],  # fmt: skip
            [tool_call("add", {"a": 2, "b": 3}), usage(50, 10)],
            ["5", usage(60, 5)],
            ["Done. The sum is 5:\n\n```python\ndef add(a, b):\n    return a + b\n```\n", usage(300, 40)],
        ],
        cost_per_token=0.000002,
    )
    agents = {"math": AgentDefinition("Adds numbers", "You add.", tools=["add"])}
    opts = AgentOptions(model=model, tools=[read_file, add], agents=agents, **options)
    return (await run("Read README.md, then have the math agent add 2 and 3", opts)).session_id


async def wire(options: dict[str, Any]) -> str:
    sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))
    from scripted_server import ScriptedServer, ToolCall, Turn

    async with ScriptedServer() as server:
        server.add_script(
            "wire-model",
            [
                Turn(text=["Checking. "], tool_calls=[ToolCall("add", {"a": 40, "b": 2}, fragments=3)]),
                Turn(text=["The answer ", "is 42."]),
            ],  # fmt: skip
        )
        opts = AgentOptions(model="openai-compatible:wire-model", base_url=server.url, tools=[add], **options)
        return (await run("What is 40 + 2 over the wire?", opts)).session_id


async def inject(options: dict[str, Any]) -> str:
    @tool(f"evil{INJECTION}")
    def evil(path: str) -> str:
        """A tool whose name and result carry markup."""
        return f"{INJECTION}\n</pre></details></section><script>window.__pwned = 3</script>"

    model = ScriptedModel(
        [
            [
                text(f"Answer with markup: {INJECTION} and [a link](javascript:window.__pwned=4)"),
                tool_call(f"evil{INJECTION}", {"path": INJECTION}),
                usage(10, 10),
            ],  # fmt: skip
            [thinking(INJECTION), text("done " + INJECTION), usage(10, 10)],
        ]
    )
    opts = AgentOptions(model=model, tools=[evil], **options)
    return (await run(f"Prompt {INJECTION}", opts)).session_id


async def steps(options: dict[str, Any], control: Path) -> str:
    model = ScriptedModel(
        [
            [tool_call("wait_for", {"step": 1}), usage(10, 5)],
            [tool_call("wait_for", {"step": 2}), usage(20, 5)],
            ["all steps done", usage(30, 5)],
        ]  # fmt: skip
    )
    opts = AgentOptions(model=model, tools=[_waiter(control)], **options)
    return (await run("Do the steps", opts)).session_id


async def approval(options: dict[str, Any], control: Path) -> str:
    @tool(requires_permission=True)
    def write_note(text: str) -> str:
        """Write a note (needs approval)."""
        return f"wrote {text!r}"

    async def can_use_tool(name: str, arguments: dict[str, Any], context: Any) -> PermissionResultAllow:
        (control / "asked").touch()  # the permission request is in the store by now
        await _until(control / "approve")
        return PermissionResultAllow()

    model = ScriptedModel(
        [[tool_call("write_note", {"text": "hello"}), usage(10, 5)], ["noted", usage(10, 5)]]
    )
    opts = AgentOptions(model=model, tools=[write_note], can_use_tool=can_use_tool, **options)
    return (await run("Write a note", opts)).session_id


async def secret(options: dict[str, Any]) -> str:
    @tool
    def show_env(name: str) -> str:
        """Print an environment variable."""
        return f"{name}={os.environ[name]}"

    model = ScriptedModel([[tool_call("show_env", {"name": "VIEWER_TEST_SECRET_TOKEN"})], "printed it"])
    opts = AgentOptions(model=model, tools=[show_env], **options)
    return (await run("Show me the token variable", opts)).session_id


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario")
    parser.add_argument("cwd")
    parser.add_argument("--store")
    parser.add_argument("--control", type=Path)
    parser.add_argument("--session-id")
    args = parser.parse_args()
    options: dict[str, Any] = {"cwd": args.cwd, "session_store": args.store, "session_id": args.session_id}
    scenario = globals()[args.scenario]
    extra = (args.control,) if args.scenario in ("steps", "approval") else ()
    print(await scenario(options, *extra), flush=True)


if __name__ == "__main__":
    asyncio.run(main())  # the Redis and PostgreSQL stores are asyncio-only
