"""Secrets the viewer never shows, replaced by ``[redacted]`` wherever they appear in a session.

The secrets are the values of this process's key-like variables, the configured API key and the store URL's
password.

This is the project's redaction (`openagent.errors.ProviderError.redact`: known secret values replaced by
``[redacted]``) applied to every string of every entry before anything is rendered or served.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MARK", "Redactor", "secrets_from"]

MARK = "[redacted]"
"""What a secret is replaced with (the same mark `ProviderError.redact` uses)."""

_SECRET_NAME = re.compile(r"(?i)(api[_-]?key|(^|_)key$|token|secret|passw(or)?d|credential)")
_SHORTEST = 8  # shorter values ("1", "true") would blank out ordinary text: not secrets worth the noise


def secrets_from(
    environ: Mapping[str, str], *, store_url: str | None = None, api_key: str | None = None
) -> list[str]:
    """The secret values to hide: variables named like keys, tokens or passwords, the store URL's password
    and the configured API key; longest first, so a secret containing another one is hidden whole.
    """  # noqa: D205
    found = {value for name, value in environ.items() if _SECRET_NAME.search(name)}
    if store_url and "://" in store_url:
        try:
            found.add(urlsplit(store_url).password or "")
        except ValueError:  # a malformed URL has no password to find
            pass
    found.add(api_key or "")
    return sorted((s for s in found if len(s) >= _SHORTEST), key=len, reverse=True)


class Redactor:
    """Replaces known secret values in entries (every string, keys included) and in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = [s for s in secrets if s]

    @classmethod
    def from_environment(cls, *, store_url: str | None = None, api_key: str | None = None) -> Redactor:
        """A redactor for this process's environment, store URL and API key."""
        return cls(secrets_from(os.environ, store_url=store_url, api_key=api_key))

    def text(self, value: str) -> str:
        """``value`` with every secret replaced."""
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MARK)
        return value

    def entries(self, entries: list[Any]) -> list[Any]:
        """``entries`` with every secret replaced in every string; the same list when none occurs.

        One search of the entries' JSON text finds whether any secret occurs at all (the common case: none),
        so the walk over every string happens only for sessions that need it.
        """
        if not self.secrets or not entries:
            return entries
        try:
            blob = json.dumps(entries, ensure_ascii=False, default=str)
        except (RecursionError, ValueError):
            blob = None  # cannot tell: walk every string
        if blob is not None and not any(
            s in blob or json.dumps(s, ensure_ascii=False)[1:-1] in blob for s in self.secrets
        ):
            return entries
        return [self._entry(entry) for entry in entries]

    def _entry(self, entry: Any) -> Any:
        try:
            return self._walk(entry)
        except RecursionError:  # nothing legitimate nests this deep: show that, not the unchecked value
            return {"type": "unreadable", "error": "an entry too deeply nested to check for secrets"}

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        return value
