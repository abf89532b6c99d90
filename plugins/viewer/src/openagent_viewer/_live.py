"""Sessions being looked at: one timeline per session, shared by its pages, and the live stream of changes.

A `Followed` session holds the timeline, the summary and the log of changes (`Op`s) its entries made. It is
fed each new entry once, by whoever reads the session first (a page load, a range of items, a live stream),
under its lock. A `Watch` is one page's live stream: every so often it reads the session, and sends the page
the changes after the point that page has, rendered by the same templates as the page itself.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread

from openagent import SessionError

from ._render import Renderer, session_url
from ._source import NotFoundError, Source, fingerprint
from ._summary import Summarizer
from ._timeline import Op, Timeline

__all__ = ["Followed", "FollowedSessions", "Watch"]


class Followed:
    """One session's timeline, summary and change log, brought up to date with new entries only."""

    def __init__(self, project: str, session_id: str) -> None:
        self.project, self.session_id = project, session_id
        self.lock = threading.Lock()
        """Held while feeding or rendering."""
        self.generation = 0
        """Bumped when the session turns out to have been rewritten (a page then starts over)."""
        self._reset()

    def _reset(self) -> None:
        self.timeline = Timeline()
        self.summarizer = Summarizer(self.session_id, self.project)
        self._ops: list[Op] = []
        self._counts: list[int] = []  # the entry count after each op's entry, for `since`
        self._marks: tuple[Any, Any] = (None, None)

    @property
    def count(self) -> int:
        """Entries fed so far."""
        return self.timeline.count

    def catch_up(self, entries: list[Any]) -> None:
        """Feed the entries not fed yet (hold `lock`); a session no longer starting as it did starts over."""
        count = self.count
        if count > len(entries) or (
            count and (fingerprint(entries[0]), fingerprint(entries[count - 1])) != self._marks
        ):
            self._reset()
            self.generation += 1
            count = 0
        for entry in entries[count:]:
            for op in self.timeline.feed(entry):
                self._ops.append(op)
                self._counts.append(self.timeline.count)
            self.summarizer.add(entry)
        if entries:
            self._marks = (fingerprint(entries[0]), fingerprint(entries[-1]))

    def since(self, count: int) -> list[Op]:
        """The changes made by the entries after the first ``count`` (hold `lock`)."""
        return self._ops[bisect.bisect_right(self._counts, count) :]


class FollowedSessions:
    """The few sessions looked at last."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._sessions: OrderedDict[tuple[str, str], Followed] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, project: str, session_id: str) -> Followed:
        """The session's `Followed` (a new one if it was not among the last few)."""
        with self._lock:
            followed = self._sessions.pop((project, session_id), None) or Followed(project, session_id)
            self._sessions[project, session_id] = followed
            while len(self._sessions) > self.size:
                self._sessions.popitem(last=False)
        return followed


class Watch:
    """One page's live stream: what the page has (``after`` entries), and what to send it next."""

    def __init__(
        self, source: Source, renderer: Renderer, followed: Followed, after: int, poll: tuple[float, float]
    ) -> None:
        self.source, self.renderer, self.followed = source, renderer, followed
        self.base = session_url(followed.project, followed.session_id)
        self.cursor = after
        self.generation = followed.generation
        self.poll = poll
        self.stop = anyio.Event()
        """Set when the server shuts down: the stream ends cleanly instead of being cut."""

    async def events(self) -> AsyncIterator[dict[str, str]]:
        """Server-sent events: ``ops`` (changes; their id is the entry count), ``reload``, ``problem``."""
        fastest, slowest = self.poll
        wait = fastest
        while True:
            with anyio.move_on_after(wait):  # first: a page that is only passing by never costs a read
                await self.stop.wait()
            if self.stop.is_set():
                return
            try:
                entries = await self.source.entries(self.followed.project, self.followed.session_id)
            except (NotFoundError, SessionError) as exc:
                message = self.source.redactor.text(str(exc))
                yield {"event": "problem", "data": json.dumps({"message": message})}
                entries = None
            change = None if entries is None else await anyio.to_thread.run_sync(self._changes, entries)
            if change == "reload":
                yield {"event": "reload", "data": "{}"}
                return
            if change is not None:
                yield {"event": "ops", "id": str(self.cursor), "data": change}
            wait = fastest if change is not None else min(wait * 2, slowest)

    def _changes(self, entries: list[Any]) -> str | None:
        """The page's changes as JSON, "reload" when the session was rewritten, None when nothing changed."""
        followed = self.followed
        with followed.lock:
            followed.catch_up(entries)
            if followed.generation != self.generation:
                return "reload"
            self.cursor = min(self.cursor, followed.count)  # a page cannot have more than there is
            if followed.count == self.cursor:
                return None
            ops = self.renderer.ops(
                followed.since(self.cursor), self.base, followed.timeline.turns, followed.count
            )
            summary = self.renderer.summary(followed.summarizer.summary())
            self.cursor = followed.count
        ops.append({"target": "summary", "mode": "replace", "html": summary})
        return json.dumps({"count": self.cursor, "ops": ops})
