"""Store operations of the incident lifecycle: escalation deadlines, amendments, merges and
retention. Each write is one `Store.apply` round trip in the fixture's slot."""

from __future__ import annotations

import json
from typing import Any

from bot.domain.ledger import Event
from bot.store.client import SEV_BAND, Applied, Refused, Store, counter_ops, fx_prefix

STALE = "stale"  # refusal text: the deadline no longer applies (acknowledged or closed)
CLAIMED = "claimed"  # refusal text: another replica fired it first


async def due_deadlines(store: Store, fx_id: str, now_ts: int,
                        limit: int = 200) -> list[tuple[str, int]]:
    """(member, due) of deadlines due by now_ts, earliest first."""
    rows = await store._call(store.r.zrangebyscore(fx_prefix(fx_id) + "esc", "-inf", now_ts,
                                                   start=0, num=limit, withscores=True))
    return [(m, int(s)) for m, s in rows]


async def due_deadlines_of(store: Store, fx_ids: list[str], now_ts: int,
                           limit: int = 200) -> dict[str, list[tuple[str, int]]]:
    """Deadlines due by now_ts of several fixtures, in one pipelined round trip; fixtures
    with nothing due are left out."""
    if not fx_ids:
        return {}
    pipe = store.r.pipeline(transaction=False)
    for fx_id in fx_ids:
        pipe.zrangebyscore(fx_prefix(fx_id) + "esc", "-inf", now_ts, start=0, num=limit,
                           withscores=True)
    rows = await store._call(pipe.execute())
    return {fx_id: [(m, int(s)) for m, s in due] for fx_id, due in zip(fx_ids, rows, strict=True)
            if due}


async def first_deadline_of(store: Store, fx_ids: list[str]) -> int | None:
    """The earliest pending deadline of several fixtures (one round trip), or None."""
    if not fx_ids:
        return None
    pipe = store.r.pipeline(transaction=False)
    for fx_id in fx_ids:
        pipe.zrange(fx_prefix(fx_id) + "esc", 0, 0, withscores=True)
    firsts = [int(rows[0][1]) for rows in await store._call(pipe.execute()) if rows]
    return min(firsts, default=None)


async def first_deadline(store: Store, fx_id: str) -> int | None:
    """The earliest pending deadline (epoch seconds), or None."""
    rows = await store._call(store.r.zrange(fx_prefix(fx_id) + "esc", 0, 0, withscores=True))
    return int(rows[0][1]) if rows else None


async def deadlines(store: Store, fx_id: str) -> dict[str, int]:
    """Every pending deadline of a fixture: member -> due."""
    rows = await store._call(store.r.zrange(fx_prefix(fx_id) + "esc", 0, -1, withscores=True))
    return {m: int(s) for m, s in rows}


async def drop_deadline(store: Store, fx_id: str, member: str) -> None:
    """Forget a deadline that no longer applies."""
    await store._call(store.r.zrem(fx_prefix(fx_id) + "esc", member))


async def _claim(store: Store, fx_id: str, n: int, ev: Event, guard: list[list[Any]],
                 writes: list[list[Any]], member: str) -> dict[str, str] | None:
    key = f"inc:{n}"
    ops: list[list[Any]] = [
        ["require_exists", key, STALE], *guard,
        ["hget", "meta", "phase", "phase", "pre"],
        *writes,
        ["hset", key, "updated_at", ev.at],
        ["xadd", "log", *ev.fields()],
        ["return_hash", key],
    ]
    try:
        applied = await store.apply(fx_prefix(fx_id), ops)
    except Refused as exc:
        if str(exc) == STALE:
            await drop_deadline(store, fx_id, member)
        return None
    return applied.hashes[0]


async def claim_tier(store: Store, fx_id: str, n: int, tier: int, ev: Event,
                     next_due: int | None) -> dict[str, str] | None:
    """Fire escalation tier `tier` of INC-n once: log it and move the deadline on; None if
    it was acknowledged meanwhile or another replica fired it."""
    key, member = f"inc:{n}", f"{n}:ack"
    guard = [["require_in", key, "status", ["reported"], STALE],
             ["require_in", key, "esc_next", [str(tier)], CLAIMED]]
    writes: list[list[Any]] = [
        ["hset", key, "esc_next", str(tier + 1), "escalated_at", ev.at,
         "escalated_tier", str(tier + 1)],
        ["zadd", "esc", next_due, member] if next_due is not None else ["zrem", "esc", member],
    ]
    return await _claim(store, fx_id, n, ev, guard, writes, member)


async def claim_reminder(store: Store, fx_id: str, n: int, k: int, ev: Event,
                         next_due: int) -> dict[str, str] | None:
    """Send open-too-long reminder k of INC-n once and schedule the next one."""
    key, member = f"inc:{n}", f"{n}:open"
    open_statuses = ["reported", "acknowledged", "dispatched", "on_scene", "contained",
                     "handed_to_police"]
    guard = [["require_in", key, "status", open_statuses, STALE],
             ["require_in", key, "remind_n", [str(k)], CLAIMED]]
    writes: list[list[Any]] = [["hset", key, "remind_n", str(k + 1)],
                               ["zadd", "esc", next_due, member]]
    return await _claim(store, fx_id, n, ev, guard, writes, member)


async def amend_incident(store: Store, fx_id: str, n: int, old: dict[str, str],
                         new: dict[str, str], ev: Event, dedupe: str,
                         ack_due: int | None) -> Applied:
    """Correct type/severity/location: guarded on the values read, the originals kept in
    orig_* fields, counters moved, open order and escalation re-planned; one round trip."""
    key = f"inc:{n}"
    if ack_due is not None:
        await store.index_escalation(fx_id)
    ops: list[list[Any]] = [["require_exists", key, f"No incident INC-{n} in this fixture."]]
    for fld, value in old.items():
        ops.append(["require_in", key, fld, [value],
                    f"INC-{n} changed meanwhile; look again with /incident {n}."])
    ops.append(["hget", "meta", "phase", "phase", "pre"])
    for fld, value in old.items():
        ops.append(["hsetnx", key, f"orig_{fld}", value])
    ops += [
        ["hset", key, *[x for kv in new.items() for x in kv], "updated_at", ev.at,
         "amended_at", ev.at],
        ["hincrby", key, "amendments", 1],
        ["xadd", "log", *ev.fields()],
        *counter_ops(ev),
    ]
    if "severity" in new:
        sev = int(new["severity"])
        is_open = ev.data.get("status") != "closed"
        if is_open:
            ops.append(["zadd_score_from", "open", key, "reported_ts", (5 - sev) * SEV_BAND,
                        str(n)])
        if ev.data.get("status") == "reported":
            ops.append(["hset", key, "esc_next", "0"])
            ops.append(["zadd", "esc", ack_due, f"{n}:ack"] if ack_due is not None
                       else ["zrem", "esc", f"{n}:ack"])
    ops.append(["return_hash", key])
    return await store.apply(fx_prefix(fx_id), ops, dedupe)


async def police_records(store: Store, fx_id: str, kind: str) -> list[dict[str, str]]:
    """Every arrest ('arr') or ban ('ban') record of a fixture, in number order."""
    p = fx_prefix(fx_id)
    count = int(await store._call(store.r.get(f"{p}{kind}seq")) or 0)
    if not count:
        return []
    pipe = store.r.pipeline(transaction=False)
    for i in range(1, count + 1):
        pipe.hgetall(f"{p}{kind}:{i}")
    return [h for h in await store._call(pipe.execute()) if h]


async def expire_refs(store: Store, fx_id: str, records: list[str], ev: Event,
                      at: str) -> Applied:
    """Blank the custody/occurrence refs of these records ('arr:3') and log it; one trip."""
    ops: list[list[Any]] = [["require_exists", "meta", f"No fixture {fx_id}."],
                            ["hget", "meta", "phase", "phase", "pre"]]
    for rec in records:
        ops.append(["hset", rec, "ref", "", "ref_expired_at", at])
    ops.append(["xadd", "log", *ev.fields()])
    return await store.apply(fx_prefix(fx_id), ops)


async def take_merge(store: Store, fx_id: str, token: str, who: str) -> dict[str, Any] | None:
    """Claim a merged report once so its reporter can split it out (None if not theirs,
    already split, or expired)."""
    key = f"{fx_prefix(fx_id)}mrg:{token}"
    raw = await store._call(store.r.get(key))
    if not raw or json.loads(raw).get("who") != who:
        return None
    if not await store._call(store.r.delete(key)):
        return None  # another press got there first
    return json.loads(raw)


async def unmerge(store: Store, fx_id: str, n: int, ev: Event) -> Applied:
    """Record on INC-n that one merged report became its own incident; one round trip."""
    key = f"inc:{n}"
    ops: list[list[Any]] = [
        ["require_exists", key, f"No incident INC-{n} in this fixture."],
        ["hget", "meta", "phase", "phase", "pre"],
        ["hincrby", key, "merged", -1],
        ["xadd", "log", *ev.fields()],
    ]
    return await store.apply(fx_prefix(fx_id), ops)
