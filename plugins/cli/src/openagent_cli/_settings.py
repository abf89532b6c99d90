"""Settings: the user file, the project file, environment variables and command-line flags, merged.

Precedence, highest first: flags > ``OPENAGENT_*`` variables > ``./.openagent/settings.toml`` >
``<user config dir>/openagent/settings.toml`` (``~/.config/openagent/settings.toml`` on Linux). Every value
remembers where it came from, so ``openagent config show`` can say.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from openagent.errors import ConfigError
from openagent.permissions import PermissionMode

__all__ = ["KEYS", "SECRET_KEYS", "Settings", "load_settings", "project_file", "user_file"]

PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    return value


def _names(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise ConfigError(f"{where}: expected a list of names or a comma-separated string, got {value!r}")


def _count(value: Any, where: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected a whole number, got {value!r}") from None
    if isinstance(value, bool) or number < 1:
        raise ConfigError(f"{where}: expected a whole number of at least 1, got {value!r}")
    return number


def _sandbox(value: Any, where: str) -> bool | dict[str, Any]:
    """``true``/``false`` (a flag, a variable) or a table of the Claude SDK's sandbox settings."""
    if isinstance(value, bool | dict):
        return value
    word = value.strip().lower() if isinstance(value, str) else None
    if word in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return word in ("1", "true", "yes", "on")
    raise ConfigError(f"{where}: sandbox must be true, false or a table of sandbox settings; got {value!r}")


def _mode(value: Any, where: str) -> str:
    if value not in PERMISSION_MODES:
        raise ConfigError(
            f"{where}: permission mode must be one of {', '.join(PERMISSION_MODES)}; got {value!r}"
        )
    return str(value)


KEYS: dict[str, Callable[[Any, str], Any]] = {
    "model": _text,
    "base_url": _text,
    "api_key": _text,
    "system_prompt": _text,
    "tools": _names,
    "allowed_tools": _names,
    "disallowed_tools": _names,
    "permission_mode": _mode,
    "max_turns": _count,
    "session_store": _text,
    "sandbox": _sandbox,
}
"""Every setting and the function that checks (and converts) its value."""

FLAG_NAMES = {"allowed_tools": "--allow", "disallowed_tools": "--deny", "system_prompt": "--system"}
"""Settings whose command-line flag is not ``--`` plus the key."""

SECRET_KEYS = frozenset({"api_key"})
"""Settings never printed in full."""


def user_file() -> Path:
    """The user's settings file (under the platform's config directory)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("openagent", appauthor=False)) / "settings.toml"


def project_file(cwd: Path) -> Path:
    """The project's settings file: ``.openagent/settings.toml`` in the working directory."""
    return cwd / ".openagent" / "settings.toml"


@dataclass
class Settings:
    """The merged settings and, for each, where it came from."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    """``"flag --model"``, ``"env OPENAGENT_MODEL"``, ``"project /…/settings.toml"``, ``"user …"``."""

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when no layer set it."""
        return self.values.get(key, default)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"settings file {path} is not valid TOML: {exc}") from exc
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: unknown setting {key!r}{hint}; known: {', '.join(KEYS)}")
    return data


def load_settings(flags: Mapping[str, Any], cwd: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Merge the four layers; ``flags`` holds only the options given on the command line.

    Raises:
        ConfigError: A file is not TOML, names an unknown setting, or a value has the wrong type.
    """
    env = os.environ if env is None else env
    settings = Settings()
    layers: list[tuple[str, Mapping[str, Any]]] = []
    for label, path in (("user", user_file()), ("project", project_file(cwd))):
        layers.append((f"{label} {path}", _read_file(path)))
    env_values = {key: env[f"OPENAGENT_{key.upper()}"] for key in KEYS if env.get(f"OPENAGENT_{key.upper()}")}
    layers.append(("env", env_values))
    layers.append(("flag", {k: v for k, v in flags.items() if v is not None and v != ()}))
    for label, values in layers:
        for key, value in values.items():
            if label == "env":
                source = f"env OPENAGENT_{key.upper()}"
            elif label == "flag":
                source = f"flag {FLAG_NAMES.get(key, '--' + key.replace('_', '-'))}"
            else:
                source = label
            settings.values[key] = KEYS[key](value, source)
            settings.sources[key] = source
    return settings
