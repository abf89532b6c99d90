"""The session-store contract suite the core ships (`openagent.plugin.SessionStoreContract`), run over the
core's own JSONL store."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openagent import JSONLSessionStore
from openagent._store_contract import StoreBackend
from openagent.plugin import SessionStoreContract


class JSONLBackend(StoreBackend):
    """JSONL stores, each namespace a directory of its own under the test's temporary directory."""

    asyncio_only = False
    name = "openagent"  # the built-in plugin registers the ``jsonl`` scheme
    schemes = ("jsonl",)

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"jsonl://{root / 'default'}"

    def store(self, namespace: str | None = None) -> Any:
        return JSONLSessionStore(self.root / (namespace or uuid.uuid4().hex))

    def unreachable(self) -> Any:
        blocker = self.root / "a-file"
        blocker.write_text("not a directory")
        return JSONLSessionStore(blocker / "sessions")

    def namespace_of(self, store: Any) -> str:
        return str(store.root.name)

    def restart(self, *, crash: bool) -> Callable[[], None]:  # pragma: no cover - no server
        raise NotImplementedError


class TestJSONLStore(SessionStoreContract):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> JSONLBackend:
        return JSONLBackend(tmp_path)
