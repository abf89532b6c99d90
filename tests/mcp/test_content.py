"""Everything a server returns reaches the model: text blobs as text, images within a size limit, resource
links with their metadata (and a way to read them), resources and prompts, structured content kept.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest
from harness import call, opened, text_of

from openagent import AgentOptions, Client, HookMatcher, UserMessage, query
from openagent.testing import ScriptedModel, tool_call
from openagent_mcp import toolset_of
from openagent_mcp._content import to_block

pytestmark = pytest.mark.anyio


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        pytest.param(
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///a.txt",
                    "mimeType": "text/plain",
                    "blob": _b64("héllo".encode()),
                },
            },
            {"type": "text", "text": "[resource file:///a.txt]\nhéllo"},
            id="text-blob-is-text",
        ),
        pytest.param(
            {
                "type": "resource",
                "resource": {"uri": "file:///a.json", "mimeType": "application/ld+json", "blob": _b64(b"{}")},
            },
            {"type": "text", "text": "[resource file:///a.json]\n{}"},
            id="json-suffix-blob-is-text",
        ),
        pytest.param(
            {"type": "resource", "resource": {"uri": "file:///x", "blob": _b64(b"plain words")}},
            {"type": "text", "text": "[resource file:///x]\nplain words"},
            id="untyped-utf8-blob-is-text",
        ),
        pytest.param(
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///x.gz",
                    "mimeType": "application/gzip",
                    "blob": _b64(b"\x1f\x8b\x08\0"),
                },
            },
            {
                "type": "text",
                "text": "[binary resource file:///x.gz (application/gzip, 4 bytes) not shown: binary content cannot be shown to the model]",
            },
            id="binary-blob-is-a-notice",
        ),
        pytest.param(
            {"type": "resource", "resource": {"uri": "file:///x", "blob": "not base64!"}},
            {
                "type": "text",
                "text": "[binary resource file:///x (unknown type, 8 bytes) not shown: binary content cannot be shown to the model]",
            },
            id="invalid-base64-is-a-notice",
        ),
        pytest.param(
            {"type": "image", "data": _b64(b"<svg/>"), "mimeType": "image/svg+xml"},
            {
                "type": "text",
                "text": "[image (image/svg+xml, 6 bytes) not shown: a type providers do not accept]",
            },
            id="svg-is-not-sent-to-a-provider",
        ),
        pytest.param(
            {"type": "image", "data": _b64(b"\0" * 3_000_000), "mimeType": "image/jpeg"},
            {
                "type": "text",
                "text": "[image (image/jpeg, 3.0 MB) not shown: over the 1.0 MB limit (max_binary_bytes)]",
            },
            id="a-3MB-image-is-capped",
        ),
        pytest.param(
            {"type": "audio", "data": _b64(b"RIFF"), "mimeType": "audio/wav"},
            {
                "type": "text",
                "text": "[audio (audio/wav, 4 bytes) not shown: binary content cannot be shown to the model]",
            },
            id="audio-is-a-notice",
        ),
        pytest.param(
            {
                "type": "resource_link",
                "uri": "memo://x",
                "name": "x",
                "description": "the x",
                "mimeType": "text/plain",
                "size": 3,
            },
            {
                "type": "text",
                "text": '[resource link memo://x]\nname: x\ndescription: the x\nmimeType: text/plain\nsize: 3\nRead it with ReadMcpResourceTool(server="srv", uri="memo://x").',
            },
            id="resource-link-keeps-its-metadata",
        ),
    ],
)
def test_content_items_become_blocks(item: dict[str, Any], expected: dict[str, Any]) -> None:
    assert to_block(item, server="srv") == expected


async def test_real_results_are_mapped_and_capped(http_server: str) -> None:
    config = {"type": "http", "url": http_server}
    with anyio.fail_after(30):
        async with opened({"srv": config}) as (_, table):
            picture = await call(table, "mcp__srv__picture")
            big = await call(table, "mcp__srv__big_picture", {"megabytes": 3})
            blob = await call(table, "mcp__srv__text_blob")
            link = await call(table, "mcp__srv__link")
            read = await call(table, "ReadMcpResourceTool", {"server": "srv", "uri": "memo://greeting"})
            listed = await call(table, "ListMcpResourcesTool", {})
        async with opened({"srv": {**config, "max_binary_bytes": 5_000_000}}) as (_, table):
            allowed = await call(table, "mcp__srv__big_picture", {"megabytes": 3})
    assert picture.content[1]["type"] == "image" and picture.content[1]["source"]["media_type"] == "image/png"
    assert text_of(big) == "[image (image/png, 3.0 MB) not shown: over the 1.0 MB limit (max_binary_bytes)]"
    assert allowed.content[0]["type"] == "image"
    assert text_of(blob) == "[resource file:///notes.txt]\nnaïve café, in a blob"
    assert text_of(link) == (
        "[resource link memo://greeting]\nname: greeting\ntitle: The greeting\ndescription: How the server says hello\n"
        'mimeType: text/plain\nsize: 21\nRead it with ReadMcpResourceTool(server="srv", uri="memo://greeting").'
    )
    assert text_of(read) == "[resource memo://greeting]\nhello from a resource"
    assert '"uri": "memo://greeting"' in text_of(listed) and '"server": "srv"' in text_of(listed)


async def test_structured_content_stays_on_the_result_for_hooks_and_callers(http_server: str) -> None:
    seen: list[dict[str, Any]] = []

    async def after(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(data)
        return {}

    options = AgentOptions(
        model=ScriptedModel([[tool_call("mcp__srv__weather", {"city": "Lyon"})], "ok"]),
        mcp_servers={"srv": {"type": "http", "url": http_server}},
        hooks={"PostToolUse": [HookMatcher(matcher="mcp__.*", hooks=[after])]},
        allowed_tools=["mcp__srv"],
        persist_session=False,
    )
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="weather?", options=options)]
    (result,) = [
        b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list) for b in m.content
    ]
    assert result.structured_content == {"city": "Lyon", "celsius": 21.5}
    assert seen[0]["tool_structured_content"] == {"city": "Lyon", "celsius": 21.5}
    assert '"celsius": 21.5' in text_of(result)  # the model reads it as text


async def test_resources_and_prompts_from_python(http_server: str) -> None:
    servers = {"srv": {"type": "http", "url": http_server}}
    options = AgentOptions(model=ScriptedModel([]), mcp_servers=servers, persist_session=False)
    with anyio.fail_after(30):
        async with Client(options) as client:
            servers = toolset_of(client)
            resources = await servers.list_resources("srv")
            contents = await servers.read_resource("srv", "memo://greeting")
            prompts = await servers.list_prompts("srv")
            prompt = await servers.get_prompt("srv", "review", {"code": "x = 1"})
    assert [str(r.uri) for r in resources] == ["memo://greeting"]
    assert contents.contents[0].text == "hello from a resource"
    assert [p.name for p in prompts] == ["review"]
    assert prompt.messages[0].content.text == "Please review: x = 1"
