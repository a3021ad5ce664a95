"""How incidents look in chat: the live card, the status board, timelines, HOT prompts."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from bot.core.dispatch import Ctx
from bot.domain.clock import iso, parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.grounds import Ground
from bot.domain.incident.incident_card import IncidentCard
from bot.domain.incident.incident_model import Incident
from bot.domain.incident.when import LATE_REPORT_S, PLATFORM_SKEW_S, gap_s
from bot.domain.ledger import Event
from bot.domain.messages import Button, Reply
from bot.domain.plurals import counted
from bot.domain.vocab import AFFILIATIONS, PHASES, ROLES, SEVERITIES, STATUSES
from bot.evidence.summary import mmss

SEV_MARK = {1: "⚪", 2: "🟢", 3: "🟡", 4: "🟠", 5: "🔴"}


def age(since_iso: str, now: datetime) -> str:
    """'4m', '1h05' — how long ago, short enough for a phone line."""
    return duration(int((now - parse_iso(since_iso)).total_seconds()))


def duration(seconds: int) -> str:
    """'45s', '4m', '1h05' — a span of seconds, short enough for a phone line."""
    secs = max(0, seconds)
    if secs < 60:
        return f"{secs}s"
    mins = secs // 60
    return f"{mins}m" if mins < 60 else f"{mins // 60}h{mins % 60:02d}"


def clock_time(at_iso: str, ground_tz: object) -> str:
    """HH:MM local time of an ISO instant."""
    return parse_iso(at_iso).astimezone(ground_tz).strftime("%H:%M")  # type: ignore[arg-type]


def _secs(s: int) -> str:
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}" if s < 3600 else \
        f"{s // 3600}h{s % 3600 // 60:02d}"


def lifecycle_lines(inc: Incident) -> list[str]:
    """Response times, escalation and corrections of an incident, for its card."""
    times = []
    if inc.tta_s is not None:
        times.append(f"acknowledged in {_secs(inc.tta_s)}"
                     + (f" (by {inc.marks.get('ack_by_name', 'police')} handing it to police)"
                        if inc.marks.get("ack_via") == "handover" else ""))
    if inc.ttc_s is not None:
        times.append(f"closed in {_secs(inc.ttc_s)}")
    if inc.escalated_tier:
        times.append(f"escalated (tier {inc.escalated_tier})")
    out = ["Response: " + ", ".join(times)] if times else []
    now = {"type": inc.type, "severity": str(inc.severity), "location": inc.location}
    was = [f"{f} {inc.orig[f]}" for f in ("type", "severity", "location")
           if inc.orig.get(f) and inc.orig[f] != now[f]]
    if was:
        out.append("Amended; originally " + ", ".join(was))
    return out


def _hm(at_iso: str, tz: object, seconds: bool = False) -> str:
    fmt = "%H:%M:%S" if seconds else "%H:%M"
    return parse_iso(at_iso).astimezone(tz).strftime(fmt)  # type: ignore[arg-type]


def skew_lines(inc: Incident, tz: object) -> list[str]:
    """When it happened and when the platform sent it, where these differ enough from our
    receipt time to matter (a late report, a phone that sat on a message)."""
    out = []
    late = gap_s(inc.occurred_at, inc.reported_at)
    if late is not None and late >= LATE_REPORT_S:
        out.append(f"Happened {_hm(inc.occurred_at, tz)}, reported {_secs(late)} later")
    skew = gap_s(inc.platform_at, inc.reported_at)
    if skew is not None and abs(skew) >= PLATFORM_SKEW_S:
        how = f"received {_secs(skew)} after" if skew > 0 else \
            f"the platform's clock {_secs(-skew)} ahead of"
        out.append(f"Sent {_hm(inc.platform_at, tz, True)} (platform time), {how} "
                   f"our {_hm(inc.reported_at, tz, True)}")
    return out


def times_line(inc: Incident, tz: object) -> str:
    """Every time the incident has: happened, sent, received, acknowledged, resolved."""
    t = inc.times
    parts = [f"{word} {_hm(t[k], tz, True)}" for k, word in (
        ("occurred_at", "happened"), ("platform_at", "sent"), ("reported_at", "received"),
        ("acknowledged_at", "acknowledged"), ("resolved_at", "resolved")) if t[k]]
    return "Times: " + " · ".join(parts)


def card(inc: Incident, ground: Ground, tz: object) -> Reply:
    """The live incident message for control rooms, edited in place as it changes: the one
    renderer of an incident's card (its facts travel with it as `Reply.card`)."""
    sev = inc.severity
    status = inc.status
    lines = [
        f"Severity {SEVERITIES.get(sev, sev)}",
        f"Where: {ground.label(inc.location)}",
        f"Reported {clock_time(inc.reported_at, tz)} by {inc.reporter_name or 'steward'}"
        f" ({inc.phase.replace('_', ' ')})",
        f"Status: {STATUSES.label(status)}"
        + (f" by {inc.status_by_name}" if inc.status_by_name else "")
        + (f" · owner {inc.owner_name}" if inc.owner_name else ""),
    ]
    aff = inc.affiliation
    people = inc.people
    if aff != "unknown" or people:
        lines.append(f"Fans: {AFFILIATIONS.label(aff)}" + (f", about {people}" if people else ""))
    if inc.description:
        lines.append(f"“{inc.description}”")
    lines += skew_lines(inc, tz)
    lines += lifecycle_lines(inc)
    extras = []
    for count, word in ((inc.updates, "update"), (inc.evidence, "evidence item"),
                        (inc.arrests, "arrest"), (inc.merged, "merged report")):
        if count:
            extras.append(counted(count, word))
    if extras:
        lines.append(" · ".join(extras))
    n = inc.n
    buttons: list[list[Button]] = []
    if status == "reported":
        buttons = [[Button("Acknowledge", f"/ack {n}", "primary"),
                    Button("Dispatch", f"/dispatch {n}"), Button("Resolve", f"/resolve {n}")]]
    elif status != "closed":
        buttons = [[Button("Dispatch", f"/dispatch {n}"), Button("On scene", f"/onscene {n}"),
                    Button("Resolve", f"/resolve {n}", "danger")]]
    title = f"{SEV_MARK.get(sev, '')} {inc.id} {inc.what}"
    if status == "closed":
        title += " (closed)"
    return Reply(text="\n".join(lines), title=title, buttons=buttons,
                 card=IncidentCard.of(inc, ground))


def alert(inc: Incident, ground: Ground, title: str, tail: str) -> Reply:
    """An escalation or reminder about an incident: what, where, how bad and who reported it,
    then `tail` (what happens now), with the buttons its state allows."""
    reporter = inc.reporter_name or ROLES.label(inc.reporter_role or "steward")
    n = inc.n
    text = (f"{inc.what} at {ground.label(inc.location)}, "
            f"severity {inc.severity}, reported by {reporter}.\n{tail}")
    buttons = [Button("Acknowledge", f"/ack {n}", "primary"), Button("Show", f"/incident {n}")]
    if inc.status != "reported":
        buttons = [Button("Show", f"/incident {n}"), Button("Resolve", f"/resolve {n}")]
    return Reply(text=text, title=title, buttons=[buttons], card=IncidentCard.of(inc, ground))


# ---------------------------------------------------------------- the status board
MAX_LINES = 15  # including the title line
PLACE_WIDTH = 26  # a place's full name on a status line up to this long, else its short name
FIXED = 6  # title, phase, open, last 15 minutes, arrests and bans, median ack


def incident_line(inc: Incident, ground: Ground, now: datetime) -> str:
    """'INC-7 🟠4 Throwing missiles · STB walkway · 4m · Supervisor North'."""
    sev = inc.severity
    owner = inc.owner_name or ("UNACKED" if inc.status == "reported"
                               else inc.status.replace("_", " "))
    place = ground.short_label(inc.location, PLACE_WIDTH)
    return (f"{inc.id} {SEV_MARK.get(sev, '')}{sev} {inc.what} · "
            f"{place} · {age(inc.reported_at, now)} · {owner}")


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
        ctx.facades.views.response_times(fx.id),
        ctx.facades.views.events_since(fx.id, iso(ctx.now - timedelta(minutes=15))))
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
            hidden[i.severity] -= 1
        rest = " ".join(f"{SEV_MARK[s]}{s}×{hidden[s]}" for s in range(5, 0, -1) if hidden[s])
        lines.append(f"+{total - len(shown)} more open: {rest}")
    lines.append(changes_line(recent, ctx.now))
    lines.append(f"Arrests: {counts.get('arr:total', 0)} (inside "
                 f"{counts.get('arr:io:inside', 0)}, outside {counts.get('arr:io:outside', 0)})"
                 f" · Bans: {counts.get('ban:total', 0)}")
    lines.append(f"Median time to acknowledge tonight: {mmss(rt['median_ack_s'])} "
                 f"(worst {mmss(rt['worst_ack_s'])}, {rt['acknowledged']} acknowledged)")
    return lines + extras


# ---------------------------------------------------------------- timelines
KIND_WORDS = {
    "incident.reported": "reported", "incident.status": "status", "incident.update": "update",
    "incident.evidence": "evidence", "incident.escalated": "escalated",
    "incident.live_location": "live location moved",
    "incident.amended": "amended", "incident.merged": "merged report",
    "incident.unmerged": "report split out",
    "incident.reminder": "reminder", "arrest.recorded": "arrest", "ban.recorded": "ban",
}


def timeline_lines(events: list[Event], iid: str, tz: object) -> list[str]:
    """One line per event about an incident, oldest first (arrests and bans by count only)."""
    lines = []
    # a live location moves every few seconds: only its latest position is a line
    latest = {ev.data.get("live"): ev for ev in events if ev.kind == "incident.live_location"}
    for ev in events:
        if ev.data.get("id") != iid and ev.data.get("incident") != iid:
            continue  # (arrests and bans link with data["incident"])
        if ev.kind == "incident.live_location" and latest.get(ev.data.get("live")) is not ev:
            continue
        who = ev.by.split(":", 1)[-1]
        what = KIND_WORDS.get(ev.kind, ev.kind)
        if ev.kind == "incident.status":
            what = f"→ {ev.data.get('to', '').replace('_', ' ')}"
        detail = ev.data.get("text") or ev.data.get("note") or ""
        if ev.kind == "incident.live_location":
            detail = f"{ev.data.get('lat', 0):.5f},{ev.data.get('lon', 0):.5f}"
        if ev.kind in ("arrest.recorded", "ban.recorded"):  # counts only, never refs
            detail = f"{ev.data.get('count', 1)} × {ev.data.get('offence') or ev.data.get('type')}"
        lines.append(f"{clock_time(ev.at, tz)} {what} ({who})" + (f": {detail}" if detail else ""))
    return lines


# ---------------------------------------------------------------- suspicious items
HOT = (("h", "Hidden?", "Has it been deliberately hidden or concealed?"),
       ("o", "Obviously suspicious?", "Wires, batteries, liquids, a smell, a threat made?"),
       ("t", "Typical?", "Is it what you'd expect here (e.g. a bag left under a seat)?"))
FOUR_CS = ("4 Cs: Confirm (from a distance, never touch) · Clear (move people 100 m+ away) · "
           "Communicate (radio control from outside the cordon) · Control (hold the cordon, "
           "no one back in)")


def hot_question(n: int | str, answers: dict[str, str]) -> tuple[str, list[list[Button]]] | None:
    done = " ".join(f"{k}={v}" for k, v in answers.items())
    for key, label, hint in HOT:
        if key not in answers:
            base = f"/hot {n} {done}".rstrip()
            return (f"HOT test for INC-{n}: {label} {hint}",
                    [[Button("Yes", f"{base} {key}=yes"), Button("No", f"{base} {key}=no")]])
    return None


def hot_prompt(reply: Reply, n: int | str) -> None:
    """Add the first HOT question and the 4 Cs to a suspicious-item report's reply."""
    text, buttons = hot_question(n, {}) or ("", [])
    reply.text += f"\n\n{text}\n{FOUR_CS}"
    reply.buttons = buttons


def verdict(answers: dict[str, str]) -> bool:
    """Suspicious when hidden, obviously suspicious, or not typical."""
    return answers["h"] == "yes" or answers["o"] == "yes" or answers["t"] == "no"
