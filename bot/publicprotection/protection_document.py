"""The Martyn's Law document as data: the plan's content, its revision (numbered by the
content's hash), the regulator's 30-day deadline, and the drill log attached as evidence."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.domain.clock import iso, parse_iso
from bot.publicprotection.drill_log import DrillRow
from bot.publicprotection.protection_plan import ProtectionPlan

SEND_WITHIN = timedelta(days=30)  # s.7: to the regulator within 30 days of a revision
FORMAT = "matchday-martyns-law-1"


def digest(plan: ProtectionPlan) -> str:
    """SHA-256 of the plan's content (canonical JSON): a new hash is a new revision."""
    text = json.dumps(plan.content(), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ProtectionDocument:
    """One revision of a ground's document, with its drill log."""

    plan: ProtectionPlan
    revision: int
    content_hash: str
    revised_at: str
    generated: datetime
    drills: tuple[DrillRow, ...]
    sent_at: str = ""  # when this revision was recorded as sent to the regulator

    @property
    def due(self) -> datetime:
        """When the regulator must have this revision."""
        return parse_iso(self.revised_at) + SEND_WITHIN

    def as_json(self) -> dict[str, Any]:
        """The document as its JSON file holds it."""
        return {"format": FORMAT, "revision": self.revision, "content_hash": self.content_hash,
                "revised_at": self.revised_at, "send_to_regulator_by": iso(self.due),
                "sent_to_regulator_at": self.sent_at, "generated_at": iso(self.generated),
                **self.plan.content(),
                "drill_log": [d.as_json() for d in self.drills]}
