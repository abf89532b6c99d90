"""Settings: the user file, the project file, environment variables and command-line flags, merged.

Precedence, highest first: flags > ``OPENAGENT_*`` variables > ``./.openagent/settings.toml`` >
``<user config dir>/openagent/settings.toml`` (``~/.config/openagent/settings.toml`` on Linux). Every value
remembers where it came from, so ``openagent config show`` can say. The project file's settings that change
where requests and keys go or widen permissions (`needs_trust`) apply only in a trusted folder (`_trust`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from openagent.plugin import ConfigError, PermissionMode, mask_secret, mask_url

from ._trust import Trust, decide

__all__ = [
    "KEYS", "SECRET_KEYS", "Settings", "load_settings", "needs_trust", "project_file", "shown", "user_file",
]  # fmt: skip

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

POWERFUL_KEYS = frozenset({"model", "base_url", "api_key", "tools", "allowed_tools", "session_store"})
"""Project settings that change where requests, keys and transcripts go, or what the model may do."""


def shown(key: str, value: Any) -> str:
    """A setting's value as printed: lists joined, secrets masked, credentials in URLs masked."""
    text = ", ".join(value) if isinstance(value, list) else str(value)
    return mask_secret(text) if key in SECRET_KEYS else mask_url(text)


def needs_trust(key: str, value: Any) -> bool:
    """Whether a project file's setting applies only in a trusted folder (a mode that narrows is safe)."""
    return key in POWERFUL_KEYS or (key == "permission_mode" and value not in ("default", "plan", "dontAsk"))


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
    held: dict[str, Any] = field(default_factory=dict)
    """Project settings not applied because the folder is not trusted."""
    trust: Trust = field(default_factory=lambda: Trust(False))

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
    import tomllib  # only when there is a file: most runs have none

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"settings file {path} is not valid TOML: {exc}") from exc
    for key in data:
        if key not in KEYS and key != "trusted_folders":
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: unknown setting {key!r}{hint}; known: {', '.join(KEYS)}")
    return data


def load_settings(
    flags: Mapping[str, Any],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *,
    trust: bool | None = None,
    ask: bool = False,
) -> Settings:
    """Merge the four layers; ``flags`` holds only the options given on the command line.

    The project file's powerful settings join only when the folder is trusted: ``trust`` is the
    ``--trust``/``--no-trust`` flag, and ``ask`` lets a terminal user be asked (``run`` and ``chat``).

    Raises:
        ConfigError: A file is not TOML, names an unknown setting, or a value has the wrong type.
    """
    env = os.environ if env is None else env
    settings = Settings()
    user, project = user_file(), project_file(cwd)
    user_values, project_values = _read_file(user), _read_file(project)
    trusted_folders = _names(user_values.pop("trusted_folders", []), f"user {user}: trusted_folders")
    if "trusted_folders" in project_values:
        raise ConfigError(f"{project}: trusted_folders can be set only in the user file {user}")
    checked = {key: KEYS[key](value, f"project {project}") for key, value in project_values.items()}
    held = {key: value for key, value in checked.items() if needs_trust(key, value)}
    items = [f"{project}: {key} = {shown(key, value)}" for key, value in held.items()]
    settings.trust = decide(cwd, items, flag=trust, env=env, trusted_folders=trusted_folders, ask=ask)
    if not settings.trust.trusted:
        settings.held = held
        project_values = {k: v for k, v in project_values.items() if k not in held}
    layers: list[tuple[str, Mapping[str, Any]]] = [(f"user {user}", user_values)]
    layers.append((f"project {project}", project_values))
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
