"""The pack's timeline: one row per entry of the fixture's log (incidents and every change of
theirs, closures, decisions, inspections, phases, the missing-person search and its "found",
broadcasts, procedures, roll calls, acknowledgements, check-ins, stand-downs, arrests and
bans as counts), each carrying its event's id, plus the key timings the log holds only as a
phase change. Three kinds are left out on purpose, named in NOT_IN_TIMELINE."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.domain.clock import parse_iso
from bot.domain.decision_log import LogView
from bot.domain.fixture.key_timings import Timing
from bot.domain.incident.incident_model import failed_title
from bot.domain.ledger import Event
from bot.domain.procedures import LIFE_SAFETY_WORDS, PROCEDURES
from bot.domain.vocab import BAN_STATUSES, BAN_TYPES, OFFENCES, PHASES, STATUSES
from bot.evidence.debrief.figures import TimelineRow

# Repeats and streams, not entries of the record: the scheduler's "still open after 20m"
# reminders (the incident's own rows say when it was open) and live position pings.
NOT_IN_TIMELINE = frozenset({"incident.reminder", "steward.position", "incident.live_location"})


@dataclass(frozen=True)
class Labels:
    """How the timeline names places and posts (the ground's words)."""

    place: Callable[[str], str] = str
    post: Callable[[str], str] = str


def in_timeline(ev: Event) -> bool:
    """Whether an event of the log has a row of its own in the timeline."""
    return ev.kind not in NOT_IN_TIMELINE


def message_word(kind: str) -> str:
    """'EVACUATE', 'MISSING', 'ROLL CALL', 'Broadcast' for a message's kind."""
    if kind in PROCEDURES:
        return PROCEDURES[kind][0]
    if kind == "rollcall":
        return "ROLL CALL"
    return LIFE_SAFETY_WORDS.get(kind, "Broadcast")


def _target(target: str, place: Callable[[str], str]) -> str:
    return "whole ground" if target == "all" else place(target.removeprefix("zone:")) \
        if target.startswith("zone:") else target


def _dref(value: object) -> str:
    """A decision's reference as the log holds it (4 or 'D-4') -> 'D-4'."""
    text = str(value)
    return text if text.startswith("D-") else f"D-{text}"


def _row(ev: Event, words: dict[str, str], labels: Labels,
         decisions: LogView | None) -> tuple[str, str, str]:
    """(kind, ref, text) of one event's row."""
    d, k = ev.data, ev.kind
    ref = str(d.get("id", "")) if k.startswith(("incident.", "decision.", "stewards.")) else ""
    if k == "incident.reported":
        return ("incident", ref, f"S{d.get('severity', '')} "
                f"{failed_title(str(d.get('type', 'other')), str(d.get('failed_check', '')))} at "
                f"{labels.place(str(d.get('location', '')))}")
    if k == "incident.status":
        note = f": {d['note']}" if d.get("note") else ""
        to = str(d.get("to", ""))
        if to == "closed":
            return "closed", ref, f"CLOSED (was {STATUSES.label(str(d.get('from', '')))}){note}"
        return ("incident", ref, f"{STATUSES.label(str(d.get('from', '')))} -> "
                f"{STATUSES.label(to)}{note}")
    if k == "incident.amended":
        new = d.get("new", {}) if isinstance(d.get("new"), dict) else {}
        return "incident", ref, "amended: " + ", ".join(f"{a} {v}" for a, v in new.items())
    if k in ("incident.merged", "incident.unmerged"):
        return "incident", ref, "another report merged into it" if k == "incident.merged" \
            else "a merged report taken out again"
    if k in ("incident.escalated", "incident.update"):
        return "incident", ref, f"{k.split('.')[1]}: {d.get('text', '')}"
    if k == "incident.evidence":
        return "incident", ref, "evidence added"
    if k == "decision.logged":
        link = f" (supersedes {_dref(d['supersedes'])})" if d.get("supersedes") else \
            f" (rationale for {_dref(d['explains'])})" if d.get("explains") else ""
        n = int(ref[2:]) if ref.startswith("D-") and ref[2:].isdigit() else 0
        later = decisions.superseded_by(n) if decisions is not None and n else None
        return ("decision", ref, f"{ev.role}: {d.get('decision', '')}{link}"
                + (f" - SUPERSEDED by D-{later}" if later else ""))
    if k == "inspection.checked":
        return ("inspection", str(d.get("item", "")),
                f"{'PASSED' if d.get('outcome') == 'pass' else 'FAILED'}: "
                f"{d.get('label', d.get('item', ''))}"
                + (f" ({d['incident']})" if d.get("incident") else ""))
    if k in ("stewards.procedure", "stewards.broadcast"):
        kind = str(d.get("kind", "broadcast"))
        word = words[ref] = message_word(kind)
        what = {"missing": "missing person", "found": "found", "rollcall": "roll call"}.get(
            kind, "procedure" if k == "stewards.procedure" else "broadcast")
        text = str(d.get("text", "")).replace("\n", " ")
        return (what, ref, f"{word} to {_target(str(d.get('target', '')), labels.place)}"
                f" (sent to {d.get('sent', 0)})" + (f": {text}" if text else ""))
    if k == "stewards.acknowledged":
        return ("acknowledgement", ref,
                f"{words.get(ref, 'Message')} {ref}: 'I have it' from a {ev.role}")
    if k == "stewards.chased":
        return "chase", ref, f"{words.get(ref, 'Message')} {ref}: chased {d.get('to', 0)} " \
                             "steward(s) who had not acknowledged"
    if k == "stewards.missing_police":
        return "missing person", ref, f"MISSING {ref}: not found by the deadline; police told"
    if k == "steward.onpost":
        return "check-in", "", f"on post: {labels.post(str(d.get('post', '')))} ({ev.role})"
    if k == "steward.standdown":
        return "stand-down", "", f"stood down: {len(d.get('who') or [ev.by])} steward(s)"
    if k == "briefing.acknowledged":
        return "briefing", str(d.get("version", "")), f"briefing signed off by a {ev.role}"
    if k == "arrest.recorded":
        return ("arrest", str(d.get("incident", "")), f"{d.get('count', 1)} arrest(s): "
                f"{OFFENCES.label(str(d.get('offence', '')))}, {d.get('place', '')}, "
                f"{d.get('side', '')}")
    if k == "ban.recorded":
        return ("ban", str(d.get("incident", "")), f"{d.get('count', 1)} banning order(s): "
                f"{BAN_TYPES.label(str(d.get('type', '')))}, "
                f"{BAN_STATUSES.label(str(d.get('status', '')))}")
    if k == "fixture.phase":
        return "phase", "", f"{PHASES.label(str(d.get('from', '')))} -> " \
                            f"{PHASES.label(str(d.get('phase', '')))}"
    if k == "timing.recorded":
        return "timing", str(d.get("key", "")), str(d.get("label", d.get("key", "")))
    if k == "deploy.filled":
        return "rota", "", f"rota imported: {len(d.get('rows') or [])} post(s) filled"
    if k == "deploy.attendance":
        return "rota", "", f"expected attendance {d.get('attendance', '')}"
    if k == "fixture.created":
        return "fixture", "", f"fixture created: {d.get('home', '')} v {d.get('away', '')}, " \
                              f"planned kick-off {d.get('kickoff', '')}"
    if k == "fixture.changed":
        return "fixture", "", "fixture changed: " + ", ".join(
            sorted(a for a in d if a not in ("id", "restricted")))
    if k == "fixture.early_warning":
        return "early warning", str(d.get("zone", "")), str(d.get("text", ""))
    return k.split(".")[0], ref, k  # a kind this version has no words for: named, not lost


def timeline(events: list[Event], decisions: LogView | None, timings: list[Timing],
             labels: Labels = Labels()) -> list[TimelineRow]:
    """Every timeline event's row, and the key timings no timing.recorded event holds (those
    a phase change recorded), in time order (log order within the same second)."""
    words: dict[str, str] = {}
    out: list[TimelineRow] = []
    recorded: set[str] = set()
    for ev in events:
        if not in_timeline(ev):
            continue
        if ev.kind == "timing.recorded":
            recorded.add(str(ev.data.get("key", "")))
        kind, ref, text = _row(ev, words, labels, decisions)
        out.append(TimelineRow(parse_iso(ev.at), kind, ref, text, ev.id))
    out += [TimelineRow(t.at, "timing", t.key, t.label) for t in timings
            if t.key not in recorded]
    return sorted(out, key=lambda r: r.at)


def missing_from(events: list[Event], rows: list[TimelineRow]) -> int:
    """How many of the log's timeline events the rows lack (the bench's check: 0)."""
    have = {r.event for r in rows}
    return sum(1 for ev in events if in_timeline(ev) and ev.id not in have)
