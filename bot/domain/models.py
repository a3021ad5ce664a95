"""Domain records: fixtures and incidents as the handlers see them."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime

from bot.domain.clock import iso, parse_iso


def slug(text: str, limit: int = 10) -> str:
    """Lower-case letters and digits only, shortened."""
    return re.sub(r"[^a-z0-9]", "", text.lower())[:limit] or "x"


def season_of(when: datetime) -> str:
    """The football season a date falls in, e.g. 2026-27 (seasons turn over on 1 July)."""
    start = when.year if when.month >= 7 else when.year - 1
    return f"{start}-{str(start + 1)[-2:]}"


def incident_id(n: int | str) -> str:
    """The human id of incident number n."""
    return f"INC-{n}"


def parse_incident_id(text: str) -> int | None:
    """INC-7, inc7, #7 or 7 -> 7; anything else -> None."""
    m = re.fullmatch(r"(?:inc)?[-#]?(\d{1,7})", text.strip().lower())
    return int(m.group(1)) if m else None


@dataclass
class Fixture:
    """A match the bot runs operations for."""

    id: str
    home: str
    away: str
    kickoff: datetime  # UTC
    ground: str
    category: str = "B"
    category_why: str = ""
    competition: str = ""
    attendance: int = 0
    away_allocation: int = 0
    notes: dict[str, str] = field(default_factory=dict)
    status: str = "scheduled"  # scheduled | cancelled
    phase: str = "pre"
    drill: bool = False  # made by a replay: its own ids and keys, never a live fixture

    @property
    def title(self) -> str:
        """Home v Away."""
        return f"{self.home} v {self.away}"

    @property
    def season(self) -> str:
        """Season label, e.g. 2026-27."""
        return season_of(self.kickoff)

    def to_hash(self) -> dict[str, str]:
        """Flat string fields for the store."""
        d = asdict(self)
        d["kickoff"] = iso(self.kickoff)
        d["notes"] = _notes_to_text(self.notes)
        if self.drill:
            d["drill"] = "1"
        else:
            del d["drill"]  # a live fixture's record is as it always was
        return {k: str(v) for k, v in d.items()}

    @classmethod
    def from_hash(cls, h: dict[str, str]) -> Fixture:
        """Inverse of to_hash."""
        return cls(
            id=h["id"], home=h["home"], away=h["away"], kickoff=parse_iso(h["kickoff"]),
            ground=h.get("ground", ""), category=h.get("category", "B"),
            category_why=h.get("category_why", ""), competition=h.get("competition", ""),
            attendance=int(h.get("attendance") or 0),
            away_allocation=int(h.get("away_allocation") or 0),
            notes=_notes_from_text(h.get("notes", "")), status=h.get("status", "scheduled"),
            phase=h.get("phase", "pre"), drill=h.get("drill") == "1",
        )


def _notes_to_text(notes: dict[str, str]) -> str:
    return json.dumps(notes, separators=(",", ":"))


def _notes_from_text(text: str) -> dict[str, str]:
    try:
        v = json.loads(text) if text else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _int(value: str | None, default: int = 0) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


@dataclass
class Incident:
    """One incident's current view (the store's derived hash), typed."""

    n: int
    type: str
    severity: int
    location: str
    status: str = "reported"
    reported_at: str = ""
    reported_ts: int = 0
    occurred_at: str = ""
    updated_at: str = ""
    phase: str = ""
    fixture: str = ""
    reporter: str = ""
    reporter_role: str = ""
    reporter_name: str = ""
    description: str = ""
    affiliation: str = "unknown"
    people: str = ""
    methane: bool = False
    evidence: int = 0
    updates: int = 0
    merged: int = 0
    arrests: int = 0
    bans: int = 0
    esc_next: int = 0
    remind_n: int = 0
    escalated_tier: int = 0
    amendments: int = 0
    owner: str = ""
    owner_name: str = ""
    status_by_name: str = ""
    last_note: str = ""
    tta_s: int | None = None
    ttc_s: int | None = None
    orig: dict[str, str] = field(default_factory=dict)  # type/severity/location before /amend
    marks: dict[str, str] = field(default_factory=dict)  # <status>_at / _by, escalated_at …

    @property
    def id(self) -> str:
        """INC-n."""
        return incident_id(self.n)

    @property
    def is_open(self) -> bool:
        """Not closed."""
        return self.status != "closed"

    @classmethod
    def from_hash(cls, h: dict[str, str]) -> Incident:
        """From the store's hash fields."""
        kw: dict[str, object] = {}
        orig: dict[str, str] = {}
        marks: dict[str, str] = {}
        for k, v in h.items():
            if k in _INC_STRS:
                kw[k] = v
            elif k in _INC_INTS:
                kw[k] = _int(v)
            elif k.startswith("orig_"):
                orig[k[5:]] = v
            elif k not in _INC_OTHER:
                marks[k] = v
        tta, ttc = h.get("tta_s"), h.get("ttc_s")
        return cls(
            n=_int(h.get("n")), type=h.get("type", ""), severity=_int(h.get("severity"), 1),
            location=h.get("location", ""), reported_ts=_int(h.get("reported_ts")),
            methane=h.get("methane") == "1", tta_s=_int(tta) if tta else None,
            ttc_s=_int(ttc) if ttc else None, orig=orig, marks=marks,
            **kw,  # type: ignore[arg-type]
        )


_INC_INTS = frozenset({"evidence", "updates", "merged", "arrests", "bans", "esc_next",
                       "remind_n", "escalated_tier", "amendments"})
_INC_STRS = frozenset({"status", "reported_at", "occurred_at", "updated_at", "phase", "fixture",
                       "reporter", "reporter_role", "reporter_name", "description",
                       "affiliation", "people", "owner", "owner_name", "status_by_name",
                       "last_note"})
_INC_OTHER = frozenset({"n", "id", "type", "severity", "location", "reported_ts", "methane",
                        "tta_s", "ttc_s"})
