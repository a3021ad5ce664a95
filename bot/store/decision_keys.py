"""The decision log's keys: an append-only stream per fixture ('decisions'), a number per
entry ('decseq') and a marker per number ('dec:<n>', so a correction can name only an entry
that exists). Nothing here, or anywhere else, rewrites or deletes an entry."""

from __future__ import annotations

from typing import Any

from bot.domain.clock import iso
from bot.domain.decision_log import Decision, LogView
from bot.domain.ledger import PHASE, Event, Var
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.lifecycle import missing_incident, phase_op
from bot.store.ops import (
    Get,
    Incr,
    Op,
    RequireExists,
    RequireMissing,
    Set,
    Xadd,
    Zadd,
    Zrem,
    log_event,
)

STREAM = "decisions"
SEQ = "decseq"
N = Var("n")
NEWER = Var("current")


class DecisionLog:
    """Append and read one deployment's decision logs (one per fixture)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def append(self, fx_id: str, entry: Decision, dedupe: str) -> Applied:
        """Append an entry (its number and phase are taken in the same script) and its event
        to the fixture's log, in one round trip; a redelivery (same dedupe key) writes
        nothing and returns the number it took. Refused (nothing written) when the fixture,
        a linked incident or the superseded/explained entry does not exist."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)),
                         *self.ops(entry)]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    @staticmethod
    def ops(entry: Decision) -> list[Op]:
        """The entry's writes, to go into the write of the command that took the decision
        (e.g. a procedure: Stewarding.send `also`), so the two are one round trip; the
        entry's number is the script's Var("n") (Applied.n)."""
        ops: list[Op] = [RequireExists(f"inc:{i}", missing_incident(i)) for i in entry.incidents]
        for n in (entry.supersedes, entry.explains):
            if n is not None:
                ops.append(RequireExists(f"dec:{n}", guard(Reason.NO_DECISION, n)))
        marks: list[Op] = []
        if entry.review is not None:  # the sweep reminds command when it is due
            marks.append(Zadd("esc", int(entry.review.timestamp()), "D-" + N + ":review"))
        if entry.supersedes is not None:
            # one correction per entry, so a chain stays a chain (D-2 -> D-4 -> D-9)
            sup = f"decsup:{entry.supersedes}"
            ops += [Get(sup, "current"),
                    RequireMissing(sup, guard(Reason.SUPERSEDED, entry.supersedes, NEWER))]
            marks.append(Set(sup, N))
        fields = {k: v for k, v in entry.fields().items() if v}
        data: dict[str, Any] = {"id": "D-" + N, "decision": entry.decision,
                                "rationale": entry.rationale, "options": entry.options,
                                "incidents": [f"INC-{i}" for i in entry.incidents]}
        for key in ("supersedes", "explains"):
            if getattr(entry, key):
                data[key] = f"D-{getattr(entry, key)}"
        for key in ("source", "kind"):
            if getattr(entry, key):
                data[key] = getattr(entry, key)
        ev = Event(kind="decision.logged", at=iso(entry.at), by=entry.by, role=entry.role,
                   data=data)
        return [
            *ops,
            phase_op(),
            Incr(SEQ, "n"),
            Set("dec:" + N, "1"),
            *marks,
            Xadd(STREAM, {"n": N, "phase": PHASE, **fields}),
            *log_event(ev),
        ]

    async def review_due(self, fx_id: str, n: int, ev: Event, outbox: list[Op]) -> bool:
        """Decision n's review reminder: its deadline gone, its event and messages, in one
        write that runs once (False: another replica, or a redelivery, sent it)."""
        ops: list[Op] = [Zrem("esc", f"D-{n}:review"), *log_event(ev), *outbox]
        applied = await self.gateway.apply(fx_prefix(fx_id, self.space), ops,
                                           f"decision-review:{n}")
        return not applied.duplicate

    async def read(self, fx_id: str) -> LogView:
        """Every entry of the fixture's log, in the order they were made."""
        rows = await self.gateway.call(lambda r: r.xrange(fx_prefix(fx_id, self.space) + STREAM))
        return LogView(tuple(Decision.from_fields(h) for _, h in rows))
