"""The ingress picture and its alerts in words (chat, console, /status); made from the values,
never parsed back."""

from __future__ import annotations

from datetime import datetime, tzinfo

from bot.domain.grounds import Ground
from bot.domain.ingress_model import IngressAlert, Picture, StandState

PRESSURE = {"ok": "flowing", "building": "queue building (rate falling)",
            "stalled": "BANK STALLED"}


def _hm(at: datetime | None, tz: tzinfo) -> str:
    return f"{at.astimezone(tz):%H:%M}" if at is not None else "—"


def forecast(s: StandState, tz: tzinfo) -> str:
    """'full 19:32, in by kick-off' / 'not in by kick-off (full 19:58)' / 'no flow'."""
    if s.inside >= s.capacity:
        return "FULL"
    if s.full_at is None:
        return "no flow now"
    return (f"full {_hm(s.full_at, tz)}, in by kick-off" if s.in_by_kickoff
            else f"full {_hm(s.full_at, tz)}: NOT in by kick-off")


def stand_line(s: StandState, ground: Ground, tz: tzinfo) -> str:
    """One stand in one line."""
    return (f"{ground.short_label(s.zone)}: {s.inside:,}/{s.capacity:,} ({s.pct:.0f}%), "
            f"{s.rate_per_min:.0f}/min of {s.planned_per_min:.0f} planned, "
            f"{PRESSURE[s.pressure]}; {forecast(s, tz)}")


def picture_lines(p: Picture, ground: Ground, tz: tzinfo) -> list[str]:
    """The /ingress screen: the ground, then each stand and its entry points."""
    pct = 100 * p.inside / p.capacity if p.capacity else 0
    lines = [f"In: {p.inside:,} of {p.capacity:,} ({pct:.0f}%) at {_hm(p.at, tz)}, "
             f"kick-off {_hm(p.kickoff, tz)}"]
    for s in p.stands:
        lines.append(stand_line(s, ground, tz))
        for e in s.entries:
            state = ("CLOSED" if e.closed else "STALLED" if e.stalled
                     else "falling" if e.falling else "ok")
            lines.append(f"  · {ground.short_label(e.zone)}: {e.inside:,} in, "
                         f"{e.recent_per_min:.0f}/min now, {e.planned_per_min:.0f} planned, "
                         f"safe {e.safe_rate_per_min:.0f} ({state})")
    return lines


def status_line(p: Picture, alarm_pct: int) -> str:
    """The one /status line: people in, and the stands to watch (a queue building or a bank
    stalled, or past the first alarm)."""
    hot = [f"{s.zone} {s.pct:.0f}%" for s in p.stands
           if s.pressure != "ok" or s.pct >= alarm_pct]
    pct = 100 * p.inside / p.capacity if p.capacity else 0
    return (f"Ingress: {p.inside:,}/{p.capacity:,} in ({pct:.0f}%)"
            + (f"; watch {', '.join(hot)}" if hot else "") + " (/ingress)")


def alert_text(a: IngressAlert, ground: Ground, tz: tzinfo) -> str:
    """An alert as control reads it: what, where, the figures, what to do."""
    where = ground.label(a.zone)
    pct = 100 * a.inside / a.capacity if a.capacity else 0
    if a.kind == "threshold":
        return (f"{where} is {pct:.0f}% full ({a.inside:,} of {a.capacity:,}), past the "
                f"{a.level}% alarm, {a.rate_per_min:.0f}/min coming in.")
    if a.kind == "full":
        gates = ", ".join(ground.label(z) for z in a.close)
        return (f"{where} is AT CAPACITY ({a.inside:,} of {a.capacity:,}): close it. "
                f"Close {gates}.")
    if a.kind == "stalled":
        return (f"{where}: the turnstile bank is STALLED, nobody counted while fans are "
                f"still arriving ({a.inside:,} in so far, {a.limit:.0f}/min planned). "
                "Check the turnstiles and the queue.")
    if a.kind == "rate":
        return (f"{where}: {a.rate_per_min:.0f} a minute coming in, above the safe "
                f"{a.limit:.0f}/min for the area behind it. Slow the entry.")
    return (f"{where} will NOT be in by kick-off: {a.capacity - a.inside:,} still to come "
            f"need {a.minutes_needed:.0f} min at the planned {a.limit:.0f}/min, "
            f"{a.minutes_left:.0f} min to kick-off. Open more turnstiles or consider a delay.")


TITLES = {"threshold": "Ingress alarm", "full": "Stand full: close it",
          "stalled": "Turnstiles stalled", "rate": "Entry rate above safe",
          "late": "Not in by kick-off"}
