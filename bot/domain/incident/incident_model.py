"""An incident's record as the handlers see it: the store's derived hash, typed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from bot.domain.clock import iso, parse_iso
from bot.domain.vocab import INCIDENT_TYPES


def incident_id(n: int | str) -> str:
    """The human id of incident number n."""
    return f"INC-{n}"


def failed_title(kind: str, failed_check: str = "") -> str:
    """An incident's title: 'Inspection failed: <check>' for a failed check, else its type's
    label ('Throwing missiles')."""
    return f"Inspection failed: {failed_check}" if failed_check else INCIDENT_TYPES.label(kind)


def parse_incident_id(text: str) -> int | None:
    """INC-7, inc7, #7 or 7 -> 7; anything else -> None."""
    m = re.fullmatch(r"(?:inc)?[-#]?(\d{1,7})", text.strip().lower())
    return int(m.group(1)) if m else None



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
    occurred_at: str = ""  # when it happened: the steward's "10 min ago", else reported_at
    platform_at: str = ""  # when the platform says the report was sent ('' if it did not say)
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
    failed_check: str = ""  # a failed inspection's check ("loose objects not removed")
    tta_s: int | None = None
    ttc_s: int | None = None
    orig: dict[str, str] = field(default_factory=dict)  # type/severity/location before /amend
    marks: dict[str, str] = field(default_factory=dict)  # <status>_at / _by, escalated_at …

    @property
    def id(self) -> str:
        """INC-n."""
        return incident_id(self.n)

    @property
    def what(self) -> str:
        """What it is, as every list and card titles it: the type's label, or the failed
        inspection check (its type, e.g. missile, stays its category)."""
        return failed_title(self.type, self.failed_check)

    @property
    def acknowledged_at(self) -> str:
        """When it was first acknowledged, or first moved on from reported ('' until then)."""
        if self.tta_s is not None and self.reported_at:
            return iso(parse_iso(self.reported_at) + timedelta(seconds=self.tta_s))
        return self.marks.get("acknowledged_at", "")

    @property
    def resolved_at(self) -> str:
        """When it was closed ('' while open)."""
        return self.marks.get("closed_at", "") if self.status == "closed" else ""

    @property
    def times(self) -> dict[str, str]:
        """Occurred, sent (platform), received, acknowledged and resolved, ISO UTC ('' unknown)."""
        return {"occurred_at": self.occurred_at or self.reported_at,
                "platform_at": self.platform_at, "reported_at": self.reported_at,
                "acknowledged_at": self.acknowledged_at, "resolved_at": self.resolved_at}

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
_INC_STRS = frozenset({"status", "reported_at", "occurred_at", "platform_at", "updated_at",
                       "phase", "fixture",
                       "reporter", "reporter_role", "reporter_name", "description",
                       "affiliation", "people", "owner", "owner_name", "status_by_name",
                       "last_note", "failed_check"})
_INC_OTHER = frozenset({"n", "id", "type", "severity", "location", "reported_ts", "methane",
                        "tta_s", "ttc_s"})
