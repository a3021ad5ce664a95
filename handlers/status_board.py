"""The commander's status, fitted to one phone screen (at most 15 lines with the title)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from bot.core.dispatch import Ctx
from bot.domain.clock import iso, parse_iso
from bot.domain.grounds import Ground
from bot.domain.ledger import Event
from bot.domain.models import Fixture
from bot.domain.vocab import INCIDENT_TYPES, PHASES
from bot.evidence.summary import mmss
from handlers.cards import SEV_MARK, age

MAX_LINES = 15  # including the title line
FIXED = 6  # title, phase, open, last 15 minutes, arrests and bans, median ack


def incident_line(inc: dict[str, str], ground: Ground, now: datetime) -> str:
    """'INC-7 🟠4 Throwing missiles · STB walkway · 4m · Supervisor North'."""
    sev = int(inc.get("severity", 1))
    owner = inc.get("owner_name") or ("UNACKED" if inc.get("status") == "reported"
                                      else inc.get("status", "").replace("_", " "))
    place = ground.label(inc["location"])
    place = place if len(place) <= 26 else place[:25] + "…"
    return (f"{inc['id']} {SEV_MARK.get(sev, '')}{sev} {INCIDENT_TYPES.label(inc['type'])} · "
            f"{place} · {age(inc['reported_at'], now)} · {owner}")


def changes_line(events: list[Event], now: datetime) -> str:
    """What changed in the last 15 minutes, in one line."""
    since = now - timedelta(minutes=15)
    fresh = [e for e in events if parse_iso(e.at) >= since]
    new = [e.data.get("id", "") for e in fresh if e.kind == "incident.reported"]
    n = {
        "new": len(new),
        "acked": sum(e.kind == "incident.status" and e.data.get("from") == "reported"
                     for e in fresh),
        "closed": sum(e.kind == "incident.status" and e.data.get("cls") == "close"
                      for e in fresh),
        "escalated": sum(e.kind == "incident.escalated" for e in fresh),
        "merged": sum(e.kind == "incident.merged" for e in fresh),
        "amended": sum(e.kind == "incident.amended" or bool(e.data.get("amended"))
                       for e in fresh),
        "arrests": sum(int(e.data.get("count", 1)) for e in fresh
                       if e.kind == "arrest.recorded"),
        "bans": sum(int(e.data.get("count", 1)) for e in fresh if e.kind == "ban.recorded"),
    }
    parts = [f"{v} {k}" for k, v in n.items() if v]
    tail = f" ({', '.join(new[-3:])}{'…' if len(new) > 3 else ''} new)" if new else ""
    return "Last 15 min: " + (", ".join(parts) if parts else "no change") + tail


async def board(ctx: Ctx, fx: Fixture, extras: list[str]) -> list[str]:
    """Status lines (without the title): phase; open by severity, oldest first within each,
    with age and owner; unacknowledged; last 15 minutes; arrests and bans; median time to
    acknowledge; then other parts' lines (missed briefings). At most MAX_LINES with title."""
    ground = ctx.ground(fx)
    budget = max(0, MAX_LINES - FIXED - len(extras) - 1)  # -1: the "+N more" line
    # Independent reads, in flight together (one round trip of latency, not four).
    (open_list, by_sev), counts, rt, recent = await asyncio.gather(
        ctx.store.open_incidents(fx.id, limit=max(budget + 1, 1)),
        ctx.store.counts(fx.id),
        ctx.store.response_times(fx.id),
        ctx.store.events_since(fx.id, iso(ctx.now - timedelta(minutes=15))))
    tz = ctx.core.settings.zone
    total = sum(by_sev[s] for s in range(1, 6))
    if total == budget + 1:
        budget += 1  # every incident fits when no "+N more" line is needed
    shown = open_list[:budget]
    groups = " ".join(f"{SEV_MARK[s]}{s}×{by_sev[s]}" for s in range(5, 0, -1) if by_sev[s])
    lines = [f"Phase: {PHASES.label(fx.phase)} · {ctx.now.astimezone(tz):%H:%M} · "
             f"cat {fx.category}",
             f"Open: {total} (unacknowledged {by_sev[0]})" + (f" · {groups}" if groups else "")]
    lines += [incident_line(i, ground, ctx.now) for i in shown]
    if total > len(shown):
        hidden = dict(by_sev)
        for i in shown:
            hidden[int(i["severity"])] -= 1
        rest = " ".join(f"{SEV_MARK[s]}{s}×{hidden[s]}" for s in range(5, 0, -1) if hidden[s])
        lines.append(f"+{total - len(shown)} more open: {rest}")
    lines.append(changes_line(recent, ctx.now))
    lines.append(f"Arrests: {counts.get('arr:total', 0)} (inside "
                 f"{counts.get('arr:io:inside', 0)}, outside {counts.get('arr:io:outside', 0)})"
                 f" · Bans: {counts.get('ban:total', 0)}")
    lines.append(f"Median time to acknowledge tonight: {mmss(rt['median_ack_s'])} "
                 f"(worst {mmss(rt['worst_ack_s'])}, {rt['acknowledged']} acknowledged)")
    return lines + extras
