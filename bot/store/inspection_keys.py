"""Inspection results' keys: an append-only stream per fixture ('insp')."""

from __future__ import annotations

from bot.domain.inspection_checklist import Check
from bot.domain.ledger import Event, Var
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.lifecycle import phase_op
from bot.store.ops import Op, RequireExists, Xadd, log_event

STREAM = "insp"
N = Var("n")  # the number of the incident a failure raises, taken in the same write


class Inspections:
    """Record and read a fixture's inspection results."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def record(self, fx_id: str, check: Check, ev: Event, dedupe: str) -> Applied:
        """Append one tick and its event, in one round trip (a redelivery writes nothing); a
        failure is written with the incident it raises instead (failure_ops)."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op(),
                         Xadd(STREAM, check.fields()), *log_event(ev)]
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    @staticmethod
    def failure_ops(check: Check, ev: Event) -> list[Op]:
        """A failed tick's record and event as ops of the write that logs the incident it
        raises (Store.report_incident `also`, which has read the phase): one round trip, the
        incident's number filled in by the script, so a crash or a second replica cannot
        split or double them."""
        ev.data = {**ev.data, "incident": "INC-" + N}
        return [Xadd(STREAM, {**check.fields(), "incident": N}), *log_event(ev)]

    async def read(self, fx_id: str) -> list[Check]:
        """Every tick, in order."""
        rows = await self.gateway.call(lambda r: r.xrange(fx_prefix(fx_id, self.space) + STREAM))
        return [Check.from_fields(h) for _, h in rows]
