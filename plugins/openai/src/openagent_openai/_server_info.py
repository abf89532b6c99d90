"""What a server says about the model it serves: its context window, from the server's own endpoints.

A chat-completions request does not tell the window, and a model name alone cannot (a llama.cpp or Ollama
server runs a model at whatever context size it was started with). Where the server reports it:

- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (the size the server was started with);
- Ollama: ``POST /api/show {"model": name}`` → the ``num_ctx`` parameter, else Ollama's default of 4,096
  tokens, never more than the model's own ``<architecture>.context_length``;
- vLLM (and SGLang): ``GET /v1/models`` → ``max_model_len`` of the model's entry.

The parsers take the decoded JSON (anything: a server's answer is someone else's data) and return a positive
window or ``None``; they never raise.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OLLAMA_DEFAULT_CONTEXT", "from_models", "from_props", "from_show", "probe_request"]

OLLAMA_DEFAULT_CONTEXT = 4_096
"""What Ollama runs a model with when nothing sets ``num_ctx`` (``OLLAMA_CONTEXT_LENGTH``'s default)."""


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        return None
    return int(value) if 0 < value < 1 << 40 else None


def from_props(data: Any) -> int | None:
    """llama.cpp's ``/props``: the context size of its slots."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    if isinstance(settings, dict) and (n_ctx := _positive(settings.get("n_ctx"))):
        return n_ctx
    return _positive(data.get("n_ctx"))


def from_show(data: Any) -> int | None:
    """Ollama's ``/api/show``: ``num_ctx`` when set, else Ollama's default, capped by the model's own."""
    if not isinstance(data, dict):
        return None
    limit = None
    info = data.get("model_info")
    if isinstance(info, dict):
        limit = next((_positive(v) for k, v in info.items() if str(k).endswith(".context_length")), None)
    window = None
    parameters = data.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx":
                try:
                    window = _positive(int(value.strip().strip('"')))
                except ValueError:
                    window = None
    window = window or OLLAMA_DEFAULT_CONTEXT
    return min(window, limit) if limit else window


def from_models(data: Any, model: str) -> int | None:
    """VLLM's ``/v1/models``: the ``max_model_len`` of ``model``'s entry (or of the only entry)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    models = [e for e in entries if isinstance(e, dict)]
    entry = next((e for e in models if e.get("id") == model), models[0] if len(models) == 1 else None)
    return _positive(entry.get("max_model_len")) if entry is not None else None


def probe_request(kind: str, root: str, model: str) -> tuple[str, str, dict[str, Any] | None]:
    """Method, URL and JSON body of one probe; ``root`` is the server's URL without ``/v1``."""
    if kind == "props":
        return "GET", f"{root}/props", None
    if kind == "show":
        return "POST", f"{root}/api/show", {"model": model}
    return "GET", f"{root}/v1/models", None


def parse(kind: str, data: Any, model: str) -> int | None:
    """The window in a probe's answer."""
    if kind == "props":
        return from_props(data)
    if kind == "show":
        return from_show(data)
    return from_models(data, model)
