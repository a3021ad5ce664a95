"""When an incident happened, as a steward says it in a report: "10 min ago", "10m ago",
"at 14:52" (the ground's local time); and the gaps between the times an incident carries."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from bot.domain.clock import parse_iso

MAX_BACK = timedelta(hours=12)  # a night's length: an older time is a typo, not a report
FUTURE_SLACK = timedelta(minutes=2)  # a phone clock a little ahead is still "now"
UNITS = {"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
         "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600}
CLOCK = re.compile(r"([01]?\d|2[0-3])[:.]([0-5]\d)")
AMOUNT = re.compile(r"(\d{1,4})([a-z]*)")
# A gap worth showing on the card: below these the times say the same thing
LATE_REPORT_S = 5 * 60
PLATFORM_SKEW_S = 60


class WhenError(ValueError):
    """A time a steward gave that cannot be when it happened; the message is one line."""


@dataclass(frozen=True)
class Said:
    """A time said in a report: the instant, and how many words said it."""

    at: datetime
    words: int


def _ago(amount: int, unit: str, now: datetime) -> datetime:
    back = timedelta(seconds=amount * UNITS[unit])
    if back > MAX_BACK:
        raise WhenError(f"{amount} {unit} ago is more than 12 hours ago: report it with "
                        "a note of when instead.")
    return now - back


def _clock(hour: int, minute: int, now: datetime, tz: tzinfo) -> datetime:
    local = now.astimezone(tz)
    at = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at > local + FUTURE_SLACK:  # "at 23:50" said at 00:10 is last night's
        at -= timedelta(days=1)
    if local - at > MAX_BACK:
        raise WhenError(f"At {hour:02d}:{minute:02d} would be more than 12 hours ago: "
                        "report it with a note of when instead.")
    return at.astimezone(now.tzinfo)


def read_when(words: list[str], i: int, now: datetime, tz: tzinfo) -> Said | None:
    """The time words[i:] begin with ('10 min ago', '10m ago', 'at 14:52'), or None when
    they begin with none; WhenError for a time that cannot be when it happened."""
    low = [w.lower() for w in words[i:i + 3]]
    if len(low) >= 2 and low[0] == "at" and (m := CLOCK.fullmatch(low[1])):
        return Said(_clock(int(m.group(1)), int(m.group(2)), now, tz), 2)
    m = AMOUNT.fullmatch(low[0]) if low else None
    if m is None:
        return None
    amount, unit = int(m.group(1)), m.group(2)
    if unit in UNITS and len(low) >= 2 and low[1] == "ago":
        return Said(_ago(amount, unit, now), 2)
    if not unit and len(low) >= 3 and low[1] in UNITS and low[2] == "ago":
        return Said(_ago(amount, low[1], now), 3)
    return None


def take_when(words: list[str], now: datetime, tz: tzinfo) -> tuple[datetime | None, list[str]]:
    """The time said anywhere in words (one at most), and the words without it."""
    out: list[str] = []
    said: datetime | None = None
    i = 0
    while i < len(words):
        found = read_when(words, i, now, tz)
        if found is None:
            out.append(words[i])
            i += 1
            continue
        if said is not None:
            raise WhenError("One time per report: say when it happened once.")
        said, i = found.at, i + found.words
    return said, out


def whole_when(text: str, now: datetime, tz: tzinfo) -> datetime | None:
    """The time a whole message says ('10 min ago' typed into the guided form), else None."""
    words = text.split()
    found = read_when(words, 0, now, tz) if words else None
    return found.at if found is not None and found.words == len(words) else None


def gap_s(earlier: str | datetime | None, later: str | datetime | None) -> int | None:
    """Whole seconds from earlier to later (None when either is missing)."""
    if not earlier or not later:
        return None
    a = earlier if isinstance(earlier, datetime) else parse_iso(earlier)
    b = later if isinstance(later, datetime) else parse_iso(later)
    return int((b - a).total_seconds())
