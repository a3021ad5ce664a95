"""Briefing cadence: config/briefings.toml, and the plan of slots a fixture derives from it."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.domain.clock import iso, parse_iso
from bot.domain.fixture.fixture_model import Fixture

OFFSET_RE = re.compile(r"^T-(\d{1,4})([dhm])$", re.IGNORECASE)
POST_MATCH = frozenset({"full_time", "egress", "closed"})


@dataclass(frozen=True)
class Offset:
    """One cadence point before kick-off: T-48h, T-60m (elapsed) or T-2d (calendar days)."""

    label: str
    amount: int
    unit: str  # "d", "h" or "m"

    def due(self, kickoff: datetime, tz: ZoneInfo) -> datetime:
        """The UTC instant this offset falls on for a kick-off (DST-correct)."""
        if self.unit == "d":  # same local wall-clock time n days earlier
            local = kickoff.astimezone(tz).replace(tzinfo=None) - timedelta(days=self.amount)
            return local.replace(tzinfo=tz).astimezone(UTC)
        minutes = self.amount * (60 if self.unit == "h" else 1)
        return kickoff.astimezone(UTC) - timedelta(minutes=minutes)


def parse_offset(text: str) -> Offset:
    """'T-3h' -> Offset; ValueError on anything else."""
    m = OFFSET_RE.match(text.strip())
    if not m:
        raise ValueError(f"bad briefing offset {text!r} (use T-<n>d, T-<n>h or T-<n>m)")
    return Offset(f"T-{m.group(1)}{m.group(2).lower()}", int(m.group(1)), m.group(2).lower())


@dataclass(frozen=True)
class BriefingConfig:
    """Cadence per category, audiences, timing and content settings."""

    cadence: dict[str, tuple[Offset, ...]]
    tz: ZoneInfo
    full_audiences: tuple[str, ...] = ("command",)
    steward_audiences: tuple[str, ...] = ("stewards",)
    summary_audiences: tuple[str, ...] = ("summary",)
    summary_delay: timedelta = timedelta(minutes=10)
    on_time_tolerance: timedelta = timedelta(minutes=2)
    late_cutoff: timedelta = timedelta(0)
    summary_grace: timedelta = timedelta(hours=12)
    history_fixtures: int = 5
    recent_at_ground: int = 3
    intel_notes: frozenset[str] = frozenset({"risk_groups", "intel", "intelligence"})
    contacts: str = ""


def load_briefing_config(path: Path, default_tz: ZoneInfo) -> BriefingConfig:
    """Read briefings.toml (defaults when missing); ValueError names a bad entry."""
    data: dict[str, Any] = tomllib.loads(path.read_text()) if path.exists() else {}
    cadence = {cat: tuple(parse_offset(o) for o in offs)
               for cat, offs in data.get("cadence", {}).items()}
    aud, tim, con = data.get("audiences", {}), data.get("timing", {}), data.get("content", {})
    base = BriefingConfig(cadence, default_tz)
    return BriefingConfig(
        cadence=cadence,
        tz=ZoneInfo(data["timezone"]) if data.get("timezone") else default_tz,
        full_audiences=tuple(aud.get("full", base.full_audiences)),
        steward_audiences=tuple(aud.get("stewards", base.steward_audiences)),
        summary_audiences=tuple(aud.get("summary", base.summary_audiences)),
        summary_delay=timedelta(minutes=tim.get("summary_delay_minutes", 10)),
        on_time_tolerance=timedelta(minutes=tim.get("on_time_tolerance_minutes", 2)),
        late_cutoff=timedelta(minutes=tim.get("late_cutoff_minutes", 0)),
        summary_grace=timedelta(hours=tim.get("summary_grace_hours", 12)),
        history_fixtures=int(con.get("history_fixtures", 5)),
        recent_at_ground=int(con.get("recent_at_ground", 3)),
        intel_notes=frozenset(con.get("intel_notes", base.intel_notes)),
        contacts=str(con.get("contacts", "")),
    )


_CACHE: dict[tuple[Path, str], BriefingConfig] = {}


def config_for(settings: Any) -> BriefingConfig:
    """The briefing config of an app's settings (config_dir/briefings.toml), read once."""
    key = (Path(settings.config_dir) / "briefings.toml", str(settings.zone))
    if key not in _CACHE:
        _CACHE[key] = load_briefing_config(key[0], settings.zone)
    return _CACHE[key]


@dataclass(frozen=True)
class Slot:
    """One scheduled firing: a briefing at a cadence point, or the post-match summary."""

    fixture: str
    kind: str  # "briefing" | "summary"
    label: str  # "T-3h" | "summary"
    due: datetime  # UTC
    planned_at: datetime = field(default=datetime.min.replace(tzinfo=UTC), compare=False)

    @property
    def id(self) -> str:
        """Deterministic slot id (kind and due time; the fixture is in the key's hash tag)."""
        return f"{self.kind}@{self.due.astimezone(UTC):%Y%m%dT%H%M%SZ}"

    @property
    def key(self) -> str:
        """Fixture-qualified id, unique across fixtures."""
        return f"{self.fixture}/{self.id}"

    def to_json(self) -> dict[str, str]:
        """Plain data for the plan in Redis."""
        return {"fixture": self.fixture, "kind": self.kind, "label": self.label,
                "due": iso(self.due), "planned_at": iso(self.planned_at)}

    @classmethod
    def from_json(cls, d: dict[str, str]) -> Slot:
        """Inverse of to_json."""
        return cls(d["fixture"], d["kind"], d["label"], parse_iso(d["due"]),
                   parse_iso(d["planned_at"]))


def briefing_times(fx: Fixture, cfg: BriefingConfig) -> list[tuple[str, datetime]]:
    """(label, due) of every briefing a fixture's category asks for; none when cancelled."""
    if fx.status == "cancelled":
        return []
    out = {o.due(fx.kickoff, cfg.tz): o.label for o in cfg.cadence.get(fx.category, ())}
    return sorted(((label, due) for due, label in out.items()), key=lambda x: x[1])


def merge_plan(fx: Fixture, cfg: BriefingConfig, old: list[Slot], now: datetime) -> list[Slot]:
    """The briefing plan for a fixture now; slots already planned keep their planned_at.

    A slot that only enters the plan after its due time (fixture added late, kick-off
    brought forward) is dropped: it was never sendable, so it is neither late nor missed.
    """
    known = {s.id: s.planned_at for s in old if s.kind == "briefing"}
    plan = []
    for label, due in briefing_times(fx, cfg):
        slot = Slot(fx.id, "briefing", label, due)
        planned = known.get(slot.id, now)
        if due > planned:
            plan.append(Slot(fx.id, "briefing", label, due, planned))
    return plan


def dumps(slots: list[Slot]) -> str:
    """A plan as JSON text."""
    return json.dumps([s.to_json() for s in slots], separators=(",", ":"))


def loads(text: str | None) -> list[Slot]:
    """Inverse of dumps (empty for None)."""
    return [Slot.from_json(d) for d in json.loads(text)] if text else []
