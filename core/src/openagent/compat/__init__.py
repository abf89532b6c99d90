"""Compatibility layers: other SDKs' public names over openagent's objects (`openagent.compat.claude`)."""

from __future__ import annotations

__all__: list[str] = []
