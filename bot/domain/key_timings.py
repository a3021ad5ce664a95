"""Key timings: the moments of a matchday the record needs to the minute (turnstiles open,
kick-off, half-time, full-time, ground clear, Zone Ex clear). Those that start a match
phase are declared with /phase; the others are timings of their own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.domain.clock import parse_iso


@dataclass(frozen=True)
class TimingKind:
    """One key timing: its key, its label and the phase it starts (None: no phase)."""

    key: str
    label: str
    phase: str | None = None
    short: str = ""  # a chart mark's label


KEY_TIMINGS: tuple[TimingKind, ...] = (
    TimingKind("turnstiles_open", "Turnstiles open", "gates", "TO"),
    TimingKind("kick_off", "Kick-off", "first_half", "KO"),
    TimingKind("half_time", "Half-time", "half_time", "HT"),
    TimingKind("second_half", "Second half kick-off", "second_half", "2H"),
    TimingKind("full_time", "Full-time", "full_time", "FT"),
    TimingKind("ground_clear", "Ground clear", None, "GC"),
    TimingKind("zone_ex_clear", "Zone Ex clear", None, "ZX"),
)
BY_KEY = {t.key: t for t in KEY_TIMINGS}
BY_PHASE = {t.phase: t for t in KEY_TIMINGS if t.phase}
ALIASES = {"turnstiles": "turnstiles_open", "gates": "turnstiles_open", "to": "turnstiles_open",
           "ko": "kick_off", "kickoff": "kick_off", "ht": "half_time", "halftime": "half_time",
           "2h": "second_half", "second_half_ko": "second_half", "ft": "full_time",
           "fulltime": "full_time", "clear": "ground_clear", "gc": "ground_clear",
           "zone_ex": "zone_ex_clear", "zoneex": "zone_ex_clear", "ex_clear": "zone_ex_clear"}


def resolve_timing(word: str) -> TimingKind | None:
    """'ko', 'Kick-off', 'zone ex clear' -> the timing; None if it names none."""
    w = word.strip().lower().replace("-", "_").replace(" ", "_")
    return BY_KEY.get(ALIASES.get(w, w))


@dataclass(frozen=True)
class Timing:
    """A key timing as recorded: when, and by whom."""

    key: str
    at: datetime
    by: str

    @property
    def label(self) -> str:
        """What people see."""
        return BY_KEY[self.key].label if self.key in BY_KEY else self.key

    @classmethod
    def from_fields(cls, h: dict[str, str]) -> Timing:
        """A stream entry back as a Timing."""
        return cls(h["key"], parse_iso(h["at"]), h.get("by", ""))


def latest(timings: list[Timing]) -> list[Timing]:
    """The last recording of each key timing (a second tap corrects the first; both stay
    in the log), in the order of KEY_TIMINGS."""
    last = {t.key: t for t in timings}
    return [last[k.key] for k in KEY_TIMINGS if k.key in last]
