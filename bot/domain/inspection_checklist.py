"""Pre-event inspections: a checklist per ground (config/inspections.toml), results ticked
by staff, and whether the ground is ready to open its turnstiles."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from bot.domain.clock import iso, parse_iso
from bot.domain.decision_log import LogView

FILE = "inspections.toml"
OVERRIDE_SOURCE = "inspect override"  # the decision log's source of an opening on override
OUTCOMES = ("pass", "fail")


@dataclass(frozen=True)
class Item:
    """One thing to inspect: who ticks it, where, from when, and whether it is critical."""

    key: str
    label: str
    role: str
    zone: str
    due_h: int
    critical: bool
    incident_type: str
    failed: str = ""  # what a fail means, as its incident's title says it

    @property
    def failed_check(self) -> str:
        """The failed check in words ('loose objects not removed')."""
        return self.failed or f"{self.label}: not passed"

    def due_from(self, kickoff: datetime) -> datetime:
        """The start of its window."""
        return kickoff - timedelta(hours=self.due_h)


@dataclass(frozen=True)
class Check:
    """One tick of an item, as recorded (a later tick of the same item supersedes it)."""

    item: str
    outcome: str  # "pass" or "fail"
    at: datetime
    by: str
    role: str
    note: str = ""
    photos: tuple[str, ...] = ()  # platform file ids of the photos sent with the tick
    incident: int | None = None  # the incident a failure raised

    def fields(self) -> dict[str, str]:
        """As stream fields."""
        return {"item": self.item, "outcome": self.outcome, "at": iso(self.at), "by": self.by,
                "role": self.role, "note": self.note, "photos": json.dumps(list(self.photos)),
                "incident": str(self.incident or "")}

    @classmethod
    def from_fields(cls, h: dict[str, str]) -> Check:
        """Inverse of fields()."""
        return cls(h["item"], h["outcome"], parse_iso(h["at"]), h["by"], h.get("role", ""),
                   h.get("note", ""), tuple(json.loads(h.get("photos") or "[]")),
                   int(h["incident"]) if h.get("incident") else None)


@dataclass(frozen=True)
class Readiness:
    """Whether the turnstiles may open: every critical item passed, or overridden."""

    blocking: tuple[Item, ...]  # critical items not (or no longer) passed
    override: int | None = None  # the decision (D-n) that opened anyway

    @property
    def ready(self) -> bool:
        """Ready to open turnstiles."""
        return not self.blocking or self.override is not None


def override_of(log: LogView) -> int | None:
    """The latest decision to open the turnstiles on override, if any."""
    return next((d.n for d in reversed(log.entries) if d.source == OVERRIDE_SOURCE), None)


def latest(checks: list[Check]) -> dict[str, Check]:
    """The last tick of each item."""
    return {c.item: c for c in checks}


def readiness(items: tuple[Item, ...], checks: list[Check],
              override: int | None = None) -> Readiness:
    """Critical items whose last tick is not a pass block the opening."""
    last = latest(checks)
    blocking = tuple(i for i in items if i.critical
                     and (i.key not in last or last[i.key].outcome != "pass"))
    return Readiness(blocking, override if blocking else None)


def parse_checklists(data: dict) -> dict[str, tuple[Item, ...]]:
    """{ground id: items} from the file's parsed TOML."""
    out: dict[str, tuple[Item, ...]] = {}
    for ground, table in (data.get("grounds") or {}).items():
        out[ground] = tuple(Item(key=str(i["key"]), label=str(i["label"]), role=str(i["role"]),
                                 zone=str(i["zone"]), due_h=int(i["due_h"]),
                                 critical=bool(i.get("critical", False)),
                                 incident_type=str(i.get("incident_type", "other")),
                                 failed=str(i.get("failed", "")))
                            for i in table.get("item", []))
    return out


@lru_cache(maxsize=8)
def _load(path: Path, mtime: float) -> dict[str, tuple[Item, ...]]:
    return parse_checklists(tomllib.loads(path.read_text(encoding="utf-8")))


def checklists(config_dir: Path) -> dict[str, tuple[Item, ...]]:
    """Every ground's checklist (none when the file is absent)."""
    path = config_dir / FILE
    if not path.exists():
        return {}
    return _load(path, path.stat().st_mtime)
