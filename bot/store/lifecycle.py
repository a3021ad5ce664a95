"""The Store's incident lifecycle part: escalation deadlines, amendments, merges and
retention. Each write is one `apply` round trip in the fixture's slot."""

from __future__ import annotations

import json
from typing import Any

from bot.domain.incident.incident_model import Incident
from bot.domain.incident.incident_rules import replans_escalation
from bot.domain.ledger import Event, Text, chart_deltas, deltas
from bot.domain.outcomes import Reason
from bot.store.base import SEV_BAND, Applied, Refused, StoreBase, fx_prefix, guard, note_write
from bot.store.ops import (
    Hget,
    Hincrby,
    HincrbyMany,
    Hset,
    Hsetnx,
    Op,
    RequireExists,
    RequireIn,
    ReturnHash,
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


class Lifecycle(StoreBase):
    """Escalation deadlines, amendments, merges and retention."""

    async def due_deadlines(self, fx_id: str, now_ts: int,
                            limit: int = 200) -> list[tuple[str, int]]:
        """(member, due) of deadlines due by now_ts, earliest first."""
        rows = await self._call(self.r.zrangebyscore(fx_prefix(fx_id) + "esc", "-inf", now_ts,
                                                     start=0, num=limit, withscores=True))
        return [(m, int(s)) for m, s in rows]

    async def first_deadline(self, fx_id: str) -> int | None:
        """The earliest pending deadline (epoch seconds), or None."""
        rows = await self._call(self.r.zrange(fx_prefix(fx_id) + "esc", 0, 0, withscores=True))
        return int(rows[0][1]) if rows else None

    async def due_deadlines_of(self, fx_ids: list[str], now_ts: int,
                               limit: int = 200) -> dict[str, list[tuple[str, int]]]:
        """Deadlines due by now_ts of several fixtures, in one pipelined round trip; fixtures
        with nothing due are left out."""
        if not fx_ids:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for fx_id in fx_ids:
            pipe.zrangebyscore(fx_prefix(fx_id) + "esc", "-inf", now_ts, start=0, num=limit,
                               withscores=True)
        rows = await self._call(pipe.execute())
        return {fx_id: [(m, int(s)) for m, s in due]
                for fx_id, due in zip(fx_ids, rows, strict=True) if due}

    async def first_deadline_of(self, fx_ids: list[str]) -> int | None:
        """The earliest pending deadline of several fixtures (one round trip), or None."""
        if not fx_ids:
            return None
        pipe = self.r.pipeline(transaction=False)
        for fx_id in fx_ids:
            pipe.zrange(fx_prefix(fx_id) + "esc", 0, 0, withscores=True)
        firsts = [int(rows[0][1]) for rows in await self._call(pipe.execute()) if rows]
        return min(firsts, default=None)

    async def deadlines(self, fx_id: str) -> dict[str, int]:
        """Every pending deadline of a fixture: member -> due."""
        rows = await self._call(self.r.zrange(fx_prefix(fx_id) + "esc", 0, -1, withscores=True))
        return {m: int(s) for m, s in rows}

    async def drop_deadline(self, fx_id: str, member: str) -> None:
        """Forget a deadline that no longer applies."""
        await self._call(self.r.zrem(fx_prefix(fx_id) + "esc", member))

    async def _claim(self, fx_id: str, n: int, ev: Event, guard: list[Op], writes: list[Op],
                     member: str) -> Incident | None:
        key = f"inc:{n}"
        ops: list[Op] = [
            RequireExists(key, STALE), *guard, phase_op(), *writes,
            Hset(key, {"updated_at": ev.at}), *log_event(ev), ReturnHash(key),
        ]
        try:
            applied = await self.apply(fx_prefix(fx_id), ops)
        except Refused as exc:
            if exc.reason is Reason.STALE:
                await self.drop_deadline(fx_id, member)
            return None
        return applied.incident

    async def claim_tier(self, fx_id: str, n: int, tier: int, ev: Event,
                         next_due: int | None, outbox: list[Op] | None = None
                         ) -> Incident | None:
        """Fire escalation tier `tier` of INC-n once: log it, move the deadline on and put
        its alerts (`outbox` ops) in the outbox, all in one script; None if it was
        acknowledged meanwhile or another replica fired it."""
        key, member = f"inc:{n}", f"{n}:ack"
        guard: list[Op] = [RequireIn(key, "status", ["reported"], STALE),
                           RequireIn(key, "esc_next", [str(tier)], CLAIMED)]
        writes: list[Op] = [
            Hset(key, {"esc_next": str(tier + 1), "escalated_at": ev.at,
                       "escalated_tier": str(tier + 1)}),
            Zadd("esc", next_due, member) if next_due is not None else Zrem("esc", member),
            *(outbox or []),
        ]
        return await self._claim(fx_id, n, ev, guard, writes, member)

    async def claim_reminder(self, fx_id: str, n: int, k: int, ev: Event,
                             next_due: int, outbox: list[Op] | None = None
                             ) -> Incident | None:
        """Send open-too-long reminder k of INC-n once (its messages, `outbox` ops, written
        in the same script) and schedule the next one."""
        key, member = f"inc:{n}", f"{n}:open"
        guard: list[Op] = [RequireIn(key, "status", OPEN_STATUSES, STALE),
                           RequireIn(key, "remind_n", [str(k)], CLAIMED)]
        writes: list[Op] = [Hset(key, {"remind_n": str(k + 1)}), Zadd("esc", next_due, member),
                            *(outbox or [])]
        return await self._claim(fx_id, n, ev, guard, writes, member)

    async def amend_incident(self, fx_id: str, n: int, old: dict[str, str],
                             new: dict[str, str], ev: Event, dedupe: str,
                             ack_due: int | None) -> Applied:
        """Correct type/severity/location: guarded on the values read, the originals kept in
        orig_* fields, counters moved, open order and escalation re-planned; one round trip."""
        if ack_due is not None:
            await self.index_escalation(fx_id)
        guards, writes = _amend_ops(n, old, new, ev, ack_due)
        ops: list[Op] = [RequireExists(f"inc:{n}", missing_incident(n)), *guards, phase_op(),
                         *writes, ReturnHash(f"inc:{n}")]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def police_records(self, fx_id: str, kind: str) -> list[dict[str, str]]:
        """Every arrest ('arr') or ban ('ban') record of a fixture, in number order."""
        p = fx_prefix(fx_id)
        count = int(await self._call(self.r.get(f"{p}{kind}seq")) or 0)
        if not count:
            return []
        pipe = self._pipe()
        for i in range(1, count + 1):
            pipe.hgetall(f"{p}{kind}:{i}")
        return [h for h in await self._call(pipe.execute()) if h]

    async def expire_refs(self, fx_id: str, records: list[str], ev: Event,
                          at: str) -> Applied:
        """Blank the custody/occurrence refs of these records ('arr:3') and log it."""
        ops: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op()]
        ops += [Hset(rec, {"ref": "", "ref_expired_at": at}) for rec in records]
        ops += log_event(ev)
        return await self.apply(fx_prefix(fx_id), ops)

    async def merge_record(self, fx_id: str, token: str) -> dict[str, Any] | None:
        """A merged report as its split would log it (None: split out already, or expired)."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}mrg:{token}"))
        return json.loads(raw) if raw else None

    async def take_merge(self, fx_id: str, token: str, who: str) -> dict[str, Any] | None:
        """Claim a merged report once so its reporter can split it out (None if not theirs,
        already split, or expired)."""
        key = f"{fx_prefix(fx_id)}mrg:{token}"
        raw = await self._call(self.r.get(key))
        if not raw or json.loads(raw).get("who") != who:
            return None
        note_write()
        if not await self._call(self.r.delete(key)):
            return None  # another press got there first
        return json.loads(raw)

    async def unmerge(self, fx_id: str, n: int, ev: Event,
                      lower: tuple[str, str, Event, int | None] | None = None) -> Applied:
        """Record on INC-n that one merged report became its own incident; with `lower`
        (old severity, new severity, the amendment event, the new first escalation due) the
        severity that report raised comes down in the same round trip (guarded on the old)."""
        key = f"inc:{n}"
        guards: list[Op] = []
        writes: list[Op] = []
        if lower is not None:
            old, new, amend, ack_due = lower
            if ack_due is not None:
                await self.index_escalation(fx_id)
            guards, writes = _amend_ops(n, {"severity": old}, {"severity": new}, amend, ack_due)
        ops: list[Op] = [RequireExists(key, missing_incident(n)), *guards, phase_op(),
                         Hincrby(key, "merged", -1), *log_event(ev), *writes,
                         ReturnHash(key)]
        return await self.apply(fx_prefix(fx_id), ops)


def _amend_ops(n: int, old: dict[str, str], new: dict[str, str], ev: Event,
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

