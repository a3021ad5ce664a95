"""The incident lifecycle's write rules the Store (bot/store/client.py) builds its scripts
from: counters, the phase read, refusals, and an amendment's guards and re-planning."""

from __future__ import annotations

from bot.domain.incident.incident_rules import replans_escalation
from bot.domain.ledger import Event, Text, chart_deltas, deltas
from bot.domain.outcomes import Reason
from bot.store.base import SEV_BAND, guard
from bot.store.ops import (
    Hget,
    Hincrby,
    HincrbyMany,
    Hset,
    Hsetnx,
    Op,
    RequireIn,
    Zadd,
    ZaddScoreFrom,
    Zrem,
    log_event,
)

STALE = guard(Reason.STALE)  # the deadline no longer applies (acknowledged or closed)
CLAIMED = guard(Reason.CLAIMED)  # another replica fired it first
OPEN_STATUSES = ["reported", "acknowledged", "dispatched", "on_scene", "contained",
                 "handed_to_police"]


def counter_ops(ev: Event) -> list[Op]:
    """HINCRBY ops for an event's counter deltas and its chart counters."""
    ops: list[Op] = []
    counts, chart = deltas(ev), chart_deltas(ev)
    if counts:
        ops.append(HincrbyMany("counts", counts))
    if chart:
        ops.append(HincrbyMany("chart", chart))
    return ops


def phase_op() -> Hget:
    """Read the fixture's phase into Var("phase") (events carry it)."""
    return Hget("meta", "phase", "phase", "pre")


def missing_incident(n: int) -> Text:
    """The refusal of a write about an unknown incident number."""
    return guard(Reason.NO_INCIDENT, n)


def amend_ops(n: int, old: dict[str, str], new: dict[str, str], ev: Event,
               ack_due: int | None) -> tuple[list[Op], list[Op]]:
    """Guards and writes of an amendment: guarded on the values read, the originals kept in
    orig_* fields, counters moved, open order and escalation re-planned."""
    key = f"inc:{n}"
    guards: list[Op] = [RequireIn(key, fld, [value], guard(Reason.CHANGED, n))
                        for fld, value in old.items()]
    ops: list[Op] = [Hsetnx(key, f"orig_{fld}", value) for fld, value in old.items()]
    ops += [
        Hset(key, {**new, "updated_at": ev.at, "amended_at": ev.at}),
        Hincrby(key, "amendments", 1),
        *log_event(ev),
        *counter_ops(ev),
    ]
    if "severity" in new:
        sev = int(new["severity"])
        if ev.data.get("status") != "closed":
            ops.append(ZaddScoreFrom("open", key, "reported_ts", (5 - sev) * SEV_BAND, str(n)))
        if replans_escalation(ev.data.get("status")):
            ops.append(Hset(key, {"esc_next": "0"}))
            ops.append(Zadd("esc", ack_due, f"{n}:ack") if ack_due is not None
                       else Zrem("esc", f"{n}:ack"))
    return guards, ops

