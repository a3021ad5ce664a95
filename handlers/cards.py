"""How incidents look in chat: the live card, one-line summaries, ages."""

from __future__ import annotations

from datetime import datetime

from bot.core.messages import Button, Reply
from bot.domain.clock import parse_iso
from bot.domain.grounds import Ground
from bot.domain.vocab import AFFILIATIONS, INCIDENT_TYPES, SEVERITIES, STATUSES

SEV_MARK = {1: "⚪", 2: "🟢", 3: "🟡", 4: "🟠", 5: "🔴"}


def age(since_iso: str, now: datetime) -> str:
    """'4m', '1h05' — how long ago, short enough for a phone line."""
    secs = max(0, int((now - parse_iso(since_iso)).total_seconds()))
    if secs < 60:
        return f"{secs}s"
    mins = secs // 60
    return f"{mins}m" if mins < 60 else f"{mins // 60}h{mins % 60:02d}"


def clock_time(at_iso: str, ground_tz: object) -> str:
    """HH:MM local time of an ISO instant."""
    return parse_iso(at_iso).astimezone(ground_tz).strftime("%H:%M")  # type: ignore[arg-type]


def _secs(value: str) -> str:
    s = int(value)
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}" if s < 3600 else \
        f"{s // 3600}h{s % 3600 // 60:02d}"


def lifecycle_lines(inc: dict[str, str]) -> list[str]:
    """Response times, escalation and corrections of an incident, for its card."""
    times = []
    if inc.get("tta_s"):
        times.append(f"acknowledged in {_secs(inc['tta_s'])}")
    if inc.get("ttc_s"):
        times.append(f"closed in {_secs(inc['ttc_s'])}")
    if inc.get("escalated_tier"):
        times.append(f"escalated (tier {inc['escalated_tier']})")
    out = ["Response: " + ", ".join(times)] if times else []
    was = [f"{f} {inc['orig_' + f]}" for f in ("type", "severity", "location")
           if inc.get("orig_" + f) and inc.get("orig_" + f) != inc.get(f)]
    if was:
        out.append("Amended; originally " + ", ".join(was))
    return out


def card(inc: dict[str, str], ground: Ground, tz: object) -> Reply:
    """The live incident message for control rooms, edited in place as it changes."""
    sev = int(inc.get("severity", 1))
    status = inc.get("status", "reported")
    lines = [
        f"Severity {SEVERITIES.get(sev, sev)}",
        f"Where: {ground.label(inc['location'])}",
        f"Reported {clock_time(inc['reported_at'], tz)} by {inc.get('reporter_name') or 'steward'}"
        f" ({inc.get('phase', '').replace('_', ' ')})",
        f"Status: {STATUSES.label(status)}"
        + (f" by {inc['status_by_name']}" if inc.get("status_by_name") else "")
        + (f" · owner {inc['owner_name']}" if inc.get("owner_name") else ""),
    ]
    aff = inc.get("affiliation", "unknown")
    people = inc.get("people", "")
    if aff != "unknown" or people:
        lines.append(f"Fans: {AFFILIATIONS.label(aff)}" + (f", about {people}" if people else ""))
    if inc.get("description"):
        lines.append(f"“{inc['description']}”")
    lines += lifecycle_lines(inc)
    extras = []
    for fld, word in (("updates", "update"), ("evidence", "evidence item"),
                      ("arrests", "arrest"), ("merged", "merged report")):
        n = int(inc.get(fld, 0) or 0)
        if n:
            extras.append(f"{n} {word}{'s' if n != 1 else ''}")
    if extras:
        lines.append(" · ".join(extras))
    n = inc["n"]
    buttons: list[list[Button]] = []
    if status == "reported":
        buttons = [[Button("Acknowledge", f"/ack {n}", "primary"),
                    Button("Dispatch", f"/dispatch {n}"), Button("Resolve", f"/resolve {n}")]]
    elif status != "closed":
        buttons = [[Button("Dispatch", f"/dispatch {n}"), Button("On scene", f"/onscene {n}"),
                    Button("Resolve", f"/resolve {n}", "danger")]]
    title = f"{SEV_MARK.get(sev, '')} {inc['id']} {INCIDENT_TYPES.label(inc['type'])}"
    if status == "closed":
        title += " (closed)"
    return Reply(text="\n".join(lines), title=title, buttons=buttons)
