"""The only module that talks to Redis: key schema, one-round-trip writes, and reads.

Every fixture's keys share the hash tag `{<fixture>}` so one command's writes run as one
Lua script in one slot. The small directory of fixtures, members and invites lives under
the `{ops}` tag.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, RedisError, ResponseError

from bot.domain.clock import parse_iso
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.incident.incident_model import Incident
from bot.domain.incident.incident_rules import merge_raise_test, replan_test
from bot.domain.ledger import PHASE, Event, Text, Var
from bot.domain.outcomes import Reason
from bot.store.base import (
    OPS,
    SEV_BAND,
    Applied,
    Refused,
    StoreUnavailable,
    WriteAttempts,
    as_hash,
    chat_prefix,
    fx_prefix,
    guard,
    note_not_run,
    note_outage,
    note_write,
    note_write_done,
    result_vars,
    track_writes,
)
from bot.store.choices import Choices
from bot.store.connect import (
    connect,
    is_cluster,
    rediscover,
    replica_count,
    reports_sends,
    sentinels_of,
    unavailable,
    wrong_master,
)
from bot.store.durability import Persistence
from bot.store.home_tabs import HomeWatchers
from bot.store.keys import script_keys
from bot.store.lifecycle import Lifecycle, counter_ops, missing_incident, phase_op
from bot.store.ops import (
    RESTRICTED_LOG,
    Del,
    FindSimilar,
    Hget,
    Hincrby,
    Hset,
    Hsetnx,
    HsetnxSince,
    Incr,
    Op,
    RequireExists,
    RequireIn,
    RequireMissing,
    ReturnHash,
    Set,
    Unless,
    When,
    WhenCmp,
    Zadd,
    ZaddScoreFrom,
    ZaddSince,
    Zrem,
    ZremByField,
    encode,
    json_value,
    log_event,
    log_restricted,
)
from bot.store.plans import Plans
from bot.store.timing_keys import timing_ops
from bot.store.unsure import UnsureResends

N = Var("n")  # the number the write just took
SIMILAR = Var("similar")  # the open incident a report joined (set by FindSimilar)
INC_N, ID_N = "inc:" + N, "INC-" + N
FORM_DONE_TTL = 3600  # how long a second tap on a finished guided form still finds its number

# KEYS[1] form key; ARGV: expected version ("" = start afresh), new state JSON, TTL seconds.
FORM_CAS = """
if ARGV[1] ~= '' then
  local cur = redis.call('GET', KEYS[1])
  if not cur or tostring(cjson.decode(cur)['_v']) ~= ARGV[1] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""
LIVE_TTL_S = 86400  # a live location is kept a day after its last position
# The longest a replicated write may take from being sent to running in Redis (apply.lua's
# fence): a write queued in a paused master runs when the master resumes, before it learns
# that the sentinels replaced it. A failover needs the master silent for
# down-after-milliseconds (2000 in deploy/compose.yaml), so keep this below that. The send
# time is stamped in the server's clock (an offset measured with TIME), so the two clocks
# need not agree. A fenced write ran nowhere: it is sent again once, to the master the
# sentinels name now.
WRITE_FENCE_MS = 1000
ESC_RELIST_S = 60.0  # see index_escalation and retire_escalations
ESC_GRACE_S = 3 * ESC_RELIST_S
ESC_RETIRE_EVERY_S = 30.0
STRANGERS_AUDIT = OPS + "audit:anonymous"  # refusals of people and clients not known
STRANGERS_AUDIT_MAXLEN = 2000
CHANGES = OPS + "changes"  # pub/sub channel: "what|fixture|origin" for other replicas




log = logging.getLogger(__name__)

def msgof_key(platform: str, chat: str, message_id: str) -> str:
    """The reverse index of a message the bot posted (-> 'fixture|ref'), with its chat."""
    return f"{chat_prefix(platform, chat)}msgof:{message_id}"

class Unconfirmed(StoreUnavailable):
    """The write reached the master but not enough replicas confirmed it in time: it may
    still be lost in a failover, so it is not 'Logged' yet; resending it (same dedupe key)
    is safe and confirms it."""




@dataclass
class Similar:
    """How to spot 'the same incident' inside the report script, and the merge to write."""

    since: int  # epoch seconds: only incidents reported since then
    near: list[str]  # zones that count as the same place (same or adjacent)
    event: Event  # the incident.merged event (its data's id None: the store fills it in)
    token: str  # names the merge, so the reporter can split it out again
    record: dict[str, Any]  # what a split needs to log the report on its own
    severity: int = 0  # the report's severity: a higher one raises the incident's
    ack_after_s: int | None = None  # first escalation tier of that severity (None: no tiers)


def _raise_ops(sim: Similar) -> list[Op]:
    """Inside the merge: when the report's severity is above the incident's, raise it (the
    highest reported wins) as a recorded amendment, move the counters and the open order,
    and re-plan escalation on the new severity's timers if still unacknowledged."""
    key, n, new = "inc:" + SIMILAR, SIMILAR, sim.severity
    old = Var("oldsev")
    ev = Event("incident.amended", sim.event.at, sim.event.by, sim.event.role, {
        "id": "INC-" + n, "old": {"severity": old}, "new": {"severity": str(new)},
        "why": "a merged report", "merged": sim.token, "status": Var("simstatus"),
        "text": "severity " + old + f" → {new} (a merged report)"})
    replan: list[Op] = [
        Hset(key, {"esc_next": "0"}),
        ZaddScoreFrom("esc", key, "reported_ts", sim.ack_after_s, n + ":ack")
        if sim.ack_after_s is not None else Zrem("esc", n + ":ack"),
    ]
    return [
        Hget(key, "severity", "oldsev", "0"),
        WhenCmp("oldsev", *merge_raise_test(new), [
            Hget(key, "status", "simstatus", ""),
            Hsetnx(key, "orig_severity", old),
            Hset(key, {"severity": str(new), "amended_at": sim.event.at}),
            Hincrby(key, "amendments", 1),
            *log_event(ev),
            Hincrby("counts", "inc:sev:" + old, -1),
            Hincrby("counts", f"inc:sev:{new}", 1),
            ZaddScoreFrom("open", key, "reported_ts", (5 - new) * SEV_BAND, n),
            WhenCmp("simstatus", *replan_test(), replan),
        ]),
    ]


def _merge_ops(sim: Similar, reporter: str, last_ttl: int) -> list[Op]:
    key = "inc:" + SIMILAR
    return [
        Hincrby(key, "merged", 1),
        Hset(key, {"updated_at": sim.event.at}),
        *log_event(sim.event),
        *(_raise_ops(sim) if sim.severity else []),
        Set(f"mrg:{sim.token}", json_value(sim.record), 3600),  # type: ignore[arg-type]
        Set(f"last:{reporter}", SIMILAR + f" {int(parse_iso(sim.event.at).timestamp())}",
            last_ttl),
        ReturnHash(key),
    ]


class Store(Lifecycle, Plans, Choices, HomeWatchers, UnsureResends, Persistence):
    """Async facade over Redis for the whole product."""

    def __init__(self, client: aioredis.Redis, dedupe_ttl: int = 86400, *,
                 observe_latency: Callable[[float], None] | None = None,
                 observe_answer: Callable[[bool], None] | None = None) -> None:
        self.r = client
        self.dedupe_ttl = dedupe_ttl
        # Fixtures that may have escalation deadlines: the sweep reads this set, not every
        # fixture. Entries are added before a write that adds deadlines (crash-safe: an extra
        # entry is harmless) and once per fixture per process (the report stays one trip).
        self.esc_index = OPS + "esc:fixtures"
        self._esc_indexed: dict[str, float] = {}  # fixture -> when this process listed it
        self._retire_after = 0.0  # monotonic time of the next retire_escalations pass
        self.url: str | None = None  # set by from_url (a second client, e.g. for blocking reads)
        self._lua = resources.files("bot.store").joinpath("apply.lua").read_text()
        self._apply = self.r.register_script(self._lua)
        self._form_cas = self.r.register_script(FORM_CAS)
        self.replica_acks = 0  # WAIT for this many replicas after each write (0: don't)
        self.replica_timeout_ms = 500
        self._auto_acks, self._acks_checked = False, 0.0
        self.observe_latency = observe_latency  # seconds per call
        self.observe_answer = observe_answer  # answered, or not answering
        self._rediscovered = 0.0  # monotonic time the sentinels were last asked again
        self._fence = False  # stamp writes for apply.lua's fence (see WRITE_FENCE_MS)
        self._clock_offset = 0.0  # the server's clock minus ours, seconds
        self._clock_measured = 0.0
        self._sends_reported = reports_sends(client)

    @classmethod
    def from_url(cls, url: str, dedupe_ttl: int = 86400, *,
                 observe_latency: Callable[[float], None] | None = None,
                 observe_answer: Callable[[bool], None] | None = None) -> Store:
        """Connect lazily to a REDIS_URL (plain, Sentinel or Cluster; see connect.py)."""
        store = cls(connect(url), dedupe_ttl, observe_latency=observe_latency,
                    observe_answer=observe_answer)
        store.url = url
        return store

    async def reconnect(self, url: str) -> None:
        """Talk to the server at `url` from now on (an embedded server restarted on another
        port): a new connection pool; the old one is closed."""
        stale, self.r = self.r, connect(url)
        self.url = url
        self._apply = self.r.register_script(self._lua)
        self._form_cas = self.r.register_script(FORM_CAS)
        self._sends_reported = reports_sends(self.r)
        await stale.aclose()

    async def configure_replication(self, acks: int | None = None,
                                    timeout_ms: int = 500) -> int:
        """Set how many replicas must confirm each write: a fixed `acks`; or (None) every
        replica in sync now, re-checked each second, at least 1 once the server has had one,
        and 0 for a lone server. Returns the count chosen now."""
        self.replica_timeout_ms = timeout_ms
        self._auto_acks = acks is None
        if acks is None:
            await self._refresh_acks()
        else:
            self.replica_acks = acks
        await self._measure_clock()
        return self.replica_acks

    async def _measure_clock(self) -> None:
        """How far the server's clock is ahead of ours (seconds), so the write fence compares
        times on one clock (the bot's and Redis' hosts need not agree); re-measured each
        minute. Only where a failover can happen: a lone plain server is never fenced."""
        self._fence = self.replica_acks > 0 or is_cluster(self.r) or bool(sentinels_of(self.r))
        if not self._fence:
            return
        t0 = time.time()
        secs, micros = await self._call(self.r.time())
        t1 = time.time()
        self._clock_offset = secs + micros / 1e6 - (t0 + t1) / 2
        self._clock_measured = time.monotonic()

    async def _refresh_acks(self) -> None:
        # All in-sync replicas, not just one: Sentinel promotes the replica it last saw
        # furthest ahead, which need not be the one that confirmed a write; with every
        # replica confirming, whichever is promoted has it.
        online = await self._call(replica_count(self.r))
        self._acks_checked = time.monotonic()
        if online or self.replica_acks:
            self.replica_acks = max(1, online)

    async def close(self) -> None:
        """Close connections."""
        await self.r.aclose()

    async def ping(self) -> None:
        """Raise StoreUnavailable unless Redis answers."""
        await self._call(self.r.ping())

    @staticmethod
    def track_writes() -> WriteAttempts:
        """Record whether the current command sends a write (see WriteAttempts)."""
        return track_writes()

    async def reset_for_tests(self) -> None:
        """Empty the database (tests and benches only)."""
        await self._call(self.r.flushdb())

    async def _call(self, awaitable: Any) -> Any:
        t0 = time.perf_counter()
        try:
            res = await awaitable
        except Exception as exc:
            if unavailable(exc):
                if self.observe_answer is not None:
                    self.observe_answer(False)
                if isinstance(exc, ResponseError):  # an error reply: the script never ran
                    note_not_run()
                else:
                    note_outage()
                if wrong_master(exc):
                    await self._rediscover_soon()
                raise StoreUnavailable(str(exc).splitlines()[0] if str(exc) else
                                       type(exc).__name__) from None
            raise
        else:
            if self.observe_answer is not None:
                self.observe_answer(True)
            return res
        finally:
            if self.observe_latency is not None:
                self.observe_latency(time.perf_counter() - t0)

    async def rediscover_soon(self) -> None:
        """Ask the sentinels which server is master now (a call gave up waiting on it)."""
        await self._rediscover_soon()

    async def _rediscover_soon(self) -> None:
        """Ask the sentinels again after an error a failover causes, at most 5 times a
        second (an outage must not turn into a storm of sentinel queries)."""
        now = time.monotonic()
        if now - self._rediscovered < 0.2:
            return
        self._rediscovered = now
        await rediscover(self.r)

    async def follow_failovers(self) -> None:
        """Until cancelled: on each sentinel's `+switch-master`, drop every connection to
        the old master at once (not at the next error). Returns at once without Sentinel."""
        sentinels = sentinels_of(self.r)
        if not sentinels:
            return
        while True:
            for sentinel in sentinels:  # the first that answers; the next if it goes away
                pubsub = sentinel.pubsub()
                try:
                    await pubsub.subscribe("+switch-master")
                    while True:
                        msg = await pubsub.get_message(ignore_subscribe_messages=True,
                                                       timeout=1.0)
                        if msg is not None:
                            await rediscover(self.r)
                except (RedisError, OSError):
                    pass
                finally:
                    try:
                        await pubsub.aclose()
                    except (RedisError, OSError):
                        pass
            await asyncio.sleep(1.0)

    async def _script_then_wait(self, keys: list[str], args: list[Any],
                                since: float | None) -> Any:
        """The write script and WAIT in one pipeline on one connection (one round trip);
        raise Unconfirmed when fewer than replica_acks replicas confirm in time. `since`: when
        the write began (wall clock), for the fence (WRITE_FENCE_MS)."""
        loaded = fenced = False
        while True:
            node = self.r.get_node_from_key(keys[0]) if is_cluster(self.r) else None
            pipe = self.r.pipeline(transaction=False)
            pipe.execute_command("EVALSHA", self._apply.sha, len(keys), *keys, *args,
                                 *_fence_args(since))
            wait = ("WAIT", self.replica_acks, self.replica_timeout_ms)
            if node is not None:  # WAIT counts this connection's writes: same node
                pipe.execute_command(*wait, target_nodes=node)
            else:
                pipe.execute_command(*wait)
            res, acked = await self._call(pipe.execute(raise_on_error=False))
            if isinstance(res, NoScriptError) and not loaded:
                loaded = True
                await self._call(self.r.script_load(self._lua))
                continue
            if _fenced(res) and not fenced:  # it ran nowhere: once more, to today's master
                fenced = True
                await rediscover(self.r)
                if self._auto_acks:  # the new master may have fewer replicas in sync
                    await self._refresh_acks()
                since = time.time() + self._clock_offset if since is not None else None
                continue
            if isinstance(res, Exception):
                await self._call(_raise(res))
            if isinstance(acked, Exception) or int(acked) < self.replica_acks or (
                    node is not None and self.r.get_node_from_key(keys[0]) != node):
                await rediscover(self.r)
                raise Unconfirmed(f"{acked} of {self.replica_acks} replicas confirmed")
            return res

    async def replicated(self, key: str) -> bool:
        """True once every write so far in key's hash slot has reached replica_acks replicas
        (True at once without replicas). A small write of ours in that slot, then WAIT on the
        same connection: replication is in order, so it covers every earlier write there."""
        if not self.replica_acks:
            return True
        node = self.r.get_node_from_key(key) if is_cluster(self.r) else None
        pipe = self.r.pipeline(transaction=False)
        pipe.set(key + ":confirm", "1", px=60_000)
        wait = ("WAIT", self.replica_acks, self.replica_timeout_ms)
        if node is not None:  # WAIT counts this connection's writes: same node
            pipe.execute_command(*wait, target_nodes=node)
        else:
            pipe.execute_command(*wait)
        res, acked = await self._call(pipe.execute(raise_on_error=False))
        if isinstance(res, Exception):
            await self._call(_raise(res))
        if isinstance(acked, Exception) or int(acked) < self.replica_acks:
            await rediscover(self.r)
            return False
        return True

    async def _script(self, keys: list[str], args: list[Any], since: float | None) -> Any:
        """EVALSHA the write script straight through the client (redis-py's Script wrapper
        and its argument checks cost a tenth of a report's Python); load it once if the
        server lacks it (a restart, another server)."""
        try:
            return await self._call(self.r.execute_command("EVALSHA", self._apply.sha,
                                                           len(keys), *keys, *args,
                                                           *_fence_args(since)))
        except NoScriptError:
            await self._call(self.r.script_load(self._lua))
            return await self._call(self.r.execute_command("EVALSHA", self._apply.sha,
                                                           len(keys), *keys, *args,
                                                           *_fence_args(since)))

    async def apply(self, prefix: str, ops: list[Op], dedupe: str = "") -> Applied:
        """Run one command's ops atomically in one round trip; raise Refused on a guard.
        An outage during the call leaves it unknown whether it ran (see WriteAttempts).

        With replica_acks, the same round trip WAITs for replicas (Unconfirmed if they
        don't confirm in time)."""
        if self._fence and time.monotonic() - self._clock_measured > 60.0:
            await self._measure_clock()
        # the fence counts from here, on the server's clock: a stuck INFO below counts too
        since = time.time() + self._clock_offset if self._fence else None
        keys = script_keys(prefix, ops, dedupe)
        args = [dedupe, self.dedupe_ttl, encode(ops)]
        if self._auto_acks and self.replica_acks and \
                time.monotonic() - self._acks_checked > 1.0:
            await self._refresh_acks()
        note_write(self._sends_reported)
        try:
            if self.replica_acks:
                res = await self._script_then_wait(keys, args, since)
            else:
                res = await self._script(keys, args, since)
        finally:
            note_write_done()
        status = res[0]
        if status == "refused":
            raise Refused.from_script(res[1])
        if status == "dup":
            return Applied(True, result_vars(res[1]))
        return Applied(False, result_vars(res[1]), [as_hash(h) for h in res[2]])

    def use_drill_index(self) -> None:
        """Index a replay's deadlines apart, so the live bot never sweeps a drill's fixtures."""
        self.esc_index = OPS + "esc:fixtures:drill"
        self._esc_indexed.clear()

    async def index_escalation(self, fx_id: str) -> None:
        """List a fixture among those the escalation sweep reads (before adding deadlines).
        Re-listed at least every ESC_RELIST_S: another replica may have retired it."""
        now = time.monotonic()
        if self._esc_indexed.get(fx_id, -ESC_RELIST_S) + ESC_RELIST_S <= now:
            await self._call(self.r.sadd(self.esc_index, fx_id))
            self._esc_indexed[fx_id] = now

    async def escalating_fixtures(self) -> set[str]:
        """Fixtures that may have escalation deadlines (see index_escalation), with those
        retired in the last ESC_GRACE_S (see retire_escalations)."""
        pipe = self._pipe()
        pipe.smembers(self.esc_index)
        pipe.zrangebyscore(self.esc_index + ":retired", time.time() - ESC_GRACE_S, "+inf")
        listed, retired = await self._call(pipe.execute())
        return set(listed) | set(retired)

    async def retire_escalations(self) -> list[str]:
        """Take fixtures with no pending deadline out of the sweep's index, so it shrinks as
        fixtures end; put back a retired one that has deadlines again. A process that listed
        a fixture less than ESC_RELIST_S ago writes deadlines without listing it again, so a
        retired fixture is still swept for ESC_GRACE_S (> ESC_RELIST_S): nothing is missed."""
        if time.monotonic() < self._retire_after:
            return []  # at most every ESC_RETIRE_EVERY_S: sweeps run every second
        self._retire_after = time.monotonic() + ESC_RETIRE_EVERY_S
        retired_key = self.esc_index + ":retired"
        now = time.time()
        ids = sorted(await self.escalating_fixtures())
        if not ids:
            return []
        pipe = self._pipe()
        for fx_id in ids:
            pipe.zcard(fx_prefix(fx_id) + "esc")
        sizes = await self._call(pipe.execute())
        listed = set(await self._call(self.r.smembers(self.esc_index)))
        out, back = [fx for fx, n in zip(ids, sizes, strict=True) if not n], \
            [fx for fx, n in zip(ids, sizes, strict=True) if n and fx not in listed]
        pipe = self._pipe()
        for fx_id in out:
            if fx_id in listed:
                pipe.srem(self.esc_index, fx_id)
                pipe.zadd(retired_key, {fx_id: now})
        for fx_id in back:
            pipe.sadd(self.esc_index, fx_id)
            pipe.zrem(retired_key, fx_id)
        pipe.zremrangebyscore(retired_key, "-inf", now - ESC_GRACE_S)
        await self._call(pipe.execute())
        return [fx for fx in out if fx in listed]

    # ---------------------------------------------------------------- fixtures
    async def create_fixture(self, fx: Fixture, ev: Event, dedupe: str,
                             restricted: Event | None = None) -> Applied:
        """Create a fixture (refused if the id exists) and list it in the directory; a
        restricted event goes to the fixture's restricted log in the same write."""
        ops: list[Op] = [
            RequireMissing("meta", guard(Reason.FIXTURE_EXISTS, fx.id)),
            Hset("meta", fx.to_hash()),
            *log_restricted(restricted),
            *log_event(ev),
        ]
        applied = await self.apply(fx_prefix(fx.id), ops, dedupe)
        # The directory is an idempotent index in another slot; re-adding is harmless.
        await self._call(self.r.sadd(_directory(fx.drill), fx.id))
        return applied

    async def update_fixture(self, fx_id: str, fields: dict[str, str], ev: Event,
                             dedupe: str, restricted: Event | None = None,
                             timing: str = "") -> Applied:
        """Change fixture fields (category, kick-off, phase, status) and log it (restricted
        fields in the restricted log, and the key timing a phase starts, in the same write)."""
        ops: list[Op] = [
            RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)),
            Hset("meta", fields),
            *log_restricted(restricted),
            *log_event(ev),
            *(timing_ops(timing, ev) if timing else ()),
            ReturnHash("meta"),
        ]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def fixture(self, fx_id: str) -> Fixture | None:
        """One fixture, or None."""
        h = await self._call(self.r.hgetall(fx_prefix(fx_id) + "meta"))
        return Fixture.from_hash(h) if h else None

    async def fixtures(self, *, drill: bool = False) -> list[Fixture]:
        """Every live fixture in the directory (drill=True: every drill's), by kick-off."""
        ids = sorted(await self._call(self.r.smembers(_directory(drill))))
        pipe = self._pipe()
        for i in ids:
            pipe.hgetall(fx_prefix(i) + "meta")
        rows = await self._call(pipe.execute()) if ids else []
        return sorted((Fixture.from_hash(h) for h in rows if h), key=lambda f: f.kickoff)

    async def active_fixture_id(self) -> str | None:
        """The fixture commands apply to."""
        return await self._call(self.r.get(OPS + "active"))

    async def set_active_fixture(self, fx_id: str) -> None:
        """Make a fixture the one commands apply to."""
        note_write()
        await self._call(self.r.set(OPS + "active", fx_id))

    # ---------------------------------------------------------------- incidents
    async def report_incident(self, fx_id: str, fields: dict[str, str], ev: Event,
                              reported_ts: int, dedupe: str, drop_form: str = "",
                              form_id: str = "",
                              last_ttl: int = 900,
                              deadlines: dict[str, int] | None = None,
                              similar: Similar | None = None,
                              outbox: list[Op] | None = None,
                              also: list[Op] | None = None) -> Applied:
        """Log a new incident: number, hash, event, counters, open index, escalation
        deadlines (tag -> due epoch seconds, see bot.schedule.escalation); one round trip.

        With `similar`, the same script first looks for an open incident of the same type
        nearby; if there is one the report is added to it instead (var `similar` is set) and
        nothing new is counted. `outbox` ops (bot.store.outbox.ops) are written only for a
        new incident, in the same script, and so are `also` ops (what caused the report,
        e.g. a failed inspection item, numbered with the incident's Var("n"))."""
        sev = int(fields["severity"])
        if deadlines:
            await self.index_escalation(fx_id)
        key = INC_N
        ev.data = _numbered(ev.data, "id", ID_N)  # None: the number this write takes
        if similar is not None:  # ... or the one the report joins
            similar.event.data = _numbered(similar.event.data, "id", "INC-" + SIMILAR)
            similar.record = _numbered(similar.record, "first", SIMILAR)
        head: list[Op] = [RequireExists("meta", guard(Reason.NO_FIXTURE, fx_id)), phase_op()]
        if similar is not None:
            head += [FindSimilar(f"open:t:{fields['type']}", similar.since, fields["type"],
                                 similar.near, fields.get("affiliation", "unknown"),
                                 fields["location"], "similar"),
                     When("similar", _merge_ops(similar, fields["reporter"], last_ttl))]
        ops: list[Op] = [
            Incr("seq", "n"),
            Hset(key, {"n": N, "id": ID_N, "phase": PHASE,
                       "reported_ts": str(reported_ts), **fields,
                       "esc_next": "0", "remind_n": "0"}),
            *log_event(ev),
            *counter_ops(ev),
            Zadd("open", (5 - sev) * SEV_BAND + reported_ts, N),
            Zadd("all", reported_ts, N),
            Zadd("unacked", reported_ts, N),
            # the reporter's latest incident: where their next text or photo goes
            Set(f"last:{fields['reporter']}", N + f" {reported_ts}", last_ttl),
            *[Zadd("esc", due, N + f":{tag}") for tag, due in (deadlines or {}).items()],
            Zadd(f"open:t:{fields['type']}", reported_ts, N),
            *(outbox or []),
            *(also or []),
            ReturnHash(key),
        ]
        if drop_form:
            ops.append(Del(f"form:{drop_form}"))
            head.append(Del(f"form:{drop_form}"))
        if drop_form and form_id:  # a second tap on the finished form finds its number
            done = f"formdone:{drop_form}"
            ops.append(Set(done, form_id + " " + N, FORM_DONE_TTL))
            if similar is not None:
                head.append(When("similar", [Set(done, form_id + " " + SIMILAR,
                                                 FORM_DONE_TTL)]))
        if similar is not None:
            return await self.apply(fx_prefix(fx_id), [*head, Unless("similar", ops)], dedupe)
        return await self.apply(fx_prefix(fx_id), head + ops, dedupe)

    async def change_status(self, fx_id: str, n: int, to: str, allowed_from: list[str],
                            ev: Event, now_ts: int, dedupe: str,
                            refusal: Reason = Reason.STATUS,
                            fields: dict[str, str] | None = None,
                            deadlines: dict[str, int] | None = None,
                            first: Event | None = None) -> Applied:
        """Move an incident to a new status if its current one allows it (else Refused with
        `refusal` and the status found); an acknowledgement stops its escalation deadlines
        and a close its reminders, in the same round trip. An event "from" of None becomes
        the status the move was from."""
        key = f"inc:{n}"
        cls = ev.data.get("cls", "")
        if "from" in ev.data and ev.data["from"] is None:  # the status read in the script
            ev.data = {k: Var("from") if k == "from" else v for k, v in ev.data.items()}
        if deadlines:
            await self.index_escalation(fx_id)
        ops: list[Op] = [
            RequireExists(key, missing_incident(n)),
            RequireIn(key, "status", allowed_from, guard(refusal, n, Var("current"))),
            Hget(key, "status", "from"),
            # `first`: an event the move implies, logged just before it (a police handover of
            # an unacknowledged incident is its acknowledgement)
            *(log_event(first) if first is not None else []),
            Hset(key, {"status": to, f"{to}_at": ev.at, f"{to}_by": ev.by,
                       "updated_at": ev.at, **(fields or {})}),
            *log_event(ev),
            *counter_ops(ev),
        ]
        if to != "reported":
            ops += [ZaddSince("tta", key, "reported_ts", now_ts, str(n)),
                    HsetnxSince(key, "tta_s", "reported_ts", now_ts),
                    Zrem("unacked", str(n)), Zrem("esc", f"{n}:ack")]
        if cls == "close":
            ops += [ZaddSince("ttc", key, "reported_ts", now_ts, str(n)),
                    HsetnxSince(key, "ttc_s", "reported_ts", now_ts),
                    Zrem("open", str(n)), Zrem("esc", f"{n}:open"),
                    ZremByField("open:t:", key, "type", str(n))]
        elif cls == "reopen":
            ops.append(ZaddScoreFrom("open", key, "reported_ts",
                                     (5 - int(ev.data.get("severity", 3))) * SEV_BAND, str(n)))
        ops += [Zadd("esc", due, f"{n}:{tag}") for tag, due in (deadlines or {}).items()]
        ops.append(ReturnHash(key))
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def add_to_incident(self, fx_id: str, n: int, ev: Event, dedupe: str,
                              counter_field: str = "updates",
                              live: dict[str, dict[str, Any]] | None = None) -> Applied:
        """Append an update or evidence to an incident's timeline; `live` keeps each live
        location's first position under its key, for its later positions (move_live)."""
        key = f"inc:{n}"
        ops: list[Op] = [
            RequireExists(key, missing_incident(n)),
            phase_op(),
            Hincrby(key, counter_field, 1),
            Hset(key, {"updated_at": ev.at}),
            *log_event(ev),
            *(Set(f"live:{k}", json.dumps({"n": n, **pos}), LIVE_TTL_S)
              for k, pos in (live or {}).items()),
            ReturnHash(key),
        ]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def live_location(self, fx_id: str, live: str) -> dict[str, Any] | None:
        """A kept live location's incident (n) and latest position (lat, lon, at), or None."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}live:{live}"))
        return json.loads(raw) if raw else None

    async def move_live(self, fx_id: str, n: int, live: str, pos: dict[str, Any], ev: Event,
                        dedupe: str) -> Applied:
        """A live location's later position: its latest position and time replaced and the
        move appended to the incident's timeline, in one round trip."""
        ops: list[Op] = [
            RequireExists(f"inc:{n}", missing_incident(n)),
            Set(f"live:{live}", json.dumps({"n": n, **pos}), LIVE_TTL_S),
            *log_event(ev),
        ]
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    async def applied_vars(self, fx_id: str, dedupe: str) -> dict[str, str] | None:
        """What an already-applied write (by its dedupe key) set, or None if never applied."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}dedupe:{dedupe}"))
        return json.loads(raw) if raw else None

    async def last_incident_of(self, fx_id: str, who: str) -> int | None:
        """The incident a reporter logged most recently (within its TTL), or None."""
        last = await self.last_report_of(fx_id, who)
        return last[0] if last else None

    async def last_report_of(self, fx_id: str, who: str) -> tuple[int, int | None] | None:
        """(incident number, epoch seconds of the report) of a reporter's latest report
        (within its TTL), or None; the time is None for a record written before it was kept."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}last:{who}"))
        if not raw:
            return None
        n, _, ts = raw.partition(" ")
        return int(n), int(ts) if ts else None

    async def incident(self, fx_id: str, n: int) -> Incident | None:
        """One incident's current view, or None."""
        h = await self._call(self.r.hgetall(f"{fx_prefix(fx_id)}inc:{n}"))
        return Incident.from_hash(h) if h else None

    async def incidents(self, fx_id: str, ns: list[int]) -> list[Incident | None]:
        """Several incidents' current views (None for one that is not there), one round
        trip."""
        if not ns:
            return []
        pipe = self._pipe()
        for n in ns:
            pipe.hgetall(f"{fx_prefix(fx_id)}inc:{n}")
        return [Incident.from_hash(h) if h else None for h in await self._call(pipe.execute())]

    async def open_incidents(self, fx_id: str,
                             limit: int = 15) -> tuple[list[Incident], dict[int, int]]:
        """Open incidents, most severe then oldest first; open counts by severity (and
        key 0: the unacknowledged count)."""
        p = fx_prefix(fx_id)
        pipe = self._pipe()
        pipe.zrange(p + "open", 0, limit - 1)
        for sev in range(1, 6):
            lo = (5 - sev) * SEV_BAND
            pipe.zcount(p + "open", lo, lo + SEV_BAND - 1)
        pipe.zcard(p + "unacked")
        res = await self._call(pipe.execute())
        ids, by_sev = res[0], {sev: res[sev] for sev in range(1, 6)}
        by_sev[0] = res[6]  # key 0: how many are still unacknowledged
        if not ids:
            return [], by_sev
        pipe = self._pipe()
        for n in ids:
            pipe.hgetall(f"{p}inc:{n}")
        return [Incident.from_hash(h) for h in await self._call(pipe.execute()) if h], by_sev

    # ---------------------------------------------------------------- police
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
        return await self.apply(fx_prefix(fx_id), ops, dedupe)

    # ---------------------------------------------------------------- views
    async def counts(self, fx_id: str) -> dict[str, int]:
        """The fixture's derived counters."""
        h = await self._call(self.r.hgetall(fx_prefix(fx_id) + "counts"))
        return {k: int(v) for k, v in h.items() if int(v)}

    async def response_times(self, fx_id: str) -> dict[str, float | int | None]:
        """Median and worst seconds to acknowledge and to close (O(log n) via sorted sets)."""
        p = fx_prefix(fx_id)
        pipe = self._pipe()
        for z in ("tta", "ttc"):
            pipe.zcard(p + z)
        res = await self._call(pipe.execute())
        out: dict[str, float | int | None] = {"acknowledged": res[0], "closed": res[1]}
        pipe = self._pipe()
        for z, n in (("tta", res[0]), ("ttc", res[1])):
            lo, hi = (n - 1) // 2, n // 2
            pipe.zrange(p + z, lo, hi, withscores=True)
            pipe.zrange(p + z, -1, -1, withscores=True)
        rows = await self._call(pipe.execute())
        for i, name in enumerate(("ack", "close")):
            mid, worst = rows[2 * i], rows[2 * i + 1]
            out[f"median_{name}_s"] = (sum(s for _, s in mid) / len(mid)) if mid else None
            out[f"worst_{name}_s"] = worst[0][1] if worst else None
        return out

    async def events(self, fx_id: str, start: str = "-", count: int | None = None) -> list[Event]:
        """The fixture's log in order (all of it unless count is given)."""
        rows = await self._call(self.r.xrange(fx_prefix(fx_id) + "log", start, "+", count=count))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def restricted_events(self, fx_id: str) -> list[Event]:
        """The fixture's restricted log (intelligence), in order: only restricted exports
        read it."""
        rows = await self._call(self.r.xrange(fx_prefix(fx_id) + RESTRICTED_LOG, "-", "+"))
        return [Event.from_stream(sid, f) for sid, f in rows]

    async def incident_events(self, fx_id: str, n: int) -> list[Event]:
        """The events about one incident, in order, from its timeline index (cost ~ its own
        events, not the fixture's). An incident logged before the index existed is found by
        reading the whole log."""
        p = fx_prefix(fx_id)
        ids = await self._call(self.r.lrange(f"{p}tl:{n}", 0, -1))
        if not ids:
            iid = f"INC-{n}"
            return [e for e in await self.events(fx_id)
                    if e.data.get("id") == iid or e.data.get("incident") == iid]
        pipe = self._pipe()
        for sid in ids:
            pipe.xrange(p + "log", sid, sid, count=1)
        rows = await self._call(pipe.execute())
        return [Event.from_stream(sid, f) for row in rows for sid, f in row]

    async def chart_counts(self, fx_id: str) -> dict[str, int]:
        """The chart's counters: 'i:<bin>:<phase>' incidents and 'a:<bin>' arrests per
        15-minute bin (see ledger.chart_deltas); cost ~ the number of bins."""
        h = await self._call(self.r.hgetall(fx_prefix(fx_id) + "chart"))
        return {k: int(v) for k, v in h.items() if int(v)}

    async def events_since(self, fx_id: str, since: str, limit: int = 2000) -> list[Event]:
        """Events logged at or after an ISO UTC time, oldest first; reads back from the end
        of the stream in pages and stops at the first older event (cost ~ the window)."""
        key, end, out = fx_prefix(fx_id) + "log", "+", []
        while len(out) < limit:
            rows = await self._call(self.r.xrevrange(key, end, "-", count=100))
            for sid, f in rows:
                if f["at"] < since:  # ISO UTC strings order like the times they name
                    return [Event.from_stream(s, g) for s, g in reversed(out)]
                out.append((sid, f))
            if len(rows) < 100:
                break
            end = "(" + rows[-1][0]
        return [Event.from_stream(s, g) for s, g in reversed(out)]

    async def open_ids(self, fx_id: str, limit: int = 50) -> list[str]:
        """Ids of open incidents, most severe then oldest first."""
        ns = await self._call(self.r.zrange(fx_prefix(fx_id) + "open", 0, limit - 1))
        return [f"INC-{n}" for n in ns]

    # ---------------------------------------------------------------- people
    async def member(self, who: str) -> dict[str, str] | None:
        """A member who joined by invite, or None."""
        raw = await self._call(self.r.hget(OPS + "members", who))
        return json.loads(raw) if raw else None

    async def create_invite(self, code: str, role: str, by: str, ttl: int) -> None:
        """Store a one-time invite code for a role, expiring after ttl seconds."""
        note_write()
        pipe = self._pipe(transaction=True)
        pipe.hset(OPS + f"invite:{code}", mapping={"role": role, "by": by})
        pipe.expire(OPS + f"invite:{code}", ttl)
        await self._call(pipe.execute())

    async def redeem_invite(self, code: str, who: str, name: str, at: str) -> str | None:
        """Use an invite once, atomically: the role it grants, or None if unknown/used/expired."""
        record = json_value({"role": Var("role"), "invited_by": Var("by"), "name": name,
                             "joined_at": at})
        ops: list[Op] = [
            RequireExists(f"invite:{code}", guard(Reason.UNKNOWN_INVITE)),
            Hget(f"invite:{code}", "role", "role"),
            Hget(f"invite:{code}", "by", "by"),
            Hset("members", {who: record}),
            Del(f"invite:{code}"),
        ]
        try:
            applied = await self.apply(OPS, ops)
        except Refused:
            return None
        return applied.vars["role"]

    async def audit(self, who: str, action: str, detail: str, at: str,
                    unix_user: str = "") -> None:
        """Append to the audit trail (refusals, restricted reads, admin changes); a command-line
        action also names the Unix user who ran it (`who` is only what they claimed)."""
        entry = {"at": at, "who": who, "action": action, "detail": detail}
        if unix_user:
            entry["unix_user"] = unix_user
        await self._call(self.r.xadd(OPS + "audit", entry, maxlen=100_000, approximate=True))

    async def audit_log(self, count: int = 100) -> list[dict[str, str]]:
        """Newest audit entries, newest first."""
        rows = await self._call(self.r.xrevrange(OPS + "audit", count=count))
        return [f for _, f in rows]

    async def audit_stranger(self, fields: dict[str, str]) -> None:
        """Keep a refusal of someone the bot does not know (a capped stream of its own, so a
        flood of them never pushes members' entries out of the audit trail)."""
        await self._call(self.r.xadd(STRANGERS_AUDIT, fields, maxlen=STRANGERS_AUDIT_MAXLEN,
                                     approximate=True))

    async def stranger_refusals(self, count: int = 100) -> list[dict[str, str]]:
        """Newest refusals of strangers, newest first."""
        rows = await self._call(self.r.xrevrange(STRANGERS_AUDIT, count=count))
        return [f for _, f in rows]

    # ---------------------------------------------------------------- live messages
    @staticmethod
    def _ref_key(fixture: str, platform: str, chat: str, ref: str) -> str:
        return f"{fx_prefix(fixture) if fixture else OPS}msg:{platform}:{chat}:{ref}"

    async def message_ref(self, fixture: str, platform: str, chat: str, ref: str) -> str | None:
        """The platform message id of a live message (e.g. an incident card) in a chat."""
        return await self._call(self.r.get(self._ref_key(fixture, platform, chat, ref)))

    async def log_once(self, fx_id: str, ev: Event, extra: list[Op], once: str) -> bool:
        """Log a system event (and its outbox entries) once for `once`, whichever replica
        asks first: False when it was logged already."""
        applied = await self.apply(fx_prefix(fx_id), log_event(ev) + extra, dedupe=once)
        return not applied.duplicate

    @staticmethod
    def _seen_key(fixture: str, ref: str) -> str:
        return f"{fx_prefix(fixture)}seen:{ref}"

    def seen_op(self, pipe: Any, fixture: str, platform: str, chat: str, ref: str,
                at_ms: int | None) -> None:
        """Add to a pipeline: when a live message first reached a chat (kept as long as its
        ref), so a screen can say "delivered 21:06:14 (Slack)" per incident."""
        if at_ms is None or not fixture:
            return
        key = self._seen_key(fixture, ref)
        pipe.hsetnx(key, f"{platform}:{chat}", str(at_ms))
        pipe.expire(key, 14 * 86400)

    async def delivered_at(self, fixture: str, refs: list[str]) -> dict[str, dict[str, int]]:
        """ref -> {'platform:chat': ms since the epoch its live message first arrived}."""
        if not refs:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for ref in refs:
            pipe.hgetall(self._seen_key(fixture, ref))
        res = await self._call(pipe.execute())
        return {ref: {str(k): int(v) for k, v in h.items()} for ref, h in zip(refs, res,
                                                                             strict=True) if h}

    async def set_message_ref(self, fixture: str, platform: str, chat: str, ref: str,
                              message_id: str, at_ms: int | None = None) -> None:
        """Remember where a live message was posted, so later changes edit it in place
        (`at_ms`: when it arrived, for the first arrival in that chat)."""
        # Two slots ({fixture} and the chat's), so no MULTI: each SET is idempotent, and the
        # reverse index is written first so a found forward ref always resolves back. The
        # reverse index is a hint: while the chat's slot refuses writes, a reply to the
        # message is not tied to its incident, but the forward ref every edit needs is kept.
        pipe = self.r.pipeline(transaction=False)
        pipe.set(msgof_key(platform, chat, message_id), f"{fixture}|{ref}", ex=14 * 86400)
        pipe.set(self._ref_key(fixture, platform, chat, ref), message_id, ex=14 * 86400)
        self.seen_op(pipe, fixture, platform, chat, ref, at_ms)
        await self.run_with_hints(pipe, 1)

    async def run_with_hints(self, pipe: Any, hints: int) -> list[Any]:
        """Run a pipeline in one round trip; its first `hints` commands may fail (logged,
        not raised), any other failure raises (StoreUnavailable when the store is away)."""
        res = await self._call(pipe.execute(raise_on_error=False))
        for i, r in enumerate(res):
            if not isinstance(r, Exception):
                continue
            if i < hints and unavailable(r):
                log.info("a hint was not written (its slot is away): %s",
                         str(r).splitlines()[0])
                continue
            if unavailable(r):
                raise StoreUnavailable(str(r).splitlines()[0])
            raise r
        return res

    async def drop_message_ref(self, fixture: str, platform: str, chat: str,
                               ref: str) -> None:
        """Forget a live message (e.g. a board no longer live): the next one is posted anew."""
        await self._call(self.r.delete(self._ref_key(fixture, platform, chat, ref)))

    async def ref_of_message(self, platform: str, chat: str,
                             message_id: str) -> tuple[str, str] | None:
        """(fixture, ref) of a live message the bot posted, e.g. to attach a reply's photo."""
        raw = await self._call(self.r.get(msgof_key(platform, chat, message_id)))
        if not raw:
            return None
        fixture, _, ref = raw.partition("|")
        return fixture, ref

    # ---------------------------------------------------------------- forms
    async def form(self, fx_id: str, who: str) -> dict[str, Any] | None:
        """A person's guided form in progress, or None if none or expired."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}form:{who}"))
        return json.loads(raw) if raw else None

    async def save_form(self, fx_id: str, who: str, state: dict[str, Any], ttl: int) -> None:
        """Keep a form's state for ttl seconds (any replica can continue it).

        Compare-and-set: a state read with form() is saved only if nobody saved a step since
        (two taps on two replicas cannot both win); Refused otherwise. A new state (not read
        with form()) starts the form afresh."""
        note_write()
        expected = state.get("_v")
        state["_v"] = int(expected or 0) + 1
        ok = await self._call(self._form_cas(keys=[f"{fx_prefix(fx_id)}form:{who}"],
                                             args=["" if expected is None else str(expected),
                                                   json.dumps(state), ttl]))
        if not ok:
            state["_v"] = expected
            raise Refused(Reason.STEP_TAKEN)

    # ---------------------------------------------------------------- replicas
    async def publish_change(self, what: str, fixture: str, origin: str) -> None:
        """Tell other replicas something they may cache changed (fixture, phase, active)."""
        await self._call(self.r.publish(CHANGES, f"{what}|{fixture}|{origin}"))

    async def changes(self, subscribed: Callable[[], Awaitable[None]] | None = None,
                      ) -> AsyncIterator[tuple[str, str, str]]:
        """(what, fixture, origin) as other replicas publish them; ends when Redis goes
        away (the caller resubscribes). `subscribed` runs once listening (to catch up)."""
        pubsub = self.r.pubsub()
        try:
            await self._call(pubsub.subscribe(CHANGES))
            if subscribed is not None:
                await subscribed()
            while True:
                msg = await self._call(pubsub.get_message(ignore_subscribe_messages=True,
                                                          timeout=1.0))
                if msg and isinstance(msg.get("data"), str):
                    what, _, rest = msg["data"].partition("|")
                    fixture, _, origin = rest.partition("|")
                    yield what, fixture, origin
        finally:
            await pubsub.aclose()

    async def form_done(self, fx_id: str, who: str) -> tuple[str, int] | None:
        """(form id, incident number) of the person's last finished guided form, or None."""
        raw = await self._call(self.r.get(f"{fx_prefix(fx_id)}formdone:{who}"))
        fid, _, n = (raw or "").partition(" ")
        return (fid, int(n)) if n.isdigit() else None

    async def form_ttl(self, fx_id: str, who: str) -> int:
        """Seconds a form has left (negative when there is none)."""
        return int(await self._call(self.r.ttl(f"{fx_prefix(fx_id)}form:{who}")))

    async def drop_form(self, fx_id: str, who: str) -> None:
        """Forget a form."""
        await self._call(self.r.delete(f"{fx_prefix(fx_id)}form:{who}"))


def _numbered(data: dict[str, Any], name: str, value: Text) -> dict[str, Any]:
    """`data` with its `name` filled in by the store's variable when the caller left it None
    (in place, so the order of the fields is kept)."""
    if name not in data or data[name] is not None:
        return data
    return {k: value if k == name else v for k, v in data.items()}


def _directory(drill: bool) -> str:
    """Live fixtures and drills' fixtures are listed apart: nothing that walks the live
    directory (scheduler, delivery, retention, season figures) ever meets a drill."""
    return OPS + ("fixtures:drill" if drill else "fixtures")


async def _raise(exc: Exception) -> Any:
    raise exc


def _fence_args(since: float | None) -> tuple[Any, ...]:
    """apply.lua's ARGV[4], ARGV[5]: when the write was sent (ms, server clock) and the
    longest it may wait to run; ("", 0) for no fence (a lone server has no failover)."""
    return ("", 0) if since is None else (int(since * 1000), WRITE_FENCE_MS)


def _fenced(res: object) -> bool:
    """Whether apply.lua refused a write that waited too long to run (see WRITE_FENCE_MS)."""
    return isinstance(res, ResponseError) and str(res).startswith("FENCED")
