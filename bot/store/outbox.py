"""The durable outbox: what the bot must show people, kept in Redis until delivered.

One stream per fixture (`md:{<fixture>}:obx`, the fixture's hash slot, so a write and the
messages it causes go in one script). Delivery reads it with a consumer group; the replica
holding the fixture's delivery lease is the only reader, so a chat's messages stay in order;
a new lease holder first claims (XAUTOCLAIM) what the previous one held. A delivered mark per
entry per chat makes a redelivered entry skip the chats it already reached.
"""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import asdict, fields
from typing import Any

from redis.exceptions import ResponseError

from bot.domain.incident.incident_card import CARD, IncidentCard, LiveRef
from bot.domain.ledger import Tpl, Var
from bot.domain.messages import Attachment, Button, Outbound, Reply, Respond
from bot.store.base import KeySpace, fx_prefix, ops_prefix, tag_prefix
from bot.store.connect import on_key_node
from bot.store.copies import copy_key
from bot.store.gateway import Gateway, Unconfirmed
from bot.store.message_refs import REF_TTL, keep_copy, msgof_key, ref_key, seen_op
from bot.store.ops import Op
from bot.store.ops import Outbox as OutboxOp

log = logging.getLogger(__name__)

GROUP = "delivery"
N = Var("n")  # the number the write takes (see _numbered)
STREAM = "obx"
# The deployment's own outbox, for what is about no one fixture (the Martyn's Law reminder of
# a ground's document): its keys are the ops slot's (fx_prefix(OPS_OUTBOX) is ops_prefix), so a
# claim there and its messages are one script.
OPS_OUTBOX = "ops"
DONE_TTL = 2 * 86400
# How versions before the typed Respond stored a Slack command's answer: a pseudo message id
# 'respond:<user>:<response_url>' in `edit` (read and still written for them, see _fields).
LEGACY_RESPOND = "respond:"
LEASE_MS = 5000
# How long after its holder last renewed a lapsed lease stays its holder's to take back: a
# crashed replica's fixtures move on after this, not after LEASE_MS.
LEASE_GRACE_MS = 7500
# KEYS[1] stream, KEYS[2] once-mark; ARGV[1] TTL, ARGV[2..] entries: add them only if the
# mark was not there (a redelivered command's messages are already in the outbox).
_ADD_ONCE = """
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then
  for i = 2, #ARGV do redis.call('XADD', KEYS[1], '*', 'm', ARGV[i]) end
  return 1
end
return 0
"""

# KEYS[1] the fixture's delivery lease, KEYS[2] its last holder, KEYS[3] the holder's grace;
# ARGV[1] the owner, ARGV[2] the lease's TTL in ms, ARGV[3] the last holder's TTL, ARGV[4]
# the grace in ms. 1: the owner holds it, and nobody else has since it last did (a lease
# that lapsed, e.g. while its master was paused, comes back to its holder with its term); 2:
# the owner took it over from another holder; 0: another holds it, or may still come back
# for it (its grace, LEASE_GRACE_MS after its last renewal, has not run out: after a
# failover the holder and the other replicas all ask at once, and the holder must win).
_LEASE = """
local h = redis.call('GET', KEYS[1])
if h == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4])
  return 1
end
if h then return 0 end
local last = redis.call('GET', KEYS[2])
if last and last ~= ARGV[1] and redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4])
if last and last ~= ARGV[1] then return 2 end
return 1
"""
KEPT, TAKEN_OVER = 1, 2  # what `lease` answers besides 0 (see _LEASE)

# KEYS[1] the fixture's delivery lease, KEYS[2] its last holder, KEYS[3] the holder's grace,
# KEYS[4..] in-flight marks; ARGV[1] the lease holder the sender believes it is, ARGV[2] the
# mark's value, ARGV[3] its TTL, ARGV[4] the lease's TTL in ms, ARGV[5] the grace in ms: the
# marks are written (and the send may begin) only
# while that holder still has the lease, or has it back: a lease that lapsed with nobody
# taking it since is renewed here, so a paused master costs no new term.
_FLYING = """
local h = redis.call('GET', KEYS[1])
if h ~= ARGV[1] then
  if h or redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
end
for i = 4, #KEYS do redis.call('SET', KEYS[i], ARGV[2], 'EX', ARGV[3]) end
return 1
"""


def _fields(out: Outbound) -> dict[str, object]:
    r = out.reply
    data: dict[str, object] = {
        "aud": out.audience, "ref": out.ref, "fx": out.fixture, "thread": out.thread,
        "quote": out.quote, "edit": out.edit,
        "r": {"text": r.text, "title": r.title, "ok": r.ok, "loc": r.request_location,
              "b": [[[b.label, b.command, b.style] for b in row] for row in r.buttons],
              "img": [base64.b64encode(i).decode() for i in r.images],
              "media": [asdict(a) for a in r.media], "field": r.field}}
    if r.card is not None:
        data["r"]["card"] = asdict(r.card)  # type: ignore[index]
    if out.urgent:
        data["u"] = out.urgent
    if out.chase:
        data["c"] = out.chase
    if out.pin:
        data["p"] = out.pin
    if out.about:
        data["a"] = out.about
    if out.reaches:
        data["rx"] = out.reaches
    if out.respond is not None:
        data["rs"] = [out.respond.user, out.respond.url]
        # A replica of an earlier version reads only this (LEGACY_RESPOND), and would post
        # an ephemeral answer in the channel for all to see without it: kept while a
        # rolling upgrade may run both.
        data["edit"] = f"{LEGACY_RESPOND}{out.respond.user}:{out.respond.url}"
    return data


def _tuple(value: list[Any] | None) -> Any:
    """A journalled tuple (JSON keeps it as a list), or None."""
    return tuple(value) if value is not None else None


def encode(out: Outbound) -> str:
    """An Outbound as the JSON an outbox entry holds."""
    data = _fields(out)
    if out.live is not None:
        data["live"] = {"view": out.live.view, "n": out.live.n}
    return json.dumps(data, separators=(",", ":"))


def decode(raw: str) -> Outbound:
    """The Outbound an outbox entry holds (a live reference still to be rendered has an
    empty reply and `live` set)."""
    d = json.loads(raw)
    r = d["r"]
    card = r.get("card")
    reply = Reply(r["text"], title=r["title"], ok=r["ok"], request_location=r["loc"],
                  buttons=[[Button(*b[:3]) for b in row] for row in r["b"]],
                  images=[base64.b64decode(i) for i in r["img"]],
                  media=[Attachment(**_known(Attachment, a)) for a in r.get("media", [])],
                  field=r.get("field", ""),
                  card=IncidentCard(**_known(IncidentCard, card)) if card else None)
    live = d.get("live")
    respond, edit = _respond(d)
    return Outbound(d["aud"], reply, ref=d["ref"], fixture=d["fx"], thread=d["thread"],
                    quote=d["quote"], edit=edit, respond=respond, urgent=d.get("u", ""),
                    chase=d.get("c", ""),
                    pin=d.get("p", ""), about=int(d.get("a", 0)), reaches=d.get("rx", ""),
                    live=LiveRef(live["view"], int(live["n"])) if live else None)


def _respond(d: dict[str, Any]) -> tuple[Respond | None, str]:
    """(where a command's answer goes, the message id it replaces) of an entry; an entry an
    earlier version queued names its response_url in `edit` (LEGACY_RESPOND)."""
    if "rs" in d:
        return Respond(*d["rs"]), ""
    if d["edit"].startswith(LEGACY_RESPOND):
        user, _, url = d["edit"].removeprefix(LEGACY_RESPOND).partition(":")
        return Respond(user, url), ""
    return None, d["edit"]


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The fields this version knows: an entry written by a newer replica (a field added)
    still reads during a rolling upgrade."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def readable(rows: list[tuple[str, dict[str, str]]], fx: str) -> list[tuple[str, Outbound]]:
    """The entries this version can read. One it cannot (corrupt, or from a future format)
    is logged and left pending in the stream, never dropped, and never holds up the rest."""
    out: list[tuple[str, Outbound]] = []
    for entry, f in rows:
        if not f:
            continue
        try:
            out.append((entry, decode(f["m"])))
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            log.error("outbox of %s: entry %s cannot be read by this version (%s: %s); it "
                      "stays pending for a replica that can", fx, entry,
                      exc.__class__.__name__, str(exc)[:120])
    return out


def _numbered(out: Outbound) -> Tpl:
    """A live reference to the incident the write is numbering: the entry's number (and a
    card's ref, INC-n) are the script's Var("n")."""
    assert out.live is not None
    head = json.dumps({k: v for k, v in _fields(out).items() if k != "ref"},
                      separators=(",", ":"))[:-1]
    view = json.dumps(out.live.view)
    ref: tuple[str | Var, ...] = (',"ref":"INC-', N, '"') if out.live.view == CARD \
        else (',"ref":""',)
    return Tpl((head, *ref, ',"live":{"view":' + view + ',"n":', N, "}}"))


def reach_key(fx: str, bid: str, space: KeySpace) -> str:
    """A broadcast's delivery times: who (or 'post:<platform>') -> epoch ms."""
    return f"{fx_prefix(fx, space)}bc:{bid}:rx"


def ops(outs: list[Outbound]) -> list[Op]:
    """Ops that put these messages in the outbox within the same write. A live reference
    not numbered yet (`LiveRef.n` 0) names the incident the write numbers."""
    return [OutboxOp(STREAM, _numbered(o) if o.live is not None and not o.live.n
                     else encode(o)) for o in outs]


def last_ids_key(space: KeySpace) -> str:
    """'platform:id space' -> the highest message id seen there: its own slot, and written
    apart from the delivered marks (a hint for in-doubt lookups; losing it stops no delivery)."""
    return tag_prefix("lastid", space) + "spaces"


async def last_ids(gateway: Gateway, platform: str) -> dict[str, int]:
    """Id space -> the highest message id recorded there (see `Outbox.delivered`)."""
    key = last_ids_key(gateway.space)
    rows = await gateway.call(lambda r: r.zrange(key, 0, -1, withscores=True))
    head = platform + ":"
    return {str(k)[len(head):]: int(v) for k, v in rows if str(k).startswith(head)}


class Outbox:
    """Reads, acknowledgements, delivered marks, leases and health of fixtures' outboxes."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.space = gateway.space  # whose keys (see Gateway.for_club)
        self._add_once = gateway.script(_ADD_ONCE)
        # Fenced: a lease poll or an in-flight mark that waited in a paused master must not
        # run when it resumes (another replica's late poll took the lease from its holder
        # there, and the holder's own sends were then refused).
        self._flying = gateway.fenced_script(_FLYING)
        self._lease = gateway.fenced_script(_LEASE)

    def _key(self, fx: str) -> str:
        return fx_prefix(fx, self.space) + STREAM

    def ops(self, outs: list[Outbound]) -> list[Op]:
        """Ops that write these messages with the store write that causes them (see `ops`
        above); they are marked stored, so delivery only shows them to its observers."""
        for out in outs:
            out.stored = True
        return ops(outs)

    async def fixture_ids(self) -> list[str]:
        """Every fixture (each has its own outbox), and the deployment's own (OPS_OUTBOX)."""
        directory = ops_prefix(self.space) + "fixtures"
        return [*sorted(await self.gateway.call(lambda r: r.smembers(directory))), OPS_OUTBOX]

    async def add(self, fx: str, outs: list[Outbound], once: str = "") -> bool:
        """Write messages to a fixture's outbox (when no write of the store carried them).
        With `once` (the command's dedupe key) only the first add for that key writes:
        False when an earlier one already did."""
        if once:
            mark = f"{fx_prefix(fx, self.space)}obx:once:{once}"
            return bool(await self.gateway.run_script(
                self._add_once, [self._key(fx), mark], [DONE_TTL, *(encode(o) for o in outs)]))
        pipe = self.gateway.pipeline(transaction=True)
        for o in outs:
            pipe.xadd(self._key(fx), {"m": encode(o)})
        await self.gateway.call(pipe.execute())
        return True

    async def ensure_group(self, fx: str) -> None:
        """Create the delivery consumer group (from the start of the stream) once."""
        try:
            await self.gateway.call(lambda r: r.xgroup_create(self._key(fx), GROUP, id="0",
                                                        mkstream=True))
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def lease(self, fx: str, owner: str) -> int:
        """Take or keep the fixture's delivery lease, in one round trip: KEPT while this
        owner holds it and nobody else has since it last did, TAKEN_OVER when it just took
        it from another holder, 0 while another holds it."""
        p = fx_prefix(fx, self.space)
        return int(await self.gateway.run_fenced(
            self._lease, [p + "obx:lease", p + "obx:lease:last", p + "obx:lease:grace"],
            [owner, LEASE_MS, DONE_TTL, LEASE_GRACE_MS]))

    async def release(self, fx: str, owner: str) -> None:
        """Give the lease up (clean shutdown), so another replica takes over at once."""
        key = fx_prefix(fx, self.space) + "obx:lease"
        if await self.gateway.call(lambda r: r.get(key)) == owner:
            await self.gateway.call(lambda r: r.delete(key, key + ":grace"))

    async def claim_all(self, fx: str, consumer: str) -> list[tuple[str, Outbound]]:
        """Take over every entry read but not acknowledged (its reader is gone)."""
        return await self.claim_idle(fx, consumer, 0)

    async def read(self, fx: str, consumer: str, block_ms: int,
                   count: int = 200) -> list[tuple[str, Outbound]]:
        """New entries for this consumer (waits up to block_ms)."""
        key = self._key(fx)
        res = await self.gateway.call(lambda r: on_key_node(
            r, key, "XREADGROUP", "GROUP", GROUP, consumer, "COUNT", count, "BLOCK", block_ms,
            "STREAMS", key, ">"))
        out = [e for _, rows in res or [] for e in readable(rows, fx)]
        await self._confirmed(fx, out)
        return out

    async def claim_idle(self, fx: str, consumer: str,
                         idle_ms: int) -> list[tuple[str, Outbound]]:
        """Take (again) every entry read but not acknowledged that no one has touched for
        `idle_ms`: the lease holder's own entries a lost send left behind, most likely."""
        out: list[tuple[str, Outbound]] = []
        start = "0-0"
        while True:
            res = await self.gateway.call(lambda r, start=start: r.xautoclaim(
                self._key(fx), GROUP, consumer, idle_ms, start, count=500))
            start, rows = res[0], res[1]
            out += readable(rows, fx)
            if start in ("0-0", b"0-0"):
                await self._confirmed(fx, out)
                return out

    async def _confirmed(self, fx: str, entries: list[tuple[str, Outbound]]) -> None:
        """Hand entries out only once the writes that made them are on the replicas: a
        "Logged" that a failover could still lose must not be shown. Unconfirmed leaves them
        pending for this reader, which claims them again (and re-checks) after a pause."""
        if entries and not await self.gateway.replicated(self._key(fx)):
            raise Unconfirmed(f"{len(entries)} outbox entries of {fx} not yet on the replicas")

    def _done(self, fx: str, entry: str, chat: str) -> str:
        return f"{fx_prefix(fx, self.space)}obx:done:{entry}:{chat}"

    def _fly(self, fx: str, entry: str, chat: str) -> str:
        return f"{fx_prefix(fx, self.space)}obx:fly:{entry}:{chat}"

    async def chat_states(self, fx: str, entry: str,
                          chats: list[str]) -> dict[str, str]:
        """'platform:chat' -> 'done' (delivered), 'fly' (a send began and its outcome is
        unknown: the process died meanwhile) or '' (never tried), one round trip."""
        if not chats:
            return {}
        pipe = self.gateway.pipeline(transaction=False)
        for c in chats:
            pipe.exists(self._done(fx, entry, c))
            pipe.exists(self._fly(fx, entry, c))
        res = await self.gateway.call(pipe.execute())
        return {c: "done" if res[2 * i] else "fly" if res[2 * i + 1] else ""
                for i, c in enumerate(chats)}

    async def flying(self, entries: list[tuple[str, str]], chat: str, floor: int = 0,
                     owner: str = "") -> set[str]:
        """Note that a send of these (fixture, entry)s to 'platform:chat' is about to begin
        (one round trip), so a crash before its answer is known leaves a trace. `floor`: the
        highest message id known in that chat then (0: unknown); the send's id is above it.
        With `owner`: only while it still holds each fixture's delivery lease, checked in the
        same script as the marks (one round trip per fixture). The fixtures whose marks were
        written; one left out: the lease moved (the new holder sends its entries)."""
        fixtures = {fx for fx, _ in entries}
        if not owner:
            pipe = self.gateway.pipeline(transaction=False)
            for fx, entry in entries:
                pipe.set(self._fly(fx, entry, chat), str(max(floor, 0)), ex=DONE_TTL)
            await self.gateway.call(pipe.execute())
            return fixtures
        by_fx: dict[str, list[str]] = {}
        for fx, entry in entries:
            by_fx.setdefault(fx, []).append(entry)
        held: set[str] = set()
        for fx, ids in by_fx.items():
            p = fx_prefix(fx, self.space)
            keys = [p + "obx:lease", p + "obx:lease:last", p + "obx:lease:grace",
                    *(self._fly(fx, e, chat) for e in ids)]
            if await self.gateway.run_fenced(self._flying, keys, [
                    owner, str(max(floor, 0)), DONE_TTL, LEASE_MS, LEASE_GRACE_MS]):
                held.add(fx)
        return held

    async def floor(self, fx: str, entry: str, chat: str) -> int:
        """The message id an in-flight mark recorded as the chat's highest (0: unknown)."""
        raw = await self.gateway.call(lambda r: r.get(self._fly(fx, entry, chat)))
        return int(raw) if raw and str(raw).isdigit() else 0

    async def last_ids(self, platform: str) -> dict[str, int]:
        """Id space -> the highest message id recorded there (see `delivered`)."""
        return await last_ids(self.gateway, platform)

    async def delivered(self, entries: list[tuple[str, str, bool]], chat: str,
                        ref: tuple[str, str, str, str, str] | None = None,
                        last_id: tuple[str, int] | None = None,
                        at_ms: int | None = None,
                        about: tuple[str, str, str, str, str] | None = None,
                        reached: tuple[str, str, str] | None = None) -> None:
        """The platform accepted the send: in ONE round trip, record where a live message
        now is (`ref`: fixture, platform, chat, ref, message id), then each (fixture,
        entry, last)'s delivered mark for 'platform:chat'; a `last` entry is done
        everywhere, so it is acknowledged and dropped. `last_id` ('platform:id space',
        message id) raises that space's highest known id; `at_ms` is when the live message
        arrived (kept per incident for the screens); `about` (fixture, platform, chat, the
        incident's id, message id) ties a message that is not live to its incident; and
        when `reached` (fixture, broadcast id, who or 'post:<platform>') got a steward's
        copy: the first time is kept."""
        pipe, space = self.gateway.pipeline(transaction=False), self.space
        hints = 0  # the first commands are hints in other slots: a refusal there stops nothing
        if last_id is not None:
            pipe.zadd(last_ids_key(space), {last_id[0]: last_id[1]}, gt=True)
            hints += 1
        if ref is not None:  # the reverse index lives with the chat
            fixture, platform, chat_id, name, mid = ref
            pipe.set(msgof_key(platform, chat_id, mid, space), f"{fixture}|{name}", ex=REF_TTL)
            hints += 1
            pipe.set(ref_key(fixture, platform, chat_id, name, space), mid, ex=REF_TTL)
            seen_op(pipe, fixture, platform, chat_id, name, at_ms, space)
        if about is not None:  # only the reverse index: a reply to it finds the incident
            fixture, platform, chat_id, name, mid = about
            pipe.set(msgof_key(platform, chat_id, mid, space), f"{fixture}|{name}", ex=REF_TTL)
            hints += 1
        for fx, entry, last in entries:
            pipe.set(self._done(fx, entry, chat), "1", ex=DONE_TTL)
            pipe.delete(self._fly(fx, entry, chat))
            if last:
                pipe.xack(self._key(fx), GROUP, entry)
                pipe.xdel(self._key(fx), entry)
        if reached is not None and at_ms is not None:
            fx, bid, who = reached
            pipe.hsetnx(reach_key(fx, bid, self.space), who, at_ms)
        await self.gateway.run_with_hints(pipe, hints)
        if ref is not None:
            fixture, platform, chat_id, name, mid = ref
            keep_copy(self.gateway, ref_key(fixture, platform, chat_id, name, self.space), mid)

    def _away(self, fx: str) -> str:
        return copy_key(fx_prefix(fx, self.space) + "obx:away")

    async def journal_away(self, fx: str, record: dict[str, Any]) -> None:
        """Keep one in-flight or delivered record of a fixture's outbox in its away journal
        (a list in the fixture's second copy, another master's slot: a Cluster only), for
        while the fixture's own master is away; `fold_away` writes it home later."""
        key = self._away(fx)
        pipe = self.gateway.pipeline(transaction=True)
        pipe.rpush(key, json.dumps(record))
        pipe.expire(key, DONE_TTL)
        await self.gateway.call(pipe.execute())

    async def fold_away(self, fx: str) -> int:
        """Write a fixture's away journal into its own slot, in order (in-flight marks, then
        delivered marks and acks, as they were meant to be written), and drop what was
        written; the number of records. Replaying a record twice changes nothing."""
        key = self._away(fx)
        raw = await self.gateway.call(lambda r: r.lrange(key, 0, -1))
        for item in raw:
            rec = json.loads(item)
            if rec["k"] == "fly":
                await self.flying([(fx, e) for e in rec["e"]], rec["c"], rec["f"])
            else:
                await self.delivered(
                    [(f, e, last) for f, e, last in rec["rows"]], rec["c"],
                    _tuple(rec.get("ref")), _tuple(rec.get("last")), rec.get("at"),
                    _tuple(rec.get("about")), _tuple(rec.get("reached")))
        if raw:
            await self.gateway.call(lambda r: r.ltrim(key, len(raw), -1))
        return len(raw)

    async def mark(self, fx: str, entry: str, chat: str, last: bool) -> None:
        """Delivered to one chat; with `last`, the entry is done everywhere: ack and drop."""
        pipe = self.gateway.pipeline(transaction=True)
        pipe.set(f"{fx_prefix(fx, self.space)}obx:done:{entry}:{chat}", "1", ex=DONE_TTL)
        if last:
            pipe.xack(self._key(fx), GROUP, entry)
            pipe.xdel(self._key(fx), entry)
        await self.gateway.call(pipe.execute())

    async def backlog(self, fx: str) -> tuple[int, str | None]:
        """Entries not yet delivered and the id of the oldest (its time is in the id)."""
        waiting, oldest, _ = await self.flow(fx)
        return waiting, oldest

    async def flow(self, fx: str) -> tuple[int, str | None, int]:
        """Entries not yet delivered, the id of the oldest, and how many have gone (been
        delivered, or left out) since the outbox began: one round trip (XINFO STREAM)."""
        try:
            info = await self.gateway.call(lambda r: r.xinfo_stream(self._key(fx)))
        except ResponseError as exc:
            if "no such key" in str(exc).lower():
                return 0, None, 0
            raise
        waiting = int(info["length"])
        first = info.get("first-entry")
        return waiting, (first[0] if first else None), int(info["entries-added"]) - waiting
