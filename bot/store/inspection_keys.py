"""Inspection results' keys: an append-only stream per fixture ('insp')."""

from __future__ import annotations

from bot.domain.inspection_checklist import Check
from bot.domain.ledger import Event
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.lifecycle import missing_incident, phase_op
from bot.store.ops import Op, RequireExists, Xadd, log_event

STREAM = "insp"


class Inspections:
    """Record and read a fixture's inspection results."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def record(self, fx_id: str, check: Check, ev: Event, dedupe: str) -> Applied:
        """Append one tick and its event, in one round trip (a redelivery writes nothing)."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id))]
        if check.incident is not None:
            ops.append(RequireExists(f"inc:{check.incident}", missing_incident(check.incident)))
        ops += [phase_op(), Xadd(STREAM, check.fields()), *log_event(ev)]
        return await self.gateway.apply(fx_prefix(fx_id), ops, dedupe)

    async def read(self, fx_id: str) -> list[Check]:
        """Every tick, in order."""
        rows = await self.gateway.call(lambda r: r.xrange(fx_prefix(fx_id) + STREAM))
        return [Check.from_fields(h) for _, h in rows]
