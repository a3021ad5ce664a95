"""The decision log panel of the control-room view: every entry in order, corrections kept
and marked, printable (severity and state in words, not colour)."""

from __future__ import annotations

from html import escape
from zoneinfo import ZoneInfo

from bot.domain.decision_log import DECISION_KINDS, LogView
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.vocab import PHASES
from bot.web.pages import ROOT, _doc, drill_badge


def decisions_page(fx: Fixture, view: LogView, tz: ZoneInfo, root: str = ROOT) -> str:
    """The fixture's decision log as a page."""
    items = []
    for d in view.entries:
        later = view.superseded_by(d.n)
        why = view.rationale_of(d.n)
        facts = [f"<dt>Decision</dt><dd>{escape(d.decision)}</dd>"]
        if d.kind and d.kind != "other":
            facts.append(f"<dt>Type</dt><dd>{escape(DECISION_KINDS.get(d.kind, d.kind))}</dd>")
        facts.append(
            f"<dt>Rationale</dt><dd>{escape(why) if why else '<em>not yet given</em>'}</dd>")
        if d.options:
            facts.append(f"<dt>Options considered</dt><dd>{escape(d.options)}</dd>")
        if d.incidents:
            facts.append("<dt>Incidents</dt><dd>"
                         + ", ".join(f"INC-{i}" for i in d.incidents) + "</dd>")
        if d.supersedes:
            facts.append(f"<dt>Supersedes</dt><dd>D-{d.supersedes}</dd>")
        if d.source:
            facts.append(f"<dt>Taken through</dt><dd>/{escape(d.source)}</dd>")
        mark = (f" <strong class=\"superseded\">SUPERSEDED by D-{later}</strong>"
                if later else "")
        items.append(
            f"<li id=\"{d.id}\" class=\"decision{' superseded' if later else ''}\">"
            f"<h3>{d.id} · {d.at.astimezone(tz):%H:%M:%S} · "
            f"{escape(PHASES.label(d.phase) if d.phase else '')} · "
            f"<bdi>{escape(d.name or d.by)}</bdi> ({escape(d.role.replace('_', ' '))}){mark}"
            f"</h3><dl>{''.join(facts)}</dl></li>")
    body = (f"<header class=\"print-head\"><h1>{drill_badge(fx)}{escape(fx.title)}: decision "
            f"log</h1><nav class=\"no-print\"><a href=\"./\">Back to the live screen</a>"
            f"</nav></header><main class=\"decisions\">"
            + (f"<ol>{''.join(items)}</ol>" if items else "<p>No decisions logged yet.</p>")
            + "</main>")
    return _doc(f"{fx.title} · decision log", body, cls="postmatch", root=root)
