import enum
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from openagent import Tool, ToolContext, tool

pytestmark = pytest.mark.anyio
CTX = ToolContext(tool_use_id="t", session_id="s", cwd=".")


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int = 0


@tool
def paint(
    where: Point,
    colour: Colour,
    mode: Literal["fill", "stroke"] = "fill",
    width: float | None = None,
    label: Annotated[str, Field(description="Text to write")] = "",
) -> str:
    """Paint a point.

    Args:
        where: The point to paint.
        colour: Which colour,
            from the palette.
    """
    return f"{colour.value} {mode} at {where.x},{where.y} width={width} label={label!r}"


def test_schema_from_type_hints_and_docstring():
    schema = paint.input_schema
    assert paint.name == "paint" and paint.description == "Paint a point."
    props = schema["properties"]
    assert schema["required"] == ["where", "colour"]
    assert props["where"]["description"] == "The point to paint."
    assert props["colour"]["description"] == "Which colour, from the palette."
    assert props["mode"] == {"default": "fill", "enum": ["fill", "stroke"], "type": "string"}
    assert props["width"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert props["label"]["description"] == "Text to write"
    assert set(schema["$defs"]) == {"Colour", "Point"}
    assert schema["additionalProperties"] is False


async def test_arguments_are_validated_and_converted_before_the_call():
    result = await paint.call("t", {"where": {"x": 1}, "colour": "blue", "width": "2.5"}, CTX)
    assert result.content == "blue fill at 1,0 width=2.5 label=''" and not result.is_error


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"colour": "red"}, "where: Field required"),
        ({"where": {"x": 1}, "colour": "green"}, "colour: Input should be 'red' or 'blue'"),
        ({"where": {"x": "a"}, "colour": "red"}, "where.x: Input should be a valid integer"),
        ({"where": {"x": 1}, "colour": "red", "size": 3}, "size: Extra inputs are not permitted"),
    ],
    ids=["missing", "bad-enum", "nested", "unknown-argument"],
)
async def test_validation_errors_are_error_results_the_model_can_act_on(arguments, expected):
    result = await paint.call("t", arguments, CTX)
    assert (
        result.is_error
        and expected in result.content
        and result.content.startswith("Invalid arguments for tool paint")
    )


async def test_claude_form_with_a_type_dict():
    @tool("multiply", "Multiply two numbers", {"a": float, "b": float})
    async def multiply(args):
        return {"content": [{"type": "text", "text": str(args["a"] * args["b"])}]}

    assert multiply.input_schema["required"] == ["a", "b"]
    assert (await multiply.call("t", {"a": 2, "b": 4}, CTX)).content == [{"type": "text", "text": "8.0"}]
    failing = await multiply.call("t", {"a": 2}, CTX)
    assert failing.is_error and "b: Field required" in failing.content


async def test_claude_form_reports_is_error_and_accepts_a_full_json_schema():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @tool("search", "Search", schema)
    async def search(args):
        return {"content": [{"type": "text", "text": "nothing for " + args["q"]}], "is_error": True}

    assert search.input_schema is schema
    result = await search.call("t", {"q": "x"}, CTX)
    assert result.is_error and result.content[0]["text"] == "nothing for x"


async def test_a_context_parameter_is_injected_and_hidden_from_the_schema():
    @tool
    def where_am_i(context: ToolContext, verbose: bool = False) -> str:
        """Report the working directory."""
        return f"{context.cwd} {context.tool_use_id} {verbose}"

    assert list(where_am_i.input_schema["properties"]) == ["verbose"]
    assert (await where_am_i.call("call-9", {}, CTX)).content == ". t False"


async def test_return_values_become_text():
    @tool
    def data() -> dict:
        """Some data."""
        return {"a": [1, 2]}

    @tool
    def model() -> Point:
        """A model."""
        return Point(x=3)

    assert (await data.call("t", {}, CTX)).content == '{"a": [1, 2]}'
    assert (await model.call("t", {}, CTX)).content == '{"x":3,"y":0}'


async def test_a_client_side_tool_cannot_be_called():
    from openagent._errors import ToolError

    bare = Tool(name="ask", description="Ask the user", input_schema={"type": "object", "properties": {}})
    with pytest.raises(ToolError, match="client-side"):
        await bare.call("t", {}, CTX)


def test_decorator_settings_are_kept():
    @tool(timeout=3, max_result_chars=10, requires_permission=True)
    def risky() -> str:
        """Risky."""
        return ""

    assert (risky.timeout, risky.max_result_chars, risky.requires_permission) == (3, 10, True)
