"""Structured output: validated, repaired by re-asking, returned in ResultMessage.structured_output."""

import pytest
from pydantic import BaseModel

from openagent import AgentOptions, run
from openagent._errors import ConfigError
from openagent._models import ModelProfile, ProviderProfile
from openagent.testing import ScriptedModel

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


class City(BaseModel):
    city: str
    population: int


async def test_a_json_schema_answer_is_parsed_and_validated():
    model = ScriptedModel(['```json\n{"city": "Paris", "population": 2100000}\n```'])
    result = await run(
        "Largest city?", AgentOptions(model=model, output_format={"type": "json_schema", "schema": SCHEMA})
    )
    assert result.structured_output == {"city": "Paris", "population": 2100000}
    assert result.result.subtype == "success"
    # this endpoint cannot enforce a schema: it was told in the system prompt, not in the request
    request = model.requests[0]
    assert request.output_format is None and '"population"' in request.system


async def test_a_model_type_gives_a_model_instance_and_native_endpoints_get_the_schema():
    native = ProviderProfile(name="n", defaults=ModelProfile(supports_json_schema=True))
    model = ScriptedModel(['{"city": "Lyon", "population": 500000}'], profile=native)
    result = await run("x", AgentOptions(model=model, output_format=City, system_prompt="Be brief."))
    assert result.structured_output == City(city="Lyon", population=500000)
    assert model.requests[0].output_format["schema"]["required"] == ["city", "population"]
    assert model.requests[0].system == "Be brief."


async def test_a_wrong_answer_is_sent_back_with_the_error_until_it_is_right():
    model = ScriptedModel(['{"city": "Paris"}', "not json at all", '{"city": "Paris", "population": 2}'])
    result = await run(
        "x", AgentOptions(model=model, output_format={"type": "json_schema", "schema": SCHEMA})
    )
    assert result.structured_output == {"city": "Paris", "population": 2}
    repair = model.requests[1].messages[-1].content
    assert "'population' is a required property" in repair and "corrected JSON" in repair
    assert "not valid JSON" in model.requests[2].messages[-1].content


async def test_giving_up_after_the_retries_ends_with_its_own_subtype():
    model = ScriptedModel(['{"city": 1}'] * 3)
    options = AgentOptions(model=model, output_format=City, max_structured_output_retries=1)
    result = await run("x", options)
    assert result.result.subtype == "error_max_structured_output_retries" and result.is_error
    assert result.structured_output is None and len(model.requests) == 2


def test_a_malformed_output_format_is_a_config_error():
    with pytest.raises(ConfigError, match="output_format"):
        from openagent._structured import OutputSchema

        OutputSchema({"type": "json_schema"})
