"""Ingress counts' keys, per fixture: people in per entry point ('ing:tot') and per turnstile
('ing:turn'), per entry point in 30-second bins ('ing:bins', field '<entry>|<bin start>'),
when each entry point last sent and last counted someone, the entry points control closed,
and an append-only stream of every batch counted ('ing:log'). A batch is counted with its
batch id's dedupe key in one round trip, so a resent batch is never counted twice."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.domain.ingress_batch import Batch
from bot.domain.ingress_model import BIN_S, RATE_WINDOW_S, TREND_S, Counts
from bot.domain.ledger import Event
from bot.domain.outcomes import Reason
from bot.store.base import Applied, fx_prefix, guard
from bot.store.gateway import Gateway
from bot.store.ops import (
    HincrbyMany,
    Hset,
    Op,
    RequireExists,
    Sadd,
    Srem,
    Xadd,
    log_event,
)

TOTALS, TURNSTILES, BINS = "ing:tot", "ing:turn", "ing:bins"
HEARD, FLOWING, CLOSED, LOG = "ing:heard", "ing:flow", "ing:closed", "ing:log"
FED = "ing:fed"  # entry point -> the last batch its turnstiles sent themselves (not typed)
LOOKBACK_S = max(RATE_WINDOW_S, 2 * TREND_S) + 2 * BIN_S


def bin_of(ts: float) -> int:
    """The start of the bin a time falls in (epoch seconds)."""
    return int(ts) // BIN_S * BIN_S


class IngressCounts:
    """Count batches once each, read the counts back, and record entry points closed."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)

    async def count(self, fx_id: str, batch: Batch, received: str) -> Applied:
        """Add a batch's counts, once for its id (`.duplicate` when counted before)."""
        bins: dict[str, int] = {}
        heard: dict[str, float] = {}
        flowing: dict[str, float] = {}
        for r in batch.readings:
            ts = r.at.timestamp()
            field = f"{r.entry}|{bin_of(ts)}"
            bins[field] = bins.get(field, 0) + r.count
            heard[r.entry] = max(heard.get(r.entry, 0.0), ts)
            if r.count:
                flowing[r.entry] = max(flowing.get(r.entry, 0.0), ts)
        turn: dict[str, int] = {}
        for r in batch.readings:
            turn[r.turnstile] = turn.get(r.turnstile, 0) + r.count
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)),
                         HincrbyMany(TOTALS, batch.per_entry()), HincrbyMany(TURNSTILES, turn),
                         HincrbyMany(BINS, bins), Hset(HEARD, heard)]
        if flowing:
            ops.append(Hset(FLOWING, flowing))
        if batch.live:
            ops.append(Hset(FED, heard))
        ops.append(Xadd(LOG, {"batch": batch.id, "received": received,
                              "counts": json.dumps(batch.per_entry(), sort_keys=True)}))
        return await self.gateway.apply(fx_prefix(fx_id, self.space), ops, f"ingress:{batch.id}")

    async def read(self, fx_id: str, entries: list[str], now_ts: float) -> Counts:
        """The counts as the model reads them at `now_ts` (one pipelined round trip)."""
        p = fx_prefix(fx_id, self.space)
        starts = range(bin_of(now_ts - LOOKBACK_S), bin_of(now_ts) + BIN_S, BIN_S)
        fields = [f"{e}|{s}" for e in entries for s in starts]
        pipe = self.gateway.pipeline()
        pipe.hgetall(p + TOTALS)
        pipe.hmget(p + BINS, fields)
        pipe.hgetall(p + HEARD)
        pipe.hgetall(p + FLOWING)
        pipe.smembers(p + CLOSED)
        pipe.hgetall(p + FED)
        totals, counted, heard, flowing, closed, fed = await self.gateway.call(pipe.execute())
        bins: dict[str, dict[int, int]] = {e: {} for e in entries}
        for f, n in zip(fields, counted, strict=True):
            if n:
                entry, _, start = f.partition("|")
                bins[entry][int(start)] = int(n)
        return Counts(datetime.fromtimestamp(now_ts, UTC),
                      {k: int(v) for k, v in totals.items()}, bins,
                      {k: float(v) for k, v in heard.items()},
                      {k: float(v) for k, v in flowing.items()}, frozenset(closed),
                      {k: float(v) for k, v in fed.items()})

    async def curve(self, fx_id: str) -> dict[str, dict[int, int]]:
        """Entry point -> bin start -> people counted in it, the whole night."""
        raw = await self.gateway.call(lambda r: r.hgetall(fx_prefix(fx_id, self.space) + BINS))
        out: dict[str, dict[int, int]] = {}
        for f, n in raw.items():
            entry, _, start = f.partition("|")
            out.setdefault(entry, {})[int(start)] = int(n)
        return out

    async def set_closed(self, fx_id: str, entry: str, closed: bool, ev: Event,
                         dedupe: str) -> Applied:
        """Record that control closed (or reopened) an entry point, with its event."""
        op: Op = Sadd(CLOSED, entry) if closed else Srem(CLOSED, entry)
        return await self.gateway.apply(fx_prefix(fx_id, self.space), [
            RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), op, *log_event(ev)], dedupe)

    async def batches(self, fx_id: str) -> int:
        """How many batches were counted."""
        return int(await self.gateway.call(lambda r: r.xlen(fx_prefix(fx_id, self.space) + LOG)))

