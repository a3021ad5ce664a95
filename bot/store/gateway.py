"""The one owner of the Redis client and its call discipline: every command goes through
`call` (latency and answer observed, an outage mapped to StoreUnavailable), pipelines and
scripts are made here, the write script runs here (`apply`: the write fence on the server's
clock, the replicas' WAIT), and a reconnect or failover replaces the client under every part
of the store at once. The store's facades and their parts are written against it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline, PubSub
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError, ResponseError

from bot.store.base import (
    NO_CLUB,
    Applied,
    KeySpace,
    Refused,
    StoreUnavailable,
    WritesRefused,
    as_hash,
    note_not_run,
    note_outage,
    note_write,
    note_write_done,
    result_vars,
)
from bot.store.connect import (
    connect,
    is_cluster,
    rediscover,
    refused_write,
    replica_count,
    reports_sends,
    sentinels_of,
    unavailable,
    wrong_master,
)
from bot.store.durability import Durability, worst_fsync
from bot.store.keys import script_keys
from bot.store.ops import Op, encode

T = TypeVar("T")
Command = Callable[[aioredis.Redis], Awaitable[Any]] | Awaitable[Any]

# The longest a replicated write may take from being sent to running in Redis (apply.lua's
# fence): a write queued in a paused master runs when the master resumes, before it learns
# that the sentinels replaced it. A failover needs the master silent for
# down-after-milliseconds (2000 in deploy/compose.yaml), so keep this below that. The send
# time is stamped in the server's clock (an offset measured with TIME), so the two clocks
# need not agree. A fenced write ran nowhere: it is sent again once, to the master the
# sentinels name now.
WRITE_FENCE_MS = 1000
# A clock offset re-measure that failed is tried again this much later (the old one stands).
MEASURE_RETRY_S = 5.0
# The same fence for the small write scripts outside apply.lua (seen marks, rate-limit
# windows, the Telegram inbox): prepended to the script, it reads its two arguments from the
# end of ARGV, so a fenced script's own ARGV stays as it was (it must not count ARGV).
_FENCE_LUA = """
local fence_sent = tonumber(ARGV[#ARGV - 1])
if fence_sent then
  local t = redis.call('TIME')
  local waited = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - fence_sent
  if waited > tonumber(ARGV[#ARGV]) then
    return redis.error_reply('FENCED the write waited ' .. waited .. ' ms to run (over ' ..
      ARGV[#ARGV] .. ' ms): this server was paused and may have been replaced')
  end
end
"""

log = logging.getLogger(__name__)


class Unconfirmed(StoreUnavailable):
    """The write reached the master but not enough replicas confirmed it in time: it may
    still be lost in a failover, so it is not 'Logged' yet; resending it (same dedupe key)
    is safe and confirms it."""


@dataclass(frozen=True)
class FencedScript:
    """A write script carrying the write fence (made by `Gateway.fenced_script`)."""

    script: AsyncScript


class Gateway:
    """The Redis client of one process and how every part of the store calls it."""

    def __init__(self, client: aioredis.Redis, dedupe_ttl: int = 86400, *,
                 observe_latency: Callable[[float], None] | None = None,
                 observe_answer: Callable[[bool], None] | None = None) -> None:
        self.r = client
        self.space = NO_CLUB  # whose keys the store builds here (see for_club)
        self.dedupe_ttl = dedupe_ttl
        self.url: str | None = None  # set by from_url (a second client, e.g. for blocking reads)
        self._lua = resources.files("bot.store").joinpath("apply.lua").read_text()
        self._apply = self.r.register_script(self._lua)
        self.replica_acks = 0  # WAIT for this many replicas after each write (0: don't)
        self.replica_timeout_ms = 500
        self._auto_acks, self._acks_checked = False, 0.0
        self._recounting: asyncio.Task[None] | None = None  # see _acks_fresh
        self._measuring: asyncio.Task[None] | None = None  # see _stamp
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
                 observe_answer: Callable[[bool], None] | None = None) -> Gateway:
        """Connect lazily to a REDIS_URL (plain, Sentinel or Cluster; see connect.py)."""
        gateway = cls(connect(url), dedupe_ttl, observe_latency=observe_latency,
                      observe_answer=observe_answer)
        gateway.url = url
        return gateway

    def for_club(self, club: str) -> ClubGateway:
        """One club's view of this gateway: the same client, scripts and write discipline,
        every key built through it in the club's key space. A club's store is
        `Store(gateway.for_club(club))`, its facades `StoreFacades.over(...)` likewise."""
        return ClubGateway(self, KeySpace(club))

    async def reconnect(self, url: str) -> None:
        """Talk to the server at `url` from now on (an embedded server restarted on another
        port): a new connection pool; the old one is closed."""
        stale, self.r = self.r, connect(url)
        self.url = url
        self._apply = self.r.register_script(self._lua)
        self._sends_reported = reports_sends(self.r)
        await stale.aclose()

    @property
    def cluster(self) -> bool:
        """Whether the client talks to a Redis Cluster."""
        return is_cluster(self.r)

    def pipeline(self, transaction: bool = False) -> Pipeline:
        """A pipeline on the client (run it with `call(pipe.execute())`)."""
        return self.r.pipeline(transaction=transaction)

    def pubsub(self) -> PubSub:
        """A subscription connection (its awaits go through `call`)."""
        return self.r.pubsub()

    def script(self, lua: str) -> AsyncScript:
        """A Lua script to run with `run_script` (on whichever client is current then)."""
        return self.r.register_script(lua)

    async def run_script(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """Run a script made by `script` (loaded on first use, again after a restart)."""
        return await self.call(_evalsha(self.r, script.sha, script.script, keys, args))

    def fenced_script(self, lua: str) -> FencedScript:
        """A write script to run with `run_fenced`: refused where it waited past the write
        fence (a paused master the sentinels may have replaced), then sent once more to
        today's master (see WRITE_FENCE_MS). `lua` must not count its ARGV."""
        return FencedScript(self.r.register_script(_FENCE_LUA + lua))

    async def run_fenced(self, script: FencedScript, keys: list[str], args: list[Any]) -> Any:
        """Run a script made by `fenced_script`, stamped for the fence; a fenced run wrote
        nothing, so it is sent once more, to the master the sentinels name now."""
        for last in (False, True):
            stamp = _fence_args(await self._stamp())
            res = await self.call(_unless_fenced(_evalsha(
                self.r, script.script.sha, script.script.script, keys, [*args, *stamp]),
                last))
            if res is not _FENCED:
                return res
            # an answer, not an outage: the outage state and its log stay as they are
            log.warning("a write waited in a paused server and was refused there; "
                        "sent again to the master named now")
            await rediscover(self.r)
        raise AssertionError("unreachable")

    async def _stamp(self) -> float | None:
        """When a write is sent, on the server's clock (None: no fence on a lone server);
        the clocks' offset re-measured each minute, in the background: TIME goes to the
        client's default node, and with that master paused every fenced write (reports,
        outbox marks, rate-window takes) waited out its timeout while the offset, which
        drifts by microseconds a minute, was as good as ever."""
        if self._fence and time.monotonic() - self._clock_measured > 60.0 and \
                (self._measuring is None or self._measuring.done()):
            self._measuring = asyncio.create_task(self._remeasure())
        return time.time() + self._clock_offset if self._fence else None

    async def _remeasure(self) -> None:
        try:
            await self._measure_clock()
        except Exception as exc:  # its node not answering: the offset stands, asked again
            self._clock_measured = time.monotonic() - 60.0 + MEASURE_RETRY_S
            log.debug("server clock not re-measured (%s)", type(exc).__name__)

    def blocking_client(self) -> aioredis.Redis:
        """A client of its own for blocking reads (XREAD BLOCK), so a reader waiting for the
        next event never holds a connection a write needs."""
        if self.url is not None:  # plain, Sentinel or Cluster alike
            return connect(self.url, blocking=True)
        pool = self.r.connection_pool
        kwargs = {**pool.connection_kwargs, "socket_timeout": None}
        return aioredis.Redis(connection_pool=aioredis.ConnectionPool(
            connection_class=pool.connection_class, max_connections=64, **kwargs))

    async def durability(self) -> Durability:
        """The server's append-only settings (every primary's, worst first, for a cluster)
        and the replicas WAIT confirms (the persistence check, once at start-up and for
        /status). Raises StoreUnavailable when it is down."""
        cluster = self.cluster
        target = {"target_nodes": RedisCluster.PRIMARIES} if cluster else {}
        info = await self.call(lambda r: r.info("persistence", **target))
        infos = list(info.values()) if cluster else [info]
        flags = [i.get("aof_enabled") for i in infos]
        appendonly = None if any(f is None for f in flags) else all(int(f) for f in flags)
        refused = False
        try:
            got = await self.call(lambda r: r.config_get("appendfsync", **target))
            fsyncs = [g.get("appendfsync") for g in (got.values() if cluster else [got])]
            appendfsync = worst_fsync(fsyncs)
        except ResponseError:  # NOPERM, unknown command (renamed away): not ours to see
            refused, appendfsync = True, None
        replicas = await self.call(replica_count)
        return Durability(appendonly, appendfsync, replicas, self.replica_acks, refused)

    async def whole_cluster_stops(self) -> int:
        """On a Cluster, how many masters have `cluster-require-full-coverage yes`: with one
        master down, those answer CLUSTERDOWN for every slot until its replica has taken
        over, so every fixture stops, not only that master's (0: not a Cluster, or CONFIG
        GET refused: not ours to see)."""
        if not self.cluster:
            return 0
        try:
            got = await self.call(lambda r: r.config_get(
                "cluster-require-full-coverage", target_nodes=RedisCluster.PRIMARIES))
        except (ResponseError, StoreUnavailable):
            return 0
        return sum(1 for g in got.values() if g.get("cluster-require-full-coverage") == "yes")

    async def slow_full_syncs(self) -> int:
        """How many masters wait before sending a replica a full copy (diskless sync with
        `repl-diskless-sync-delay` above 0, Redis' default 5 s): after a failover the old
        master comes back as a replica that needs one, and until it has it every write the
        bot WAITs on is answered HELD and its cards wait (0: none, or not ours to see)."""
        try:
            if self.cluster:
                got = await self.call(lambda r: r.config_get(
                    "repl-diskless-sync*", target_nodes=RedisCluster.PRIMARIES))
                configs = list(got.values())
            else:
                configs = [await self.call(lambda r: r.config_get("repl-diskless-sync*"))]
        except (ResponseError, StoreUnavailable):
            return 0
        return sum(1 for c in configs if c.get("repl-diskless-sync") == "yes"
                   and int(c.get("repl-diskless-sync-delay") or 0) > 0)

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
        secs, micros = await self.call(self.r.time())
        t1 = time.time()
        self._clock_offset = secs + micros / 1e6 - (t0 + t1) / 2
        self._clock_measured = time.monotonic()

    async def _refresh_acks(self) -> None:
        # All in-sync replicas, not just one: Sentinel promotes the replica it last saw
        # furthest ahead, which need not be the one that confirmed a write; with every
        # replica confirming, whichever is promoted has it.
        online = await self.call(replica_count(self.r))
        self._acks_checked = time.monotonic()
        if online or self.replica_acks:
            self.replica_acks = max(1, online)

    async def _acks_fresh(self) -> None:
        """Re-count the replicas in sync at most once a second (auto acks only), in the
        background: the count asks every master, and a write must not wait for one that is
        paused (each report to any fixture, and each fixture's outbox read, waited out its
        timeouts: control's cards of every fixture stopped while one master was paused)."""
        if self._auto_acks and self.replica_acks and \
                time.monotonic() - self._acks_checked > 1.0 and \
                (self._recounting is None or self._recounting.done()):
            self._acks_checked = time.monotonic()
            self._recounting = asyncio.create_task(self._recount())

    async def _recount(self) -> None:
        try:
            await self._refresh_acks()
        except Exception as exc:  # a master not answering: the count stands until it does
            log.debug("replicas in sync not re-counted (%s)", type(exc).__name__)

    async def close(self) -> None:
        """Close connections."""
        for task in (self._recounting, self._measuring):
            if task is not None:
                task.cancel()
        await self.r.aclose()

    async def ping(self) -> None:
        """Raise StoreUnavailable unless Redis answers."""
        await self.call(self.r.ping())

    async def reset_for_tests(self) -> None:
        """Empty the database (tests and benches only)."""
        await self.call(self.r.flushdb())

    async def call(self, command: Command) -> Any:
        """Run one command (a function of the client, or an awaitable made here: a
        pipeline's execute, a script, a subscription) and observe it: its latency, whether
        the store answered; an outage raises StoreUnavailable."""
        t0 = time.perf_counter()
        try:
            res = await (command(self.r) if callable(command) else command)
        except Exception as exc:
            if unavailable(exc):
                refused = refused_write(exc)  # it answered: a slot refuses writes, not down
                if self.observe_answer is not None:
                    self.observe_answer(refused)
                if isinstance(exc, ResponseError):  # an error reply: the script never ran
                    note_not_run()
                else:
                    note_outage()
                if wrong_master(exc):
                    await self._rediscover_soon()
                raise (WritesRefused if refused else StoreUnavailable)(
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
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

    def _node_of(self, key: str) -> Any:
        """The Cluster node holding key's slot (None for a plain or Sentinel client)."""
        return self.r.get_node_from_key(key) if is_cluster(self.r) else None

    def _wait(self, pipe: Pipeline, node: Any) -> None:
        """Queue WAIT for replica_acks replicas after the pipeline's write."""
        wait = ("WAIT", self.replica_acks, self.replica_timeout_ms)
        if node is not None:  # WAIT counts this connection's writes: same node
            pipe.execute_command(*wait, target_nodes=node)
        else:
            pipe.execute_command(*wait)

    async def _script_then_wait(self, keys: list[str], args: list[Any],
                                since: float | None) -> Any:
        """The write script and WAIT in one pipeline on one connection (one round trip);
        raise Unconfirmed when fewer than replica_acks replicas confirm in time. `since`: when
        the write began (wall clock), for the fence (WRITE_FENCE_MS)."""
        body = fenced = False
        while True:
            node = self._node_of(keys[0])
            pipe = self.r.pipeline(transaction=False)
            run = ("EVAL", self._lua) if body else ("EVALSHA", self._apply.sha)
            pipe.execute_command(*run, len(keys), *keys, *args, *_fence_args(since))
            self._wait(pipe, node)
            res, acked = await self.call(pipe.execute(raise_on_error=False))
            if isinstance(res, NoScriptError) and not body:
                body = True  # the body itself: see _evalsha
                continue
            if _fenced(res) and not fenced:  # it ran nowhere: once more, to today's master
                fenced = True
                await rediscover(self.r)
                if self._auto_acks:  # the new master may have fewer replicas in sync
                    await self._refresh_acks()
                since = time.time() + self._clock_offset if since is not None else None
                continue
            if isinstance(res, Exception):
                await self.call(_raise(res))
            if isinstance(acked, Exception) or int(acked) < self.replica_acks or (
                    node is not None and self.r.get_node_from_key(keys[0]) != node):
                await rediscover(self.r)
                raise Unconfirmed(f"{acked} of {self.replica_acks} replicas confirmed")
            return res

    async def replicated(self, key: str) -> bool:
        """True once every write so far in key's hash slot has reached replica_acks replicas
        (True at once without replicas). A small write of ours in that slot, then WAIT on the
        same connection: replication is in order, so it covers every earlier write there."""
        await self._acks_fresh()  # a new master may have fewer replicas: delivery must
        # not wait for the next report to learn it
        if not self.replica_acks:
            return True
        node = self._node_of(key)
        pipe = self.r.pipeline(transaction=False)
        pipe.set(key + ":confirm", "1", px=60_000)
        self._wait(pipe, node)
        res, acked = await self.call(pipe.execute(raise_on_error=False))
        if isinstance(res, Exception):
            await self.call(_raise(res))
        if isinstance(acked, Exception) or int(acked) < self.replica_acks:
            await rediscover(self.r)
            return False
        return True

    async def _script(self, keys: list[str], args: list[Any], since: float | None) -> Any:
        """EVALSHA the write script straight through the client (redis-py's Script wrapper
        and its argument checks cost a tenth of a report's Python); its body where the
        server lacks it (a restart, another server)."""
        return await self.call(_evalsha(self.r, self._apply.sha, self._lua, keys,
                                        [*args, *_fence_args(since)]))

    async def apply(self, prefix: str, ops: list[Op], dedupe: str = "") -> Applied:
        """Run one command's ops atomically in one round trip; raise Refused on a guard.
        An outage during the call leaves it unknown whether it ran (see WriteAttempts).

        With replica_acks, the same round trip WAITs for replicas (Unconfirmed if they
        don't confirm in time)."""
        # the fence counts from here, on the server's clock: a stuck INFO below counts too
        since = await self._stamp()
        keys = script_keys(prefix, ops, dedupe)
        args = [dedupe, self.dedupe_ttl, encode(ops)]
        await self._acks_fresh()
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


    async def run_with_hints(self, pipe: Any, hints: int) -> list[Any]:
        """Run a pipeline in one round trip; its first `hints` commands may fail (logged,
        not raised), any other failure raises (StoreUnavailable when the store is away)."""
        res = await self.call(pipe.execute(raise_on_error=False))
        for i, r in enumerate(res):
            if not isinstance(r, Exception):
                continue
            if i < hints and unavailable(r):
                log.info("a hint was not written (its slot is away): %s",
                         str(r).splitlines()[0])
                continue
            if unavailable(r):
                raise (WritesRefused if refused_write(r) else StoreUnavailable)(
                    str(r).splitlines()[0])
            raise r
        return res


class ClubGateway(Gateway):
    """A gateway seen from one club (made by `Gateway.for_club`): its own key space, all else
    the deployment gateway's. State is read from and written to that gateway, so a reconnect,
    a failover or a replica count seen through any club is seen through every club."""

    def __init__(self, base: Gateway, space: KeySpace) -> None:  # no super(): a view
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "space", space)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._base, name, value)

    def for_club(self, club: str) -> ClubGateway:
        """Another club's view of the same deployment gateway."""
        return self._base.for_club(club)

    async def close(self) -> None:
        """Nothing: the deployment's gateway owns the connections every club shares."""


_FENCED = object()  # run_fenced: the script was refused by the write fence (nothing written)


async def _unless_fenced(run: Awaitable[Any], last: bool) -> Any:
    """A fenced script's answer, or _FENCED when the fence refused it (not on the last try:
    then the refusal is raised, as an outage)."""
    try:
        return await run
    except ResponseError as exc:
        if _fenced(exc) and not last:
            return _FENCED
        raise


async def _evalsha(r: Any, sha: str, body: str, keys: list[str], args: list[Any]) -> Any:
    """Run a script by its sha; where the server lacks it (a restart, a promoted replica),
    EVAL its body. Not SCRIPT LOAD then EVALSHA: across a failover the two can reach two
    servers, and the second answers NOSCRIPT again."""
    try:
        return await r.execute_command("EVALSHA", sha, len(keys), *keys, *args)
    except NoScriptError:
        return await r.execute_command("EVAL", body, len(keys), *keys, *args)


async def _raise(exc: Exception) -> Any:
    raise exc


def _fence_args(since: float | None) -> tuple[Any, ...]:
    """apply.lua's ARGV[4], ARGV[5]: when the write was sent (ms, server clock) and the
    longest it may wait to run; ("", 0) for no fence (a lone server has no failover)."""
    return ("", 0) if since is None else (int(since * 1000), WRITE_FENCE_MS)


def _fenced(res: object) -> bool:
    """Whether apply.lua refused a write that waited too long to run (see WRITE_FENCE_MS)."""
    return isinstance(res, ResponseError) and str(res).startswith("FENCED")
