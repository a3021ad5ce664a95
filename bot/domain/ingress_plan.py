"""The ground's ingress plan: turnstiles mapped to entry points, entry points to stands, each
stand's capacity, and the alert thresholds (the `[ingress]` section of a ground file)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PER_TURNSTILE_PER_MIN = 11.0  # the planning figure: about 660 people an hour a turnstile
RANGE = re.compile(r"([A-Za-z_-]{0,8})(\d{1,5})-\1(\d{1,5})")
TURNSTILE_ID = re.compile(r"[A-Za-z0-9_-]{1,24}")
MAX_TURNSTILES = 5000


@dataclass(frozen=True)
class Entry:
    """An entry point (a bank of turnstiles) into one stand."""

    zone: str
    stand: str
    turnstiles: tuple[str, ...]
    safe_rate_per_min: float  # above this the area behind the bank fills faster than is safe

    def planned_per_min(self, per_turnstile: float) -> float:
        """People a minute the bank admits at the planning rate."""
        return len(self.turnstiles) * per_turnstile


@dataclass(frozen=True)
class Stand:
    """A section of the ground with a safe capacity, filled through its entry points."""

    zone: str
    capacity: int


@dataclass(frozen=True)
class IngressPlan:
    """Stands, entry points, which turnstile is where, and when control is alerted."""

    stands: dict[str, Stand]
    entries: dict[str, Entry]
    per_turnstile_per_min: float = PER_TURNSTILE_PER_MIN
    alert_at: tuple[int, ...] = (85, 95)  # % of a stand's capacity
    stall_s: int = 120
    max_skew_s: int = 300
    forecast_from_min: int = 60  # the "not in by kick-off" alert only this close to kick-off
    turnstile_entry: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for e in self.entries.values():
            for t in e.turnstiles:
                self.turnstile_entry[t] = e.zone

    def entries_of(self, stand: str) -> list[Entry]:
        """The entry points into a stand."""
        return [e for e in self.entries.values() if e.stand == stand]


def turnstile_ids(spec: Any, where: str) -> tuple[str, ...]:
    """Turnstile ids from a list of ids and ranges ("A001-A032")."""
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list) or not items:
        raise ValueError(f"{where}: turnstiles is a list of ids or ranges like 'A001-A032'")
    out: list[str] = []
    for item in items:
        m = RANGE.fullmatch(str(item))
        if m:
            prefix, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
            width = len(m.group(2))
            if lo > hi or hi - lo >= MAX_TURNSTILES:
                raise ValueError(f"{where}: turnstile range {item!r} runs backwards or is too long")
            out += [f"{prefix}{i:0{width}d}" for i in range(lo, hi + 1)]
        elif isinstance(item, str) and TURNSTILE_ID.fullmatch(item):
            out.append(item)
        else:
            raise ValueError(f"{where}: {item!r} is not a turnstile id or range like 'A001-A032'")
    return tuple(out)


def _number(raw: dict[str, Any], key: str, default: float, where: str, low: float = 0) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= low:
        raise ValueError(f"{where}: {key} must be a number above {low:g} (got {value!r})")
    return float(value)


def parse_plan(data: dict[str, Any], zones: set[str], where: str) -> IngressPlan | None:
    """The `[ingress]` section checked against the ground's zones (None when absent)."""
    raw = data.get("ingress")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: ingress: must be a table")
    per = _number(raw, "per_turnstile_per_min", PER_TURNSTILE_PER_MIN, f"{where}: ingress")
    alert_at = raw.get("alert_at", [85, 95])
    if not isinstance(alert_at, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) and 1 <= a < 100 for a in alert_at):
        raise ValueError(f"{where}: ingress: alert_at is a list of whole percentages 1-99")
    stands: dict[str, Stand] = {}
    for i, s in enumerate(raw.get("stand", [])):
        here = f"{where}: ingress.stand[{i}]"
        zone = s.get("zone") if isinstance(s, dict) else None
        if zone not in zones:
            raise ValueError(f"{here}: zone {zone!r} is not a zone of this ground")
        stands[zone] = Stand(zone, int(_number(s, "capacity", 0, here)))
    entries: dict[str, Entry] = {}
    seen: dict[str, str] = {}
    for i, e in enumerate(raw.get("entry", [])):
        here = f"{where}: ingress.entry[{i}]"
        zone = e.get("zone") if isinstance(e, dict) else None
        if zone not in zones:
            raise ValueError(f"{here}: zone {zone!r} is not a zone of this ground")
        if e.get("stand") not in stands:
            raise ValueError(f"{here}: stand {e.get('stand')!r} is not an [[ingress.stand]]")
        ids = turnstile_ids(e.get("turnstiles"), here)
        for t in ids:
            if t in seen:
                raise ValueError(f"{here}: turnstile {t} is already at {seen[t]}")
            seen[t] = zone
        planned = len(ids) * per
        entries[zone] = Entry(zone, e["stand"], ids,
                              _number(e, "safe_rate_per_min", planned * 1.25, here))
    if not entries:
        raise ValueError(f"{where}: ingress: needs at least one [[ingress.entry]]")
    return IngressPlan(stands, entries, per, tuple(sorted(alert_at)),
                       int(_number(raw, "stall_s", 120, f"{where}: ingress")),
                       int(_number(raw, "max_skew_s", 300, f"{where}: ingress")),
                       int(_number(raw, "forecast_from_min", 60, f"{where}: ingress")))


def load_plan(path: Path, zones: set[str]) -> IngressPlan | None:
    """The ingress plan of a ground file (None when it has no `[ingress]` section)."""
    return parse_plan(tomllib.loads(path.read_text()), zones, path.name)
