"""The web app: the sessions list, a session's timeline and its live updates; read-only, behind `Guard`.

Routes: the list, a session's page, a range of its timeline items, its live changes (server-sent events) and
the full text of a value the page cut short; GET only.

`Guard` is the whole security boundary: only the expected ``Host`` (a page on another site that rebinds its
name to 127.0.0.1 gets nothing), only GET and HEAD, a token when one is set (from ``?token=``, then a
same-site cookie, or an ``Authorization: Bearer`` header), and headers that keep a page from running anything
but the viewer's own script (a content security policy with no inline script) or being framed.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio
import anyio.to_thread
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from openagent import SessionError

from ._live import FollowedSessions, Watch
from ._render import Renderer, pygments_css, session_url
from ._source import NotFoundError, Source
from ._summary import STATUSES, Summary
from ._timeline import full_values

__all__ = ["Guard", "Settings", "create_app"]

logger = logging.getLogger("openagent.viewer")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]

COOKIE = "openagent_viewer"
MAX_RANGE = 1_000  # timeline items one request may ask for
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


@dataclass(frozen=True)
class Settings:
    """How the app behaves."""

    token: str | None = None
    """Required on every request when set."""
    loopback_only: bool = True
    """Accept only a loopback ``Host`` header (the server is bound to loopback)."""
    store_url: str | None = None
    """The store as given (shown redacted, and in the resume commands)."""
    poll: tuple[float, float] = (0.25, 2.0)
    """Seconds between reads of a watched session: right after a change, and at most when idle."""


class Guard:
    """Host check, GET only, the token, and the security headers on every response."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await (refusal or self.app)(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> Response | None:
        request = Request(scope)
        if self.settings.loopback_only and _hostname(request.headers.get("host", "")) not in LOOPBACK_NAMES:
            return PlainTextResponse("unexpected Host header: this viewer answers on loopback only", 421)
        if request.method not in ("GET", "HEAD"):
            return PlainTextResponse("the viewer is read-only", 405, headers={"allow": "GET, HEAD"})
        token = self.settings.token
        if token is None:
            return None
        given = request.query_params.get("token")
        if given is not None and _same(given, token):  # once, from the printed URL: keep it in a cookie
            rest = urlencode([(k, v) for k, v in parse_qsl(request.url.query) if k != "token"])
            response = RedirectResponse(request.url.path + (f"?{rest}" if rest else ""), 303)
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            return response
        bearer = request.headers.get("authorization", "")
        if _same(request.cookies.get(COOKIE, ""), token) or _same(bearer.removeprefix("Bearer "), token):
            return None
        return PlainTextResponse("a token is required: open the URL the viewer printed at start", 401)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _hostname(host: str) -> str:
    if host.startswith("["):  # [::1]:8000
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _matches(row: Summary, words: list[str], model: str, status: str) -> bool:
    if model and row.model != model or status and row.status != status:
        return False
    haystack = f"{row.session_id} {row.title.lower()} {row.model.lower()} {row.search}"
    return all(word in haystack for word in words)


def _commands(summary: Summary, store: str | None) -> list[tuple[str, str]]:
    """The exact commands that resume or fork this session, run where it was started."""
    where = f"cd {shlex.quote(summary.cwd)} && " if summary.cwd else ""
    env = f"OPENAGENT_SESSION_STORE={shlex.quote(store)} " if store else ""
    sid = shlex.quote(summary.session_id)
    return [
        ("resume", f"{where}{env}openagent chat --resume {sid}"),
        ("fork", f'{where}{env}openagent chat --resume "$({env}openagent sessions fork {sid})"'),
    ]


class Pages:
    """The route handlers, over one `Source`."""

    def __init__(self, source: Source, settings: Settings) -> None:
        self.source = source
        self.settings = settings
        self.renderer = Renderer()
        self.store_url = source.redactor.text(settings.store_url) if settings.store_url else None
        self.store_name = self.store_url or "JSONL files"
        self.css = pygments_css()
        self.followed = FollowedSessions()
        self._rows: dict[tuple[str, str], tuple[Summary | None, Markup]] = {}

    def _error(self, status: int, title: str, message: str) -> HTMLResponse:
        context = {
            "title": title,
            "message": self.source.redactor.text(message),
            "project": self.source.project,
        }
        return HTMLResponse(self.renderer.page("error.html", store_name=self.store_name, **context), status)

    async def sessions(self, request: Request) -> Response:
        """The sessions of a project, newest first, filtered by the search words, model and status."""
        query = request.query_params
        project = query.get("project") or self.source.project
        try:
            rows = await self.source.summaries(project)
            projects = await self.source.projects()
        except NotFoundError as exc:
            return self._error(404, "not found", str(exc))
        except SessionError as exc:
            return self._error(503, "the session store failed", str(exc))
        q, model, status = query.get("q", ""), query.get("model", ""), query.get("status", "")
        shown = [self._row(r) for r in rows if _matches(r, q.lower().split(), model, status)]
        context = {
            "rows": shown,
            "total": len(rows),
            "projects": projects,
            "project": project,
            "models": sorted({r.model for r in rows if r.model}),
            "statuses": STATUSES,
            "q": q,
            "model": model,
            "status": status,
            "store_name": self.store_name,
        }
        return HTMLResponse(self.renderer.page("list.html", **context))

    def _row(self, summary: Summary) -> Markup:
        """The list row of a summary, drawn once per summary (a session's changes make a new one)."""
        key = (summary.project, summary.session_id)
        drawn, html = self._rows.get(key, (None, Markup()))
        if drawn is not summary:
            html = self.renderer.row(summary)
            self._rows[key] = (summary, html)
        return html

    async def _entries(self, request: Request) -> tuple[str, str, list[Any]]:
        project, session_id = request.path_params["project"], request.path_params["session_id"]
        return project, session_id, await self.source.entries(project, session_id)

    async def session(self, request: Request) -> Response:
        """A session's page: its summary, chart, commands and the start of its timeline."""
        try:
            project, session_id, entries = await self._entries(request)
        except NotFoundError as exc:
            return self._error(404, "not found", str(exc))
        except SessionError as exc:
            return self._error(503, "the session store failed", str(exc))
        base = session_url(project, session_id)

        followed = self.followed.get(project, session_id)

        def render() -> str:
            with followed.lock:
                followed.catch_up(entries)
                summary, timeline = followed.summarizer.summary(), followed.timeline
                return self.renderer.session_page(
                    timeline.roots,
                    summary=summary,
                    turns=timeline.turns,
                    project=project,
                    base=base,
                    count=timeline.count,
                    total_items=len(timeline.roots),
                    commands=_commands(summary, self.store_url),
                    store_name=self.store_name,
                )

        return HTMLResponse(await anyio.to_thread.run_sync(render))

    async def items(self, request: Request) -> Response:
        """A range of a session's timeline items (``?start=&stop=``), for the page to fill in."""
        try:
            project, session_id, entries = await self._entries(request)
            start, stop = int(request.query_params["start"]), int(request.query_params["stop"])
        except (NotFoundError, KeyError, ValueError):
            return PlainTextResponse("not found", 404)
        except SessionError as exc:
            return PlainTextResponse(self.source.redactor.text(str(exc)), 503)
        base = session_url(project, session_id)

        followed = self.followed.get(project, session_id)

        def render() -> str:
            with followed.lock:
                followed.catch_up(entries)
                timeline = followed.timeline
                low = max(0, min(start, len(timeline.roots)))
                high = max(low, min(stop, low + MAX_RANGE, len(timeline.roots)))
                return self.renderer.items(timeline.roots, low, high, base, timeline.count)

        return HTMLResponse(await anyio.to_thread.run_sync(render))

    async def full(self, request: Request) -> Response:
        """The whole text of a value the page cut short, as plain text."""
        try:
            _, _, entries = await self._entries(request)
            index, block, part = (int(request.path_params[k]) for k in ("entry", "block", "part"))
        except (NotFoundError, ValueError):
            return PlainTextResponse("not found", 404)
        except SessionError as exc:
            return PlainTextResponse(self.source.redactor.text(str(exc)), 503)
        values = full_values(entries[index], block) if 0 <= index < len(entries) else []
        if not 0 <= part < len(values) or values[part][0] == "image":
            return PlainTextResponse("not found", 404)
        return PlainTextResponse(values[part][1])

    async def pygments(self, request: Request) -> Response:
        """The code-highlighting colours."""
        return Response(self.css, media_type="text/css")

    async def events(self, request: Request) -> Response:
        """Server-sent events: the page's changes as entries are appended (by this process or any other)."""
        from sse_starlette.sse import EventSourceResponse

        project, session_id = request.path_params["project"], request.path_params["session_id"]
        try:
            await self.source.check(project, session_id)  # reading it is the stream's job
            # a reconnecting EventSource says where it got to (the id of the last event it applied)
            after = int(request.headers.get("last-event-id") or request.query_params.get("after", "0"))
        except (NotFoundError, ValueError):
            return PlainTextResponse("not found", 404)
        followed = self.followed.get(project, session_id)
        watch = Watch(self.source, self.renderer, followed, max(0, after), self.settings.poll)
        return EventSourceResponse(
            watch.events(), ping=15, shutdown_event=watch.stop, shutdown_grace_period=2
        )


async def _warm_up(pages: Pages) -> None:
    """What the first pages would otherwise wait for: the list's summaries, the highlighter's first use."""
    await anyio.to_thread.run_sync(pages.renderer.markdown, "```python\nwarm = 'up'\n```")
    try:
        await pages.source.summaries(pages.source.project)
    except (NotFoundError, SessionError) as exc:  # the list page will say so when it is asked for
        logger.warning("could not read the sessions: %s", pages.source.redactor.text(str(exc)))


def create_app(source: Source, settings: Settings | None = None) -> Guard:
    """The viewer as an ASGI app over ``source``."""
    settings = settings or Settings()
    pages = Pages(source, settings)
    session = "/s/{project}/{session_id}"
    routes = [
        Route("/", pages.sessions),
        Route(session, pages.session),
        Route(session + "/events", pages.events),
        Route(session + "/items", pages.items),
        Route(session + "/full/{entry}/{block}/{part}", pages.full),
        Route("/pygments.css", pages.pygments),
        Mount("/static", StaticFiles(packages=[("openagent_viewer", "static")]), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_warm_up, pages)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            await source.aclose()  # the store's connections, when the viewer opened it

    return Guard(Starlette(routes=routes, lifespan=lifespan), settings)
