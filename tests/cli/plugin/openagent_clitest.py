"""A third-party-style plugin for the CLI tests: a scripted provider, two tools and a command.

``--model clitest:/path/script.json`` replays the turns in that file with `openagent.testing.ScriptedModel`::

    {"delay": 0.0, "chunk_size": 3, "turns": ["plain answer",
        [{"thinking": "hmm"}, {"text": "Let me shout."}, {"tool": "Shout", "input": {"text": "hi"}}],
        {"error": "the model fell over"}]}
"""

import json
from pathlib import Path

import click

from openagent import ProviderError, hookimpl, tool
from openagent.models import ProviderProfile
from openagent.testing import ScriptedModel, text, thinking, tool_call
from openagent.testing import error as raise_error


def _part(part):
    if "text" in part:
        return text(part["text"])
    if "thinking" in part:
        return thinking(part["thinking"])
    if "tool" in part:
        return tool_call(part["tool"], part.get("input", {}), id=part.get("id"))
    if "error" in part:
        return raise_error(ProviderError(part["error"], provider="clitest"))
    raise ValueError(f"bad script part {part!r}")


def _turn(turn):
    if isinstance(turn, str):
        return turn
    if isinstance(turn, dict):
        return ProviderError(turn["error"], provider="clitest")
    return [_part(p) for p in turn]


def _append(path, line):
    with open(path, "a") as fh:
        fh.write(line + "\n")


class Recording:
    """A `ScriptedModel` that also appends every request it gets to a JSONL file (``"record"`` in the
    script), so a test can see what the CLI sent from another process."""

    def __init__(self, inner, path, base_url):
        self.inner, self.path, self.base_url = inner, path, base_url
        self.profile = inner.profile

    async def stream(self, request):
        seen = {
            "system": request.system,
            "tools": [t.name for t in request.tools],
            "messages": [m.model_dump(mode="json") for m in request.messages],
            "output_format": request.output_format,
            "max_tokens": request.max_tokens,
            "base_url": self.base_url,
        }
        _append(self.path, json.dumps(seen))
        async for event in self.inner.stream(request):
            yield event


def scripted(model, *, base_url=None, api_key=None):
    script = json.loads(Path(model).read_text())
    inner = ScriptedModel(
        turns=[_turn(t) for t in script["turns"]],
        delay=script.get("delay", 0.0),
        chunk_size=script.get("chunk_size", 0),
        model=script.get("name", "scripted"),
        profile=ProviderProfile(name="clitest", requires_api_key=False, supports_json_schema=True),
    )
    return Recording(inner, script["record"], base_url) if "record" in script else inner


@tool
def Shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


@tool(requires_permission=True)
def Danger(action: str) -> str:
    """Pretend to do something that needs the user's approval."""
    return f"did {action}"


@hookimpl
def register_providers(register):
    register("clitest", scripted)


@hookimpl
def register_tools(register):
    register([Shout, Danger])


@hookimpl
def register_commands(cli):
    @cli.command("clitest-hello")
    def hello():
        """Say hello (a command added by a plugin)."""
        click.echo("hello from a plugin")
