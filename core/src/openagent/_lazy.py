"""`Lazy`: a registration resolved on first use (``lazy("package.module:attribute")``).

A plugin registers a provider, store or tool by reference, so its entry-point module stays cheap to import
however heavy what it offers is; the registry imports the module when the registration is first used.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["Lazy", "lazy"]


@dataclass(frozen=True, slots=True)
class Lazy:
    """A registration resolved on first use: ``target`` is ``"package.module:attribute"`` (the attribute may
    be dotted); ``kwargs``, when given, are bound to it (``functools.partial``).
    """  # noqa: D205

    target: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def load(self) -> Any:
        """Import the module and return the attribute (with ``kwargs`` bound).

        Raises:
            Exception: whatever importing the module or finding the attribute raised.
        """
        module, _, attribute = self.target.partition(":")
        value: Any = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            value = getattr(value, part)
        return functools.partial(value, **dict(self.kwargs)) if self.kwargs else value


def lazy(target: str, **kwargs: Any) -> Lazy:
    """Register ``target`` (``"package.module:attribute"``) without importing it until first use.

    ``register("ollama", lazy("openagent_openai._provider:ChatCompletionsProvider", profile=OLLAMA))``
    """
    if ":" not in target or not target.partition(":")[0]:
        raise ValueError(f"a lazy registration is 'package.module:attribute', not {target!r}")
    return Lazy(target, tuple(kwargs.items()))
