"""The pack's figures from a fixture's log, as plain values: every incident with its
outcome, and response times by severity (the timeline is bot.evidence.debrief.timeline)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.domain.clock import parse_iso
from bot.domain.incident.incident_model import failed_title
from bot.domain.ledger import Event
from bot.domain.vocab import STATUS_ORDER, STATUSES

ON_SCENE_OR_LATER = set(STATUS_ORDER[STATUS_ORDER.index("on_scene"):])


@dataclass
class IncidentRow:
    """One incident's line in the pack: what, where, and how long each response step took."""

    n: int
    type: str
    severity: int
    location: str
    phase: str
    reported: datetime
    ack_s: int | None = None
    on_scene_s: int | None = None
    close_s: int | None = None
    occurred: datetime | None = None  # when it happened, as the steward said
    platform_at: datetime | None = None  # when the platform says it was sent
    status: str = "reported"
    closed_at: datetime | None = None  # the last close (None: open now)
    arrests: int = 0
    failed_check: str = ""  # a failed inspection's check: its title says so, not the type

    @property
    def what(self) -> str:
        """What it is, as the cards title it: 'Inspection failed: <check>', else its type."""
        return failed_title(self.type, self.failed_check)

    @property
    def times(self) -> list[str]:
        """Occurred, sent, acknowledged and resolved, ISO UTC ('' unknown): export cells."""
        def after(s: int | None) -> str:
            return (self.reported + timedelta(seconds=s)).isoformat() if s is not None else ""
        return [(self.occurred or self.reported).isoformat(),
                self.platform_at.isoformat() if self.platform_at else "",
                after(self.ack_s), after(self.close_s)]

    def open_at(self, at: datetime) -> bool:
        """Whether it was reported by `at` and not closed by then."""
        return self.reported <= at and (self.closed_at is None or self.closed_at > at)

    def outcome(self, clear: datetime | None) -> str:
        """Where it ended, in words: STILL OPEN at ground clear (or now), else its status;
        arrests added."""
        if clear is not None and self.open_at(clear):
            bits = ["STILL OPEN at ground clear", f"last {STATUSES.label(self.status).lower()}"
                    if self.closed_at is None else "closed after it"]
        elif self.closed_at is None:
            bits = ["STILL OPEN", f"last {STATUSES.label(self.status).lower()}"]
        else:
            bits = [STATUSES.label(self.status)]
        if self.arrests:
            bits.append(f"{self.arrests} arrest(s)")
        return ", ".join(bits)


TIME_COLUMNS = ["occurred_at", "platform_at", "acknowledged_at", "resolved_at"]


@dataclass(frozen=True)
class TimelineRow:
    """One line of the night's timeline."""

    at: datetime
    kind: str  # "incident", "closed", "decision", "procedure", "missing person", ...
    ref: str
    text: str
    event: str = ""  # the log event's id ('' for a key timing a phase change recorded)


@dataclass
class ResponseRow:
    """Median and worst seconds of each step for one severity."""

    severity: int
    incidents: int
    steps: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)


def incident_rows(events: list[Event]) -> list[IncidentRow]:
    """Every incident of the log with its acknowledge, on-scene and close times (the first
    time each was reached; a reopen does not move them)."""
    rows: dict[str, IncidentRow] = {}
    for ev in events:
        iid = str(ev.data.get("id", ""))
        if ev.kind == "incident.reported" and iid.startswith("INC-"):
            rows[iid] = IncidentRow(int(iid[4:]), str(ev.data.get("type", "other")),
                                    int(ev.data.get("severity", 1)),
                                    str(ev.data.get("location", "")), str(ev.phase),
                                    parse_iso(ev.data.get("reported_at") or ev.at))
            row = rows[iid]
            if ev.data.get("occurred_at"):
                row.occurred = parse_iso(ev.data["occurred_at"])
            if ev.data.get("platform_at"):
                row.platform_at = parse_iso(ev.data["platform_at"])
            row.failed_check = str(ev.data.get("failed_check", ""))
        elif ev.kind == "incident.status" and iid in rows:
            row, to = rows[iid], ev.data.get("to")
            took = int((parse_iso(ev.at) - row.reported).total_seconds())
            if row.ack_s is None and to != "reported":
                row.ack_s = took
            if row.on_scene_s is None and to in ON_SCENE_OR_LATER:
                row.on_scene_s = took
            if row.close_s is None and ev.data.get("cls") == "close":
                row.close_s = took
            row.status = str(to or row.status)
            row.closed_at = parse_iso(ev.at) if to == "closed" else None
        elif ev.kind == "incident.amended" and iid in rows and "severity" in ev.data.get(
                "new", {}):
            rows[iid].severity = int(ev.data["new"]["severity"])
        elif ev.kind == "arrest.recorded" and str(ev.data.get("incident", "")) in rows:
            rows[str(ev.data["incident"])].arrests += int(ev.data.get("count", 1))
    return sorted(rows.values(), key=lambda r: r.n)


def response_by_severity(rows: list[IncidentRow]) -> list[ResponseRow]:
    """Median and worst time to acknowledge, to be on scene and to close, by severity."""
    out = []
    for sev in sorted({r.severity for r in rows}, reverse=True):
        mine = [r for r in rows if r.severity == sev]
        row = ResponseRow(sev, len(mine))
        for step in ("ack_s", "on_scene_s", "close_s"):
            xs = [getattr(r, step) for r in mine if getattr(r, step) is not None]
            row.steps[step] = (int(statistics.median(xs)), max(xs)) if xs else (None, None)
        out.append(row)
    return out
