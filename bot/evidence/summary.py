"""Post-match figures: from the derived counters, in the Home Office shape."""

from __future__ import annotations

import asyncio
from datetime import UTC, tzinfo
from typing import Any

from bot.domain.clock import iso, parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.fixture.key_timings import BY_KEY, latest
from bot.domain.grounds import Ground
from bot.domain.vocab import BAN_TYPES, INCIDENT_TYPES, OFFENCES, PHASES
from bot.store import Store
from bot.store.facades import StoreFacades


def _group(counts: dict[str, int], prefix: str) -> dict[str, int]:
    n = len(prefix)
    return dict(sorted(((k[n:], v) for k, v in counts.items() if k.startswith(prefix) and v),
                       key=lambda kv: (-kv[1], kv[0])))


def figures_from_counts(counts: dict[str, int]) -> dict[str, Any]:
    """Summary figures from a counts mapping (the store's, or a recount's)."""
    return {
        "incidents": {
            "total": counts.get("inc:total", 0),
            "open": counts.get("inc:open", 0),
            "closed": counts.get("inc:closed", 0),
            "by_type": _group(counts, "inc:type:"),
            "by_severity": _group(counts, "inc:sev:"),
            "by_location": _group(counts, "inc:loc:"),
            "by_phase": _group(counts, "inc:phase:"),
            "by_affiliation": _group(counts, "inc:aff:"),
        },
        "ejections": counts.get("inc:type:ejection", 0),
        "arrests": {
            "total": counts.get("arr:total", 0),
            "by_offence": _group(counts, "arr:o:"),
            "inside_outside": _group(counts, "arr:io:"),
            "home_away": _group(counts, "arr:sd:"),
        },
        "bans": {
            "total": counts.get("ban:total", 0),
            "by_type": _group(counts, "ban:type:"),
            "by_status": _group(counts, "ban:status:"),
            "home_away": _group(counts, "ban:sd:"),
        },
    }


async def summary_figures(store: Store, facades: StoreFacades, fx: Fixture) -> dict[str, Any]:
    """Everything the post-match summary says, as plain data (the --json output)."""
    counts, rt, timings = await asyncio.gather(
        store.counts(fx.id), facades.views.response_times(fx.id), facades.timings.read(fx.id))
    figures = figures_from_counts(counts)
    # every open incident, never the first 50 only: a list that stops must say so, and
    # this one does not stop
    open_ids = await facades.views.open_ids(fx.id, max(figures["incidents"]["open"], 1))

    figures["fixture"] = {"id": fx.id, "home": fx.home, "away": fx.away,
                          "kickoff": fx.kickoff.isoformat(), "category": fx.category,
                          "ground": fx.ground, "phase": fx.phase, "season": fx.season}
    figures["open_incidents"] = open_ids
    figures["response_times"] = rt
    figures["key_timings"] = {t.key: iso(t.at) for t in latest(timings)}
    return figures


def mmss(seconds: float | int | None) -> str:
    """90 -> '1m30', None -> '–'."""
    if seconds is None:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}"
    return f"{s // 3600}h{s % 3600 // 60:02d}"


def _top(d: dict[str, int], label: Any, n: int = 6) -> str:
    items = list(d.items())
    text = ", ".join(f"{label(k)} {v}" for k, v in items[:n])
    return text + (f", +{len(items) - n} more" if len(items) > n else "") if items else "none"


def _phase_order(phase: str) -> int:
    keys = list(PHASES.labels)
    return keys.index(phase) if phase in keys else len(keys)


def summary_text(fig: dict[str, Any], ground: Ground, tz: tzinfo = UTC) -> str:
    """The summary as a few dense lines for chat."""
    inc, arr, ban, rt = fig["incidents"], fig["arrests"], fig["bans"], fig["response_times"]
    io, ha = arr["inside_outside"], arr["home_away"]
    lines = [
        f"Arrests: {arr['total']} (inside {io.get('inside', 0)}, outside {io.get('outside', 0)};"
        f" home {ha.get('home', 0)}, away {ha.get('away', 0)}"
        + (f", neutral {ha['neutral']}" if ha.get("neutral") else "") + ")",
        "  by offence: " + _top(arr["by_offence"], OFFENCES.label, 13),
        f"Banning orders: {ban['total']} · " + _top(ban["by_type"], BAN_TYPES.label)
        + " · " + _top(ban["by_status"], lambda k: k.replace("_", " ")),
        f"Incidents: {inc['total']} ({inc['open']} open) · ejections {fig['ejections']}",
        "  by type: " + _top(inc["by_type"], INCIDENT_TYPES.label),
        "  by severity: " + _top(dict(sorted(inc["by_severity"].items(),  # S5 first
                                             key=lambda kv: -int(kv[0]))), lambda k: f"S{k}", 5),
        "  by location: " + _top(inc["by_location"], ground.label, 4),
        "  by phase: " + _top(dict(sorted(inc["by_phase"].items(),  # in match order
                                          key=lambda kv: _phase_order(kv[0]))), PHASES.label, 8),
        f"Time to acknowledge: median {mmss(rt['median_ack_s'])}, worst {mmss(rt['worst_ack_s'])}"
        f" · to close: median {mmss(rt['median_close_s'])}, worst {mmss(rt['worst_close_s'])}",
    ]
    if fig.get("key_timings"):
        lines.append("Key timings: " + " · ".join(
            f"{BY_KEY[k].label} {parse_iso(at).astimezone(tz):%H:%M}"
            for k, at in fig["key_timings"].items() if k in BY_KEY))
    if fig["open_incidents"]:
        shown, n = fig["open_incidents"][:10], len(fig["open_incidents"])
        lines.append(f"Still open ({n}): " + ", ".join(shown)
                     + (f", +{n - len(shown)} more (summary --json lists all)"
                        if n > len(shown) else ""))
    return "\n".join(lines)
