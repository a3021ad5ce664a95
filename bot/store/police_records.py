"""Arrests and bans of a fixture (numbered records with counters and an incident link),
and the blanking of their custody references when the retention period ends."""

from __future__ import annotations

from bot.domain.ledger import PHASE, Event, Var
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.lifecycle import counter_ops, phase_op
from bot.store.ops import Hincrby, Hset, Incr, Op, RequireExists, log_event

N = Var("n")  # the number the record took


class PoliceRecords:
    """Police records (kind 'arr' or 'ban') of each fixture, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def record_police(self, fx_id: str, kind: str, fields: dict[str, str], ev: Event,
                            dedupe: str, link: int | None) -> Applied:
        """Record an arrest or a ban (kind 'arr' or 'ban') with counters and incident link."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id))]
        if link is not None:
            ops.append(RequireExists(f"inc:{link}", guard(Reason.NO_LINK, link)))
        ops += [
            phase_op(),
            Incr(f"{kind}seq", "n"),
            Hset(f"{kind}:" + N, {"n": N, "phase": PHASE, **fields}),
            *log_event(ev),
            *counter_ops(ev),
        ]
        if link is not None:
            count = int(ev.data.get("count", 1))
            ops.append(Hincrby(f"inc:{link}", "arrests" if kind == "arr" else "bans", count))
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, dedupe)

    async def police_records(self, fx_id: str, kind: str) -> list[dict[str, str]]:
        """Every arrest ('arr') or ban ('ban') record of a fixture, in number order."""
        p = fx_prefix(fx_id, self.space)
        count = int(await self.gateway.call(lambda r: r.get(f"{p}{kind}seq")) or 0)
        if not count:
            return []
        pipe = self.gateway.pipeline()
        for i in range(1, count + 1):
            pipe.hgetall(f"{p}{kind}:{i}")
        return [h for h in await self.gateway.call(pipe.execute()) if h]

    async def expire_refs(self, fx_id: str, records: list[str], ev: Event,
                          at: str) -> Applied:
        """Blank the custody/occurrence refs of these records ('arr:3') and log it."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op()]
        ops += [Hset(rec, {"ref": "", "ref_expired_at": at}) for rec in records]
        ops += log_event(ev)
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops)
