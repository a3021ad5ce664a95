"""Stewarding records: broadcasts and procedures, who they went to, who has acknowledged,
and the life-safety lane that holds every other message while a procedure goes out.

Each write is one round trip and idempotent (the command's dedupe key): a broadcast is its
record, its recipients, its event and every steward's outbox entry in one script; an
acknowledgement is its mark and its event. Refusals are reason codes, never English."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.domain.briefing.briefing_cadence import Slot
from bot.domain.deployment import DutyRecord, RotaRow
from bot.domain.ledger import Event
from bot.domain.outcomes import Reason
from bot.domain.procedures import Broadcast
from bot.domain.signoff import SignOff
from bot.domain.unreached import load
from bot.store.base import LIVE_TTL_S, Applied, Refused, fx_prefix, guard, ops_prefix, tag_prefix
from bot.store.gateway import Gateway
from bot.store.ops import (
    Del,
    Hget,
    Hset,
    Hsetnx,
    Op,
    RequireIn,
    RequireMissing,
    Rpush,
    Sadd,
    Set,
    Unless,
    Xadd,
    Zadd,
    Zrem,
    log_event,
)
from bot.store.outbox import reach_key
from bot.store.plans import CLAIM_TTL, PLAN_TTL

HSET_FIELDS = 1000  # fields per HSET in a script (see Stewarding.send)
_RELEASE = """
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
# Renew a procedure's hold (ARGV[3] == '1': counting ARGV[2] sends from now), or take the
# free lane for it: 1 renewed, 2 taken, 0 another procedure holds it.
_KEEP = """
local v = redis.call('GET', KEYS[1])
local mine = ARGV[1] .. ' ' .. ARGV[2]
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  if ARGV[3] == '1' then
    redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
  else
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
  end
  return 1
end
if not v then
  redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
  return 2
end
return 0
"""


def chase_member(bid: str) -> str:
    """A broadcast's chase deadline in the fixture's escalation deadlines: who has not
    acknowledged the one-to-many post by then gets a direct message."""
    return f"{bid}:chase"


def police_member(mid: str) -> str:
    """A missing-person search's police deadline in the fixture's escalation deadlines."""
    return f"{mid}:police"


@dataclass(frozen=True)
class Acked:
    """An acknowledgement recorded (duplicate: it had been already)."""

    duplicate: bool


class Stewarding:
    """Broadcast records and the life-safety lane, over the gateway."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self._release = gateway.script(_RELEASE)
        self._keep = gateway.script(_KEEP)
        # The lane is the key space's, not one fixture's: every replica's delivery reads it.
        self.lane_key = tag_prefix("lane", gateway.space) + "procedure"

    # ------------------------------------------------------------ broadcasts
    async def send(self, fx: str, bc: Broadcast, recipients: dict[str, str],
                   outbox: list[Op], ev: Event, dedupe: str, *,
                   record: dict[str, str] | None = None, police_at: int | None = None,
                   closes: str = "", claim: tuple[str, str] | None = None,
                   also: list[Op] | None = None, chase_at: int | None = None) -> Applied:
        """Record a broadcast, its recipients (who -> "1") and its event with the outbox ops
        of its messages (bot.store.outbox.ops), in one script. `record`: more fields of its
        record; `police_at`: a missing-person search's police deadline (epoch seconds, swept
        with the escalations); `closes`: the missing-person search this one ends (refused,
        Reason.NOT_MISSING, when there is none); `claim`: (slot id, claim record) of a scheduled
        slot claimed in the same script (refused, CLAIMED, when another replica has it);
        `also`: more ops (a procedure's decision log entry: DecisionLog.ops); `chase_at`:
        when those who have not acknowledged get a direct message (epoch seconds, swept
        with the escalations). Applied.duplicate when the command was already applied."""
        key = f"bc:{bc.id}"
        ops: list[Op] = [RequireMissing(key, guard(Reason.ALREADY_SENT))]
        if claim:
            ops += [RequireMissing(f"slot:{claim[0]}", guard(Reason.CLAIMED)),
                    Set(f"slot:{claim[0]}", claim[1], CLAIM_TTL)]
        if closes:
            ops.append(RequireIn(f"bc:{closes}", "kind", ["missing"], guard(Reason.NOT_MISSING)))
        ops.append(Hset(key, {"kind": bc.kind, "target": bc.target, "text": bc.text,
                              "at": bc.at, "by": bc.by, "sent": str(bc.sent), **(record or {})}))
        # in parts: Lua's unpack takes at most ~8,000 values, and a ground has 15,000 stewards
        rows = list(recipients.items())
        ops += [Hset(key + ":to", dict(rows[i:i + HSET_FIELDS]))
                for i in range(0, len(rows), HSET_FIELDS)]
        if police_at is not None:
            ops.append(Zadd("esc", police_at, police_member(bc.id)))
        if chase_at is not None:
            ops.append(Zadd("esc", chase_at, chase_member(bc.id)))
        if closes:
            ops += [Hset(f"bc:{closes}", {"search": "found", "found_at": bc.at}),
                    Zrem("esc", police_member(closes))]
        ops += [Set("bc:last", bc.id), Rpush("bc:ids", bc.id), *log_event(ev),
                *outbox, *(also or [])]
        return await self.gateway.apply(fx_prefix(fx, self.space), ops, dedupe)

    async def police_informed(self, fx: str, mid: str, at: str, ev: Event,
                              outbox: list[Op]) -> bool:
        """A missing-person search still open at its deadline: marked, its deadline gone,
        its event and the police's messages, in one script. False (the deadline dropped)
        when it was found first or another replica told the police."""
        key, member = f"bc:{mid}", police_member(mid)
        return await self._fire(fx, member, [
            RequireIn(key, "search", ["open"], guard(Reason.SEARCH_OVER)),
            Hset(key, {"search": "police", "police_at": at}), *log_event(ev), *outbox])

    async def chased(self, fx: str, bid: str, at: str, ev: Event, outbox: list[Op]) -> bool:
        """A broadcast's chase is due: marked, its deadline gone, its event and the chasers
        in one script. False (the deadline dropped) when another replica chased it."""
        key, member = f"bc:{bid}", chase_member(bid)
        return await self._fire(fx, member, [
            RequireMissing(key + ":chased", guard(Reason.CLAIMED)),
            Set(key + ":chased", at, LIVE_TTL_S), *log_event(ev), *outbox])

    async def _fire(self, fx: str, member: str, ops: list[Op]) -> bool:
        """A deadline's firing and its deadline's removal in one script; False (the deadline
        dropped) when its guards refuse it."""
        try:
            await self.gateway.apply(fx_prefix(fx, self.space), [*ops, Zrem("esc", member)])
        except Refused:
            await self.gateway.call(lambda r: r.zrem(fx_prefix(fx, self.space) + "esc", member))
            return False
        return True

    async def search(self, fx: str, mid: str) -> dict[str, str]:
        """A missing-person search's state: search (open, found, police), who, found_at,
        police_at (empty when there is no such search)."""
        got: dict[str, str] = await self.gateway.call(
            lambda r: r.hgetall(fx_prefix(fx, self.space) + f"bc:{mid}"))
        return {k: v for k, v in got.items() if k in ("search", "who", "found_at", "police_at")}

    async def ack(self, fx: str, bid: str, who: str, at: str, ev: Event) -> Acked:
        """Record that someone it was sent to has it (first press wins; one round trip).
        Raises Refused(Reason.NOT_TARGETED) for anyone else."""
        key = f"bc:{bid}"
        ops: list[Op] = [RequireIn(key + ":to", who, ["1"], guard(Reason.NOT_TARGETED)),
                         Hsetnx(key + ":ack", who, at), *log_event(ev)]
        applied = await self.gateway.apply(fx_prefix(fx, self.space), ops, f"bcack:{bid}:{who}")
        return Acked(applied.duplicate)

    async def broadcast(self, fx: str, bid: str) -> Broadcast | None:
        """A broadcast with who has and has not acknowledged it."""
        got = await self.broadcasts(fx, [bid])
        return got[0] if got else None

    async def broadcasts(self, fx: str, ids: list[str] | None = None) -> list[Broadcast]:
        """Broadcasts (every one of the fixture, in the order sent, when `ids` is None)
        with who has and has not acknowledged each, in one round trip for them all."""
        p = fx_prefix(fx, self.space)
        if ids is None:
            ids = await self.gateway.call(lambda r: r.lrange(p + "bc:ids", 0, -1))
        if not ids:
            return []
        pipe = self.gateway.pipeline(transaction=True)
        for bid in ids:
            pipe.hgetall(p + f"bc:{bid}")
            pipe.hkeys(p + f"bc:{bid}:to")
            pipe.hkeys(p + f"bc:{bid}:ack")
        got = await self.gateway.call(pipe.execute())
        out = []
        for i, bid in enumerate(ids):
            rec, to, acked = got[3 * i:3 * i + 3]
            if not rec:
                continue
            have = set(acked)
            out.append(Broadcast(bid, rec["kind"], rec["target"], rec["text"], rec["at"],
                                 rec["by"], int(rec.get("sent", "0")), tuple(sorted(have)),
                                 tuple(sorted(w for w in to if w not in have)),
                                 int(rec.get("planned", "0")), load(rec.get("unreached")),
                                 tuple((w, z) for w, z in json.loads(rec.get("zones", "[]"))),
                                 tuple(json.loads(rec.get("names", "{}")).items()),
                                 frozenset(json.loads(rec.get("posted", "[]")))))
        return out

    async def reach_times(self, fx: str, ids: list[str]) -> dict[str, dict[str, int]]:
        """Broadcast id -> who (or 'post:<platform>') -> when their copy was delivered
        (epoch ms, as delivery recorded it; bot.store.outbox.Outbox.delivered)."""
        pipe = self.gateway.pipeline(transaction=False)
        for bid in ids:
            pipe.hgetall(reach_key(fx, bid, self.space))
        got = await self.gateway.call(pipe.execute()) if ids else []
        return {bid: {k: int(v) for k, v in rows.items()}
                for bid, rows in zip(ids, got, strict=True)}

    async def latest(self, fx: str) -> Broadcast | None:
        """The fixture's most recent broadcast or procedure."""
        bid = await self.gateway.call(lambda r: r.get(fx_prefix(fx, self.space) + "bc:last"))
        return await self.broadcast(fx, bid) if bid else None

    async def latest_of(self, fx: str, kinds: frozenset[str] | None = None, *,
                        not_kinds: frozenset[str] = frozenset(),
                        look: int = 20) -> Broadcast | None:
        """The newest of the fixture's last `look` broadcasts whose kind is (not) one of
        these."""
        key = fx_prefix(fx, self.space) + "bc:ids"
        ids = await self.gateway.call(lambda r: r.lrange(key, -look, -1))
        for bid in reversed(ids):
            bc = await self.broadcast(fx, bid)
            if bc is not None and (kinds is None or bc.kind in kinds) \
                    and bc.kind not in not_kinds:
                return bc
        return None

    async def recipients(self, fx: str, bid: str) -> dict[str, str]:
        """who -> "1" for everyone a broadcast was sent to."""
        got: dict[str, str] = await self.gateway.call(
            lambda r: r.hgetall(fx_prefix(fx, self.space) + f"bc:{bid}:to"))
        return got

    async def rollcall_plan(self, fx: str) -> Slot | None:
        """The fixture's planned automatic roll call, or None."""
        raw = await self.gateway.call(lambda r: r.get(fx_prefix(fx, self.space) + "plan:rollcall"))
        return Slot.from_json(json.loads(raw)) if raw else None

    async def save_rollcall_plan(self, fx: str, slot: Slot | None) -> None:
        """Plan (or, None, unplan) the fixture's automatic roll call."""
        key = fx_prefix(fx, self.space) + "plan:rollcall"
        if slot is None:
            await self.gateway.call(lambda r: r.delete(key))
        else:
            await self.gateway.call(lambda r: r.set(key, json.dumps(slot.to_json()), ex=PLAN_TTL))

    # ------------------------------------------------------------ the deployment plan
    async def deploy(self, fx: str, rows: list[RotaRow], ev: Event, dedupe: str) -> bool:
        """Fill posts from the rota (post -> steward id and name) with its event, in one
        script; a later row for a post replaces the earlier steward. False: already done."""
        ops: list[Op] = [Hset("dep", {r.post: f"{r.steward}|{r.name}" for r in rows}),
                         *log_event(ev)]
        applied = await self.gateway.apply(fx_prefix(fx, self.space), ops, dedupe)
        return not applied.duplicate

    async def set_attendance(self, fx: str, attendance: int, ev: Event, dedupe: str) -> None:
        """The fixture's expected attendance (mobile posts are compared with it)."""
        await self.gateway.apply(fx_prefix(fx, self.space), [Set("attendance", str(attendance)),
                                               *log_event(ev)], dedupe)

    async def deployment(self, fx: str) -> tuple[dict[str, tuple[str, str]], int]:
        """(post -> (steward id, name), expected attendance) in one round trip."""
        p = fx_prefix(fx, self.space)
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hgetall(p + "dep")
        pipe.get(p + "attendance")
        dep, att = await self.gateway.call(pipe.execute())
        filled = {post: tuple(v.split("|", 1)) for post, v in dep.items()}
        return filled, int(att or 0)  # type: ignore[return-value]

    async def check_in(self, fx: str, post: str, who: str, at: str, ev: Event,
                       dedupe: str) -> bool:
        """A steward is on a post (the latest check-in holds it) and their duty record (first
        and latest check-in, post) with its event; one round trip. False when the command
        was already applied."""
        ops: list[Op] = [Hset("onpost", {post: f"{who}|{at}"}), Hsetnx(f"duty:{who}", "in", at),
                         Hset(f"duty:{who}", {"post": post, "last": at}), Sadd("duty:ids", who),
                         *log_event(ev)]
        applied = await self.gateway.apply(fx_prefix(fx, self.space), ops, dedupe)
        return not applied.duplicate

    async def stand_down(self, fx: str, who: list[str], at: str, ev: Event, outbox: list[Op],
                         dedupe: str) -> bool:
        """Stewards stand down (their duty records' check-out time), with the event and
        their messages, in one script. False when the command was already applied."""
        ops: list[Op] = [Hset(f"duty:{w}", {"out": at}) for w in who]
        applied = await self.gateway.apply(fx_prefix(fx, self.space),
                                           [*ops, *log_event(ev), *outbox], dedupe)
        return not applied.duplicate

    async def keep_position(self, fx: str, who: str, live: str, lat: float, lon: float,
                            at: str, ev: Event, dedupe: str) -> None:
        """A checked-in steward's shared (live) location on their duty record as evidence of
        position, with its event; its later positions move it (move_position)."""
        ops: list[Op] = [Hset(f"duty:{who}", {"lat": str(lat), "lon": str(lon), "pos_at": at,
                                              "live": live})]
        if live:
            ops.append(Set(f"dutylive:{live}", who, LIVE_TTL_S))
        await self.gateway.apply(fx_prefix(fx, self.space), [*ops, *log_event(ev)], dedupe)

    async def position_of(self, fx: str, live: str) -> str:
        """Whose duty record a live location moves ('' when it is none's)."""
        key = fx_prefix(fx, self.space) + f"dutylive:{live}"
        return await self.gateway.call(lambda r: r.get(key)) or ""

    async def duty(self, fx: str) -> dict[str, DutyRecord]:
        """Every steward's duty record of the fixture (who checked in, where, when; when
        they stood down; their last shared position), in two round trips."""
        p = fx_prefix(fx, self.space)
        who = sorted(await self.gateway.call(lambda r: r.smembers(p + "duty:ids")))
        if not who:
            return {}
        pipe = self.gateway.pipeline(transaction=False)
        for w in who:
            pipe.hgetall(p + f"duty:{w}")
        rows = await self.gateway.call(pipe.execute())
        return {w: DutyRecord.of(w, h) for w, h in zip(who, rows, strict=True)}

    async def on_post(self, fx: str) -> dict[str, tuple[str, str]]:
        """post -> (who, at) of every check-in."""
        got = await self.gateway.call(lambda r: r.hgetall(fx_prefix(fx, self.space) + "onpost"))
        return {post: tuple(v.split("|", 1)) for post, v in got.items()}  # type: ignore[misc]

    # ------------------------------------------------------------ briefing sign-off
    @staticmethod
    def shown_ops(version: str, at: str) -> list[Op]:
        """The ops that make `version` the briefing stewards sign off (first shown at `at`):
        for a write that sends the briefing (a scheduled slot's claim) to carry."""
        return [Hset("brief", {"current": version}), Hsetnx("brief:shown", version, at)]

    async def briefing_shown(self, fx: str, version: str, at: str) -> None:
        """The briefing version stewards are now shown (acknowledgements count for it)."""
        await self.gateway.apply(fx_prefix(fx, self.space), self.shown_ops(version, at))

    async def briefed(self, fx: str, version: str, who: str, at: str, ev: Event) -> bool:
        """A steward has read this version, with its event; one round trip, refused
        (Reason.BRIEFING_CHANGED) unless it is the current version. A second tap is neither
        counted nor logged again (and a tap on an old version is refused even after a first one).
        False: it had been recorded already."""
        ops: list[Op] = [RequireIn("brief", "current", [version], guard(Reason.BRIEFING_CHANGED)),
                         Hget(f"brief:{version}", who, "had"),
                         Unless("had", [Hset(f"brief:{version}", {who: at}), *log_event(ev)])]
        applied = await self.gateway.apply(fx_prefix(fx, self.space), ops)
        return not applied.vars.get("had")

    async def signoff(self, fx: str) -> SignOff | None:
        """The current briefing version, when it was first shown, and who signed it off
        (None when no briefing was shown to stewards yet)."""
        p = fx_prefix(fx, self.space)
        version = await self.gateway.call(lambda r: r.hget(p + "brief", "current"))
        if not version:
            return None
        pipe = self.gateway.pipeline(transaction=True)
        pipe.hget(p + "brief:shown", version)
        pipe.hgetall(p + f"brief:{version}")
        shown, acks = await self.gateway.call(pipe.execute())
        return SignOff(version, shown or "", acks)

    async def briefing_acks(self, fx: str) -> tuple[str, dict[str, str]]:
        """(current version, who -> when acknowledged) ('' when no briefing was shown)."""
        got = await self.signoff(fx)
        return (got.version, got.acks) if got else ("", {})

    # ------------------------------------------------------------ one-to-many chats
    async def chat_member(self, platform: str, chat: str, user: str, joined: bool) -> None:
        """Someone joined or left a chat (the platform's member update); `user` '' with
        joined False: the bot itself left, so nobody there can be reached by a post."""
        key = ops_prefix(self.space) + f"members:{platform}:{chat}"
        if not user:
            await self.gateway.call(lambda r: r.delete(key))
        elif joined:
            await self.gateway.call(lambda r: r.sadd(key, user))
        else:
            await self.gateway.call(lambda r: r.srem(key, user))

    async def chat_members(self, platform: str, chats: list[str]) -> set[str]:
        """Everyone (platform:user) in any of a platform's chats, as its member updates
        told (one round trip)."""
        if not chats:
            return set()
        pipe = self.gateway.pipeline(transaction=False)
        for chat in chats:
            pipe.smembers(ops_prefix(self.space) + f"members:{platform}:{chat}")
        got = await self.gateway.call(pipe.execute())
        return {f"{platform}:{u}" for users in got for u in users}

    # ------------------------------------------------------------ tabard <-> account
    async def tabards(self) -> dict[str, str]:
        """tabard number -> the platform account linked to it (platform:user)."""
        key = ops_prefix(self.space) + "tabards"
        got: dict[str, str] = await self.gateway.call(lambda r: r.hgetall(key))
        return {t: who for t, who in got.items() if who}

    async def tabard_of(self, who: str) -> str:
        """The tabard number linked to an account ('' for none)."""
        key = ops_prefix(self.space) + f"tabard_of:{who}"
        return await self.gateway.call(lambda r: r.get(key)) or ""

    async def link_tabard(self, tabard: str, who: str, by: str, at: str, *,
                          moved: tuple[str, str] | None = None) -> None:
        """Link an account to a tabard number, with its audit entry, in one script: refused
        (Reason.TABARD_TAKEN / Reason.HAS_TABARD) when either is linked already, unless `moved`
        names the links control replaces (the tabard's old account, the account's old tabard)."""
        ops: list[Op] = []
        if moved is None:
            ops += [RequireMissing(f"tabard:{tabard}", guard(Reason.TABARD_TAKEN)),
                    RequireMissing(f"tabard_of:{who}", guard(Reason.HAS_TABARD))]
        else:
            old_who, old_tabard = moved
            if old_who and old_who != who:
                ops.append(Del(f"tabard_of:{old_who}"))
            if old_tabard and old_tabard != tabard:
                ops += [Del(f"tabard:{old_tabard}"), Hset("tabards", {old_tabard: ""})]
        ops += [Set(f"tabard:{tabard}", who), Set(f"tabard_of:{who}", tabard),
                Hset("tabards", {tabard: who}),
                Xadd("audit", {"at": at, "who": by, "action": "tabard.link",
                               "detail": f"tabard {tabard} -> {who}"
                                         + (f" (was {moved[0] or '-'}; {moved[1] or '-'})"
                                            if moved else "")})]
        await self.gateway.apply(ops_prefix(self.space), ops)

    # ------------------------------------------------------------ the lane
    async def hold_lane(self, bid: str, messages: int, ttl_s: float) -> None:
        """Hold the life-safety lane for a procedure of `messages` sends for `ttl_s` (its
        delivering replica renews it: bot.delivery.lane)."""
        await self.gateway.call(lambda r: r.set(self.lane_key, f"{bid} {messages}",
                                          px=max(1, int(ttl_s * 1000))))

    async def keep_lane(self, bid: str, messages: int, ttl_s: float, *,
                        recount: bool = False) -> bool:
        """Renew the procedure's hold for ttl_s (recount: as `messages` sends from now), or
        take the free lane for it; False when another procedure holds it."""
        got = await self.gateway.run_script(
            self._keep, [self.lane_key], [bid, messages, "1" if recount else "0",
                                 max(1, int(ttl_s * 1000))])
        return bool(got)

    async def lane(self) -> tuple[str, int] | None:
        """(procedure id, messages) while the lane is held, else None."""
        raw = await self.gateway.call(lambda r: r.get(self.lane_key))
        if not raw:
            return None
        bid, _, n = raw.partition(" ")
        return bid, int(n or 0)

    async def release_lane(self, bid: str) -> bool:
        """Give the lane back, if this procedure still holds it."""
        return bool(await self.gateway.run_script(self._release, [self.lane_key], [bid]))


__all__ = ["Acked", "Refused", "Stewarding", "police_member"]
