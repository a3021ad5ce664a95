"""The decision log (JESIP): what was decided, why, the options weighed, by whom and when.

Entries are never edited or deleted: a correction is a new entry that supersedes an older
one, and a rationale given later (for a decision taken through another command) is a new
entry linked to it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from bot.domain.clock import iso, parse_iso
from bot.domain.vocab import norm

MAX_TEXT = 1000  # characters of a decision, a rationale or the options
MAX_LINKS = 20  # incidents one decision may name
# What a decision is about (the /decision form's type list): those taken through a command
# of their own get theirs there; the rest (a match stoppage, closing a gate, calling police
# support) have no command of their own, so the form offers them.
DECISION_KINDS: dict[str, str] = {
    "stoppage": "Match stoppage",
    "gate": "Closing or opening a gate",
    "police_support": "Calling police support",
    "procedure": "Public-protection procedure",
    "turnstiles": "Opening the turnstiles",
    "major_incident": "Major incident",
    "handover": "Handing an incident to police",
    "other": "Other",
    # not a decision: the rationale given later for one (linked by `explains`)
    "rationale": "Rationale for an earlier decision",
}
RATIONALE = "rationale"

KIND_ALIASES = {"stop": "stoppage", "suspend": "stoppage", "gates": "gate",
                "police": "police_support", "evacuate": "procedure", "lockdown": "procedure",
                "invacuate": "procedure", "methane": "major_incident"}


def parse_kind(word: str) -> str | None:
    """A decision type key from its key or a word of its label ('stoppage', 'gate'); None."""
    w = norm(word)
    if w in DECISION_KINDS and w != RATIONALE:
        return w
    return KIND_ALIASES.get(w)


def clock_time(text: str, now: datetime, tz: tzinfo, *, ahead: bool) -> datetime | None:
    """A time typed for a decision: '19:05' (today, local; the last such moment when not
    `ahead`, the next when `ahead`), '+30m' / '30m' / '1h' from now (ahead only), else None."""
    t = text.strip().lower().lstrip("+")
    m = re.fullmatch(r"(\d{1,3})\s*(m|min|mins|h|hr|hrs)", t)
    if m and ahead:
        n = int(m.group(1))
        return now + (timedelta(hours=n) if m.group(2).startswith("h") else timedelta(minutes=n))
    m = re.fullmatch(r"([01]?\d|2[0-3])[:.]?([0-5]\d)", t)
    if not m:
        return None
    local = now.astimezone(tz)
    at = local.replace(hour=int(m.group(1)), minute=int(m.group(2)), second=0, microsecond=0)
    if ahead and at <= local:
        at += timedelta(days=1)
    if not ahead and at > local:
        at -= timedelta(days=1)
    return at


def parse_decision_id(text: str) -> int | None:
    """D-4, d4, #4 or 4 -> 4; anything else -> None."""
    m = re.fullmatch(r"(?:d)?[-#]?(\d{1,6})", text.strip().lower())
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


@dataclass(frozen=True)
class Decision:
    """One entry of a fixture's decision log."""

    n: int
    at: datetime
    by: str  # platform:user
    name: str  # the person's roster name, as they were known then
    role: str
    phase: str
    decision: str
    rationale: str  # "" when taken through another command and not yet explained
    options: str = ""
    incidents: tuple[int, ...] = ()
    supersedes: int | None = None  # a correction of that entry
    explains: int | None = None  # the rationale for that entry (taken through a command)
    source: str = ""  # the command that took it ("methane INC-3"), "" for /decision
    kind: str = ""  # a DECISION_KINDS key ("" for entries from before types)
    # JESIP asks for these too: when it was taken (if before it was logged), who was
    # consulted, the information it rested on, and when it is to be reviewed
    taken: datetime | None = None
    consulted: str = ""
    information: str = ""
    review: datetime | None = None

    @property
    def id(self) -> str:
        """The entry's human id, e.g. D-4."""
        return f"D-{self.n}"

    def fields(self) -> dict[str, str]:
        """The entry as stream fields (the number and phase are filled in by the store)."""
        return {"at": iso(self.at), "by": self.by, "name": self.name,
                "role": self.role, "decision": self.decision, "rationale": self.rationale,
                "options": self.options, "incidents": json.dumps(list(self.incidents)),
                "supersedes": str(self.supersedes or ""), "explains": str(self.explains or ""),
                "source": self.source, "kind": self.kind,
                "taken": iso(self.taken) if self.taken else "", "consulted": self.consulted,
                "information": self.information,
                "review": iso(self.review) if self.review else ""}

    @classmethod
    def from_fields(cls, h: dict[str, str]) -> Decision:
        """Inverse of fields() (plus n and phase)."""
        return cls(n=int(h["n"]), at=parse_iso(h["at"]), by=h["by"], name=h.get("name", ""),
                   role=h["role"], phase=h.get("phase", ""), decision=h["decision"],
                   rationale=h.get("rationale", ""), options=h.get("options", ""),
                   incidents=tuple(json.loads(h.get("incidents") or "[]")),
                   supersedes=int(h["supersedes"]) if h.get("supersedes") else None,
                   explains=int(h["explains"]) if h.get("explains") else None,
                   source=h.get("source", ""), kind=h.get("kind", ""),
                   taken=parse_iso(h["taken"]) if h.get("taken") else None,
                   consulted=h.get("consulted", ""), information=h.get("information", ""),
                   review=parse_iso(h["review"]) if h.get("review") else None)


@dataclass(frozen=True)
class LogView:
    """The log as read: every entry in order, with what later entries say about each."""

    entries: tuple[Decision, ...]

    def superseded_by(self, n: int) -> int | None:
        """The first later entry that corrects entry n, if any."""
        return next((d.n for d in self.entries if d.supersedes == n), None)

    def chain(self, n: int) -> list[int]:
        """Every entry of n's correction chain, oldest first (D-2, D-4, D-9), from any link."""
        by_n = {d.n: d for d in self.entries}
        first = n
        seen = {n}
        while (d := by_n.get(first)) is not None and d.supersedes and d.supersedes not in seen:
            first = d.supersedes
            seen.add(first)
        out = [first]
        while (later := self.superseded_by(out[-1])) is not None and later not in out:
            out.append(later)
        return out

    def rationale_of(self, n: int) -> str:
        """Entry n's rationale, or the one a later entry gave for it ("" if none yet)."""
        own = next((d.rationale for d in self.entries if d.n == n), "")
        if own:
            return own
        return next((d.rationale for d in self.entries if d.explains == n and d.rationale), "")

    def awaiting_rationale(self) -> list[Decision]:
        """Entries taken through other commands whose rationale has not been given."""
        return [d for d in self.entries if not d.explains and not self.rationale_of(d.n)]
