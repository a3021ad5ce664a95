"""The human-readable Markdown report of an evidence export."""

from __future__ import annotations

from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event
from bot.evidence.club_label import club_of
from bot.store import Store
from bot.store.facades import StoreFacades


def _secs(v: str | float | None) -> str:
    if v in (None, ""):
        return "–"
    s = int(float(v))  # type: ignore[arg-type]
    return f"{s // 60}m{s % 60:02d}s"


async def report_markdown(store: Store, facades: StoreFacades, fx: Fixture, events: list[Event],
                          head: str,
                          public_key: str = "") -> str:
    """Fixture, figures, every incident with its response times and timeline, chain head."""
    from bot.evidence.summary import summary_figures, summary_text

    fig = await summary_figures(store, facades, fx)
    lines = [f"# Matchday evidence export: {fx.title}", "",
             f"- Fixture: `{fx.id}` · {fx.competition} · kick-off {fx.kickoff.isoformat()}",
             *([f"- Club: `{club}` (this club's records only)"] if (club := club_of(store))
               else []),
             f"- Ground: {fx.ground} · category {fx.category}",
             f"- Events: {len(events)} · chain head SHA-256 `{head}`",
             f"- Manifest signed (Ed25519) by key `{public_key}`",
             "- Verify with `matchday verify <this folder> --key <key>`, the key as "
             "`matchday keys` prints it on the exporting installation.", "", "## Figures", "",
             "```",
             summary_text(fig, _NoGround()), "```", "", "## Incidents", ""]
    by_inc: dict[str, list[Event]] = {}
    for ev in events:
        key = ev.data.get("id") or ev.data.get("incident") or ""
        if isinstance(key, str) and key.startswith("INC-"):
            by_inc.setdefault(key, []).append(ev)
    for iid in sorted(by_inc, key=lambda k: int(k[4:])):
        inc = await store.incident(fx.id, int(iid[4:]))
        if inc is None:
            lines.append(f"### {iid} (no current view)")
        else:
            lines.append(f"### {iid} {inc.what}, severity "
                         f"{inc.severity}, {inc.location} — {inc.status}")
            lines.append(f"Time to acknowledge {_secs(inc.tta_s)}, to close "
                         f"{_secs(inc.ttc_s)}.")
        lines.append("")
        for ev in by_inc[iid]:
            detail = ev.data.get("text") or ev.data.get("note") or ev.data.get("description") \
                or ""
            if ev.kind == "incident.status":
                detail = f"{ev.data.get('from', '')} → {ev.data.get('to', '')} {detail}".strip()
            lines.append(f"- {ev.at} `{ev.kind}` by {ev.by} ({ev.role}): {detail}")
        lines.append("")
    return "\n".join(lines) + "\n"


class _NoGround:
    """Location labels as zone ids (the export names places by their stable keys)."""

    def label(self, zone_id: str) -> str:
        """The zone id itself."""
        return zone_id
