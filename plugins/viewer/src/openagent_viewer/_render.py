"""HTML: Jinja templates, markdown with highlighted code, the tokens/cost chart and formatting filters.

Templates autoescape; markdown is markdown-it-py with raw HTML off, code highlighted by Pygments; the chart
is inline SVG.

Everything that came from a session reaches the page through autoescaping or markdown-it's escaping; the
only markup built here by hand is the chart, from numbers.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from ._summary import Summary, number, parse_time
from ._timeline import Card, Node, Op, TurnStat

__all__ = ["FIRST_ITEMS", "RANGE_ITEMS", "Renderer", "session_url"]

FIRST_ITEMS, RANGE_ITEMS = 100, 200
"""Timeline items on the page as it loads, and per range loaded as the reader scrolls to it."""


def session_url(project: str, session_id: str) -> str:
    """The page of a session (both parts percent-encoded: they came from a store)."""
    return f"/s/{quote(project, safe='')}/{quote(session_id, safe='')}"


@functools.lru_cache(maxsize=64)
def _lexer(name: str) -> Any:
    """A Pygments lexer for a fence's language name, or None (one instance per name: they are reusable)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


@functools.lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)  # building one is slow (it makes its style sheet): make one


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Pygments HTML for a fenced block in a language it knows; '' lets markdown-it escape it plainly."""
    from pygments import highlight

    lexer = _lexer(lang.split()[0]) if lang.strip() else None
    return "" if lexer is None else str(highlight(code, lexer, _formatter()))


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    default = md.renderer.rules.get("link_open")

    def link_open(tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
        tokens[idx].attrSet("target", "_blank")
        if default is not None:
            return str(default(tokens, idx, options, env))
        return str(md.renderer.renderToken(tokens, idx, options, env))

    md.add_render_rule("link_open", link_open)
    return md


def tokens(value: Any) -> str:
    """``1234`` → ``1,234``; ten million and more as ``12.3M``; anything not a number as 0."""
    count = int(number(value) or 0)
    return f"{count / 1e6:.1f}M" if count >= 10_000_000 else f"{count:,}"


def cost(value: Any) -> str:
    """Dollars with four significant digits, or a dash when the provider gave no price."""
    amount = number(value)
    if amount is None:
        return "—"
    return "$0" if amount == 0 else f"${amount:.4g}" if abs(amount) < 1 else f"${amount:,.2f}"


def duration(value: Any) -> str:
    """Milliseconds as ``850 ms``, ``12.3 s``, ``3 m 12 s`` or ``2 h 5 m``; a dash for no number."""
    ms = number(value)
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{int(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms) // 1000, 60)
    return f"{minutes} m {seconds} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} m"


def _moment(value: Any) -> datetime | None:
    stamp = number(value)
    if stamp is None:
        return parse_time(value)
    try:
        return datetime.fromtimestamp(stamp / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def when(value: Any) -> str:
    """An ISO timestamp or epoch milliseconds as ``2026-11-01 14:03:07`` UTC (the page localises it)."""
    moment = _moment(value)
    if moment is None:
        return ""
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M:%S")


def iso(value: Any) -> str:
    """The machine-readable form of `when`, for ``<time datetime>``."""
    moment = _moment(value)
    return moment.isoformat(timespec="seconds") if moment else ""


def chart(turns: Sequence[TurnStat], bars: int = 300) -> Markup:
    """Tokens per turn as bars and the running cost as a line, in SVG drawn from numbers only; a long
    session's turns are summed into at most ``bars`` bars.
    """  # noqa: D205
    if not turns:
        return Markup('<p class="muted">no model turns yet</p>')
    width, height = 600, 80
    per = -(-len(turns) // bars)  # turns per bar
    groups = [turns[i : i + per] for i in range(0, len(turns), per)]
    sums = [sum(t.tokens for t in group) for group in groups]
    most, step = max(sums) or 1, width / len(groups)
    shapes = []
    for i, (group, total) in enumerate(zip(groups, sums, strict=True)):
        bar = max(1.0, total / most * (height - 4))
        spent = sum(t.cost_usd or 0 for t in group)
        name = f"turn {group[0].number}" + (f"–{group[-1].number}" if len(group) > 1 else "")
        latency = duration(group[0].latency_ms) if len(group) == 1 else f"{len(group)} turns"
        title = f"{name}: {total:,} tokens, {cost(spent)}, {latency}"
        shapes.append(
            f'<rect class="bar" x="{i * step:.2f}" y="{height - bar:.2f}" width="{max(step - 1, 0.5):.2f}" '
            f'height="{bar:.2f}"><title>{escape(title)}</title></rect>'
        )
    if any(t.cost_usd for t in turns):
        spent, points, total_cost = 0.0, [], sum(t.cost_usd or 0 for t in turns) or 1.0
        for i, group in enumerate(groups):
            spent += sum(t.cost_usd or 0 for t in group)
            points.append(f"{(i + 0.5) * step:.2f},{height - spent / total_cost * (height - 4):.2f}")
        shapes.append(f'<polyline class="cost" points="{" ".join(points)}"/>')
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" preserveAspectRatio="none" role="img" '
        f'aria-label="tokens per turn and running cost">{"".join(shapes)}</svg>'
    )


class Renderer:
    """Renders pages and fragments."""

    def __init__(self) -> None:
        self.env = Environment(
            loader=PackageLoader("openagent_viewer", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._md = _markdown()
        self.markdown = functools.lru_cache(maxsize=2048)(self._render_markdown)
        self.env.filters.update(
            markdown=self.markdown, tokens=tokens, cost=cost, duration=duration, when=when, iso=iso
        )
        self.env.globals.update(chart=chart, session_url=session_url, shell=shlex.quote)
        self._nodes = self.env.get_template("_nodes.html").module

    def _render_markdown(self, text: str) -> Markup:
        return Markup(self._md.render(text))  # markdown-it escapes: html=False leaves no raw HTML through

    def page(self, name: str, **context: Any) -> str:
        """A whole page."""
        return self.env.get_template(name).render(**context)

    def session_page(self, roots: Sequence[Node], **context: Any) -> str:
        """The session page: its head, the first `FIRST_ITEMS` items, and a placeholder per later range that
        the page's script fills (`items`) when it scrolls into view.
        """  # noqa: D205
        ranges = [
            (start, min(start + RANGE_ITEMS, len(roots)))
            for start in range(FIRST_ITEMS, len(roots), RANGE_ITEMS)
        ]
        return self.page("session.html", items=roots[:FIRST_ITEMS], ranges=ranges, **context)

    def items(self, roots: Sequence[Node], start: int, stop: int, base: str, count: int) -> str:
        """Items ``start`` to ``stop``, as they stand after ``count`` entries (the page skips live changes
        this already has).
        """  # noqa: D205
        body = str(self._nodes.nodes(roots[start:stop], base))
        return f'<div class="loaded" data-count="{count}">{body}</div>'

    def row(self, summary: Summary) -> Markup:
        """One row of the sessions list."""
        return Markup(self._nodes.row(summary))

    def summary(self, summary: Summary) -> str:
        """The session page's summary line (an element with id ``summary``)."""
        return str(self._nodes.summary_line(summary))

    def ops(
        self, ops: Iterable[Op], base: str, turns: Sequence[TurnStat], count: int
    ) -> list[dict[str, str]]:
        """Live changes as ``{"target", "mode", "html"}`` for the page's script to apply.

        Everything is drawn as it stands after ``count`` entries; an appended item says so (``data-count``),
        so the page skips the later changes inside it that it already shows.
        """
        out: list[dict[str, str]] = []
        redraw = False
        for op in ops:
            if op[0] == "append":
                html = f'<div class="loaded" data-count="{count}">{self._nodes.node(op[2], base)}</div>'
                out.append({"target": op[1], "mode": "append", "html": html})
            elif op[0] == "card":
                out += self._card(op[1], base)
            else:
                redraw = True  # once per batch, after the rest
        if redraw:
            out.append({"target": "chart", "mode": "replace", "html": str(self._nodes.chart_box(turns))})
        return out

    def _card(self, card: Card, base: str) -> list[dict[str, str]]:
        return [
            {"target": f"{card.dom}-state", "mode": "replace", "html": str(self._nodes.card_state(card))},
            {
                "target": f"{card.dom}-result",
                "mode": "replace",
                "html": str(self._nodes.card_result(card, base)),
            },
        ]


def pygments_css() -> str:
    """The highlighting colours, for ``/pygments.css``."""
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(style="default").get_style_defs(".md pre code"))
