import pytest

from openagent import AgentOptions
from openagent._errors import ConfigError
from openagent._models import split_model


def test_unknown_options_raise_a_type_error_with_a_suggestion():
    with pytest.raises(TypeError, match=r"'modle' \(did you mean 'model'\?\)"):
        AgentOptions(modle="x")


def test_model_comes_from_the_environment_when_not_given(monkeypatch):
    monkeypatch.setenv("OPENAGENT_MODEL", "ollama:qwen3:8b")
    assert AgentOptions().resolved_model() == "ollama:qwen3:8b"
    assert AgentOptions(model="openai:gpt").resolved_model() == "openai:gpt"


def test_no_model_at_all_is_a_config_error_that_says_what_to_do():
    with pytest.raises(ConfigError, match="OPENAGENT_MODEL"):
        AgentOptions().resolved_model()


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("ollama:qwen3:8b", ("ollama", "qwen3:8b")),
        ("OpenAI:gpt-4.1", ("openai", "gpt-4.1")),
        ("test:", ("test", "")),
    ],
)
def test_model_strings_split_on_the_first_colon(model, expected):
    assert split_model(model) == expected


@pytest.mark.parametrize("model", ["qwen3", ":qwen3"])
def test_model_strings_without_a_provider_are_rejected(model):
    with pytest.raises(ConfigError, match="provider:model"):
        split_model(model)
