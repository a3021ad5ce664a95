"""The pack's figures from a fixture's log, as plain values: the timeline of incidents,
decisions and key timings, and response times by severity."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.domain.clock import parse_iso
from bot.domain.decision_log import LogView
from bot.domain.fixture.key_timings import Timing
from bot.domain.inspection_checklist import Check, Item
from bot.domain.ledger import Event
from bot.domain.vocab import INCIDENT_TYPES, STATUS_ORDER

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

    @property
    def times(self) -> list[str]:
        """Occurred, sent, acknowledged and resolved, ISO UTC ('' unknown): export cells."""
        def after(s: int | None) -> str:
            return (self.reported + timedelta(seconds=s)).isoformat() if s is not None else ""
        return [(self.occurred or self.reported).isoformat(),
                self.platform_at.isoformat() if self.platform_at else "",
                after(self.ack_s), after(self.close_s)]


TIME_COLUMNS = ["occurred_at", "platform_at", "acknowledged_at", "resolved_at"]


@dataclass(frozen=True)
class TimelineRow:
    """One line of the night's timeline."""

    at: datetime
    kind: str  # "incident", "decision", "timing", "inspection"
    ref: str
    text: str


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
        elif ev.kind == "incident.status" and iid in rows:
            row, to = rows[iid], ev.data.get("to")
            took = int((parse_iso(ev.at) - row.reported).total_seconds())
            if row.ack_s is None and to != "reported":
                row.ack_s = took
            if row.on_scene_s is None and to in ON_SCENE_OR_LATER:
                row.on_scene_s = took
            if row.close_s is None and ev.data.get("cls") == "close":
                row.close_s = took
        elif ev.kind == "incident.amended" and iid in rows and "severity" in ev.data.get(
                "new", {}):
            rows[iid].severity = int(ev.data["new"]["severity"])
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


def timeline(rows: list[IncidentRow], decisions: LogView, timings: list[Timing],
             checks: list[Check], items: tuple[Item, ...],
             place: Callable[[str], str] = str) -> list[TimelineRow]:
    """Incidents, decisions, key timings and inspection results in time order."""
    labels = {i.key: i.label for i in items}
    out = [TimelineRow(r.reported, "incident", f"INC-{r.n}",
                       f"S{r.severity} {INCIDENT_TYPES.label(r.type)} at {place(r.location)}")
           for r in rows]
    for d in decisions.entries:
        link = f" (supersedes D-{d.supersedes})" if d.supersedes else \
            f" (rationale for D-{d.explains})" if d.explains else ""
        out.append(TimelineRow(d.at, "decision", d.id, f"{d.role}: {d.decision}{link}"))
    out += [TimelineRow(t.at, "timing", "", t.label) for t in timings]
    out += [TimelineRow(c.at, "inspection", c.item,
                        f"{'PASSED' if c.outcome == 'pass' else 'FAILED'}: "
                        f"{labels.get(c.item, c.item)}"
                        + (f" (INC-{c.incident})" if c.incident else "")) for c in checks]
    return sorted(out, key=lambda r: r.at)
