"""One incident's full timeline: every status change, update and piece of evidence."""

from __future__ import annotations

from bot.core.dispatch import Ctx, UsageError
from bot.core.messages import Result
from bot.domain.models import Fixture, incident_id
from handlers.cards import card, clock_time

KIND_WORDS = {
    "incident.reported": "reported", "incident.status": "status", "incident.update": "update",
    "incident.evidence": "evidence", "incident.escalated": "escalated",
    "incident.amended": "amended", "incident.merged": "merged report",
    "incident.unmerged": "report split out",
    "incident.reminder": "reminder", "arrest.recorded": "arrest", "ban.recorded": "ban",
}


async def timeline(ctx: Ctx, fx: Fixture, n: int) -> Result:
    """/incident <id>: the card plus every event about it, oldest first."""
    inc = await ctx.store.incident(fx.id, n)
    if inc is None:
        raise UsageError(f"No incident INC-{n} in this fixture.")
    tz = ctx.core.settings.zone
    view = card(inc, ctx.ground(fx), tz)
    iid = incident_id(n)
    lines = []
    for ev in await ctx.store.events(fx.id):
        if ev.data.get("id") != iid and ev.data.get("incident") != iid:
            continue  # (arrests and bans link with data["incident"])
        who = ev.by.split(":", 1)[-1]
        what = KIND_WORDS.get(ev.kind, ev.kind)
        if ev.kind == "incident.status":
            what = f"→ {ev.data.get('to', '').replace('_', ' ')}"
        detail = ev.data.get("text") or ev.data.get("note") or ""
        if ev.kind in ("arrest.recorded", "ban.recorded"):  # counts only, never refs
            detail = f"{ev.data.get('count', 1)} × {ev.data.get('offence') or ev.data.get('type')}"
        lines.append(f"{clock_time(ev.at, tz)} {what} ({who})" + (f": {detail}" if detail else ""))
    view.text += "\n\nTimeline:\n" + "\n".join(lines)
    view.buttons = []
    return Result(view)
