"""No API key in a session file, a log line (any level), an error message, or a cassette."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import anyio
import pytest
from scripted_server import ScriptedServer, ToolCall, Turn

from openagent import AgentOptions, query, tool
from openagent._errors import ProviderError
from openagent._retry import NoRetry
from openagent._sessions import JSONLSessionStore

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-secret-5f1c9a7e3b2d4c6a8e0f1a2b3c4d5e6f"
WIRES = {"openai": "openai-compatible", "anthropic": "anthropic"}


@pytest.fixture(params=sorted(WIRES))
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    pytest.importorskip(f"openagent_{request.param}")
    pytest.importorskip(request.param)  # the vendor SDK, imported outside the test's deadline
    monkeypatch.setenv("OPENAGENT_PLUGINS", request.param)
    return WIRES[request.param]


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


def options(server: ScriptedServer, provider: str, tmp_path: Path, **kw: object) -> AgentOptions:
    return AgentOptions(
        model=f"{provider}:m",
        base_url=server.url,
        api_key=KEY,
        cwd=tmp_path,
        session_store=JSONLSessionStore(tmp_path / "sessions"),
        retry=NoRetry(),
        tools=[echo],
        timeout=5.0,
        **kw,  # type: ignore[arg-type]
    )


def leaks(text: str) -> list[str]:
    """Where the key (or a long enough piece of it) shows up in ``text``."""
    pieces = [KEY, KEY[3:], KEY[-16:]]
    return [p for p in pieces if p in text]


async def drive(opts: AgentOptions) -> tuple[list[str], ProviderError | None]:
    seen: list[str] = []
    try:
        async for message in query(prompt="hi", options=opts):
            seen.append(message.model_dump_json())
    except ProviderError as exc:
        return seen, exc
    return seen, None


@pytest.mark.parametrize(
    "turns",
    [
        pytest.param([Turn(tool_calls=[ToolCall("echo", {"text": "x"})]), Turn(text="done")], id="success"),
        pytest.param(
            [Turn(fault="401", message="Incorrect API key provided: sk-secr***********5e6f")], id="401"
        ),
        pytest.param([Turn(fault="500")], id="500"),
        pytest.param([Turn(text="x", fault="html")], id="html"),
        pytest.param([Turn(text=["a"] * 4, fault="reset", fault_after=2)], id="reset"),
    ],
)
async def test_the_key_is_sent_but_never_logged_persisted_or_raised(
    server: ScriptedServer,
    provider: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    turns: list[Turn],
    anyio_backend: str,
) -> None:
    server.add_script("m", turns, mode="queue")
    caplog.set_level(logging.DEBUG)  # every logger, every level: openagent's, the SDKs', httpx's
    with anyio.fail_after(20):
        messages, error = await drive(options(server, provider, tmp_path))
    sent = server.requests[0].headers
    assert KEY in (sent.get("authorization", "") + sent.get("x-api-key", "")), "the key must reach the server"
    assert caplog.records, "nothing was logged at DEBUG: the log check would be vacuous"
    assert leaks(caplog.text) == []
    assert leaks("\n".join(messages)) == []
    if error is not None:
        assert leaks(f"{error}\n{error!r}\n{error.body or ''}\n{error.__cause__!r}") == []
    files = [p for p in (tmp_path / "sessions").rglob("*") if p.is_file()]
    assert files, "no session file was written: the check would be vacuous"
    assert all(leaks(p.read_text(errors="replace")) == [] for p in files)


async def test_a_server_echoing_the_key_does_not_put_it_in_errors_or_sessions(
    server: ScriptedServer, provider: str, tmp_path: Path, anyio_backend: str, request: pytest.FixtureRequest
) -> None:
    server.add_script("m", [Turn(fault="401", message=f"Incorrect API key provided: {KEY}")], mode="queue")
    with anyio.fail_after(20):
        messages, error = await drive(options(server, provider, tmp_path))
    assert error is not None
    assert leaks(f"{error}\n{error.body or ''}") == []
    assert leaks("\n".join(messages)) == []
    assert all(leaks(p.read_text()) == [] for p in (tmp_path / "sessions").rglob("*.jsonl"))


# --- cassettes --------------------------------------------------------------------------------------------

SECRET_HEADER = re.compile(
    r"^\s*-?\s*['\"]?(authorization|x-api-key|api-key|openai-api-key|anthropic-api-key|cookie|set-cookie)['\"]?\s*:"
    r"\s*(?P<value>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
TOKEN = re.compile(
    r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|Bearer\s+[A-Za-z0-9._~+/-]{20,})"
)
PLACEHOLDER = re.compile(
    r"^\s*(\[\]|\{\}|null|~|''|\"\"|-\s*)?\s*$|REDACTED|FILTERED|DUMMY|<.*>|\*{3,}", re.IGNORECASE
)


def secrets_in(text: str) -> list[str]:
    """Credential-looking header values and tokens in a recorded exchange."""
    found = [
        m.group(0).strip() for m in SECRET_HEADER.finditer(text) if not PLACEHOLDER.search(m.group("value"))
    ]
    found += [m.group(0) for m in TOKEN.finditer(text)]
    return found


def test_the_cassette_scanner_finds_planted_secrets() -> None:
    planted = (
        "request:\n  headers:\n    authorization:\n    - Bearer sk-proj-abcdefghijklmnopqrstuvwx\n"
        "    x-api-key: sk-ant-api03-abcdefghijklmnopqrstuv\n"
        "response:\n  headers:\n    Set-Cookie: session=abc123\n"
    )
    assert len(secrets_in(planted)) >= 3
    clean = (
        'request:\n  headers:\n    authorization: REDACTED\n    x-api-key: []\n  body: \'{"model": "m"}\'\n'
    )
    assert secrets_in(clean) == []


def test_no_cassette_holds_a_credential() -> None:
    files = [p for p in (ROOT / "cassettes").rglob("*") if p.is_file()]
    assert files, "no cassettes to check"
    offending = {
        str(p.relative_to(ROOT)): found for p in files if (found := secrets_in(p.read_text(errors="replace")))
    }
    assert offending == {}
