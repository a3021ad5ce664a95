"""Redis URLs to clients: plain (`redis://`, `rediss://`, `unix://`), Sentinel and Cluster.

`redis+sentinel://[user:pass@]host:port[,host:port…]/<master-name>[/db]` goes through
redis-py's Sentinel client (`master_for`, which asks the sentinels again after a failover);
`redis+cluster://[user:pass@]host:port[,host:port…]` through redis-py's RedisCluster.
Also the one place that says which Redis errors mean "the store is not answering".
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import (
    MasterNotFoundError,
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
)
from redis.backoff import NoBackoff
from redis.exceptions import (
    ClusterDownError,
    ClusterError,
    MasterDownError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.store.base import note_sent, writing

SENTINEL = "redis+sentinel://"
CLUSTER = "redis+cluster://"
PLAIN = ("redis://", "rediss://", "unix://")
SENTINEL_USAGE = "redis+sentinel://host:port[,host:port…]/<master-name>[/db]"
CLUSTER_USAGE = "redis+cluster://host:port[,host:port…]"

# Failover and resharding, as redis-py reports them (MasterNotFoundError is a
# ConnectionError; MovedError/AskError storms end in ClusterError or RedisClusterException).
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    RedisConnectionError, RedisTimeoutError, ConnectionError, OSError, ReadOnlyError,
    MasterDownError, ClusterDownError, ClusterError, TryAgainError, RedisClusterException,
)
# The same, when a server error arrives as a plain ResponseError (e.g. inside a script).
_UNAVAILABLE_WORDS = ("LOADING", "MASTERDOWN", "READONLY", "NOREPLICAS", "CLUSTERDOWN",
                      "TRYAGAIN", "MOVED", "ASK ", "FENCED")


def unavailable(exc: BaseException) -> bool:
    """Whether an error means 'the store is not answering', not a bug: a connection or
    failover error, or any other error raised inside the client's own code (a failover
    closing a connection under a command gives e.g. AttributeError '... writelines')."""
    if isinstance(exc, _UNAVAILABLE):
        return True
    if isinstance(exc, RedisError):  # a reply from the server, or our bad input (DataError)
        # a Cluster pipeline wraps a node's error reply: "Command # 1 (…) of pipeline caused
        # error: ('NOREPLICAS …',)"
        said = str(exc).partition("of pipeline caused error: ")[2] or str(exc)
        return said.lstrip("(\"'-").startswith(_UNAVAILABLE_WORDS)
    return isinstance(exc, Exception) and _raised_in_client(exc)


def refused_write(exc: BaseException) -> bool:
    """Whether an error is a master refusing a write while it answers (NOREPLICAS: no
    replica left to confirm it), as opposed to a store that is not answering."""
    if not isinstance(exc, RedisError):
        return False
    said = str(exc).partition("of pipeline caused error: ")[2] or str(exc)
    return said.lstrip("(\"'-").startswith("NOREPLICAS")


def _raised_in_client(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", "")).startswith("redis.")


def _reporting_sends(base: type[Any]) -> type[Any]:
    """`base` (a redis-py connection class) whose connections tell the current command when
    a write goes on the wire (note_sent), once the connection is up: a refused connection
    provably sent nothing ("NOT logged"). A subclass per base, not a mixin: redis-py builds
    connections from the one class the pool names."""

    class ReportsSends(base):  # type: ignore[misc, valid-type]
        reports_sends = True
        _handshake = False  # sending AUTH/HELLO/SELECT inside connect(): not the write

        async def on_connect_check_health(self, check_health: bool = True) -> None:
            self._handshake = True
            try:
                await super().on_connect_check_health(check_health)
            finally:
                self._handshake = False

        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            if self._handshake:
                await super().send_packed_command(command, check_health)
                return
            if writing() and self.is_connected:
                # A pooled connection the server closed (it stopped) or left dirty: open a
                # new one, so a server that is gone is a refused connection, not a lost
                # reply. Two loop turns first, so a close that has arrived is read (the first
                # polls the socket, the second runs its read callback before this task).
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                try:
                    stale = await self.can_read()
                except (RedisConnectionError, OSError):
                    stale = True
                if stale:
                    await self.disconnect()
            if not self.is_connected:
                await self.connect()
            note_sent()
            await super().send_packed_command(command, check_health)

    ReportsSends.__name__ = ReportsSends.__qualname__ = f"Reporting{base.__name__}"
    return ReportsSends


_Plain = _reporting_sends(Connection)
_Tls = _reporting_sends(SSLConnection)
_Unix = _reporting_sends(UnixDomainSocketConnection)
_Sentinel = _reporting_sends(SentinelManagedConnection)


def reports_sends(client: Any) -> bool:
    """Whether a client's connections report each send (plain and Sentinel; not Cluster,
    whose nodes redis-py builds itself)."""
    pool = getattr(client, "connection_pool", None)
    return isinstance(pool, aioredis.ConnectionPool) and \
        getattr(pool.connection_class, "reports_sends", False)


@dataclass(frozen=True)
class Target:
    """A parsed REDIS_URL."""

    kind: str  # "plain", "sentinel" or "cluster"
    url: str  # the plain URL (for "plain") or the original
    nodes: tuple[tuple[str, int], ...] = ()
    master: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None


def _nodes(text: str, usage: str) -> tuple[tuple[str, int], ...]:
    out = []
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bad node {part.strip()!r}: expected {usage}")
        out.append((host.strip("[]"), int(port)))
    return tuple(out)


def parse_url(url: str) -> Target:
    """Parse a REDIS_URL; ValueError with one line when it is malformed."""
    url = url.strip()
    if url.startswith(PLAIN):
        from redis.connection import parse_url as redis_parse

        try:
            redis_parse(url)
        except ValueError as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        return Target("plain", url)
    for scheme, kind, usage in ((SENTINEL, "sentinel", SENTINEL_USAGE),
                                (CLUSTER, "cluster", CLUSTER_USAGE)):
        if not url.startswith(scheme):
            continue
        rest = url[len(scheme):].split("?", 1)[0]
        auth, _, rest = rest.rpartition("@")
        user, _, password = auth.partition(":") if auth else ("", "", "")
        hosts, _, path = rest.partition("/")
        if not hosts:
            raise ValueError(f"no host:port: expected {usage}")
        parts = [p for p in path.split("/") if p]
        db = 0
        if kind == "sentinel":
            if not parts:
                raise ValueError(f"no master name: expected {usage}")
            if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
                raise ValueError(f"bad path /{path}: expected {usage}")
            db = int(parts[1]) if len(parts) == 2 else 0
        elif parts:
            raise ValueError(f"a cluster has no database number or path: expected {usage}")
        return Target(kind, url, _nodes(hosts, usage), parts[0] if parts else "", db,
                      unquote(user) or None, unquote(password) or None)
    raise ValueError("must start with redis://, rediss://, unix://, redis+sentinel:// "
                     "or redis+cluster://")


# Short timeouts so an outage answers fast; one immediate retry, no backoff: a retried
# write is safe because every write carries its dedupe key. A command to a paused master
# (SIGSTOP, a frozen VM) waits out both tries before the client looks for the promoted
# replica: at 5 s a try that was 10 s, past a delivery lease's grace (LEASE_GRACE_MS), so
# the holder lost its fixtures to whichever replica reached the new master first and the
# cards logged just before the pause waited 10 s (#34, bench/saturday.py --fault pause).
# Redis answers in milliseconds; 2 s still leaves a loaded host a wide margin.
_TIMEOUTS: dict[str, Any] = {"socket_connect_timeout": 2, "socket_timeout": 2}
# A cluster client's connections per node. redis-py's cluster default (100) is not the plain
# client's unbounded pool: a deployment of many clubs, each its own duties over the one
# client, ran past it at start-up and stopped (MaxConnectionsError, 40 clubs, #39).
CLUSTER_MAX_CONNECTIONS = 1000


def connect(url: str, *, blocking: bool = False) -> Any:
    """A lazily connecting async client for a REDIS_URL (Redis, or RedisCluster). With
    `blocking`, a separate client without a read timeout, for XREAD BLOCK waits."""
    t = parse_url(url)
    timeouts = {**_TIMEOUTS, "socket_timeout": None} if blocking else _TIMEOUTS
    if t.kind == "plain":
        kind = _Unix if url.startswith("unix://") else _Tls if url.startswith("rediss://") \
            else _Plain
        return aioredis.Redis.from_url(url, decode_responses=True, health_check_interval=15,
                                       retry=Retry(NoBackoff(), 1), connection_class=kind,
                                       **timeouts)
    auth = {"username": t.username, "password": t.password}
    if t.kind == "sentinel":
        sentinel = EpochSentinel(list(t.nodes), sentinel_kwargs=dict(_TIMEOUTS), **timeouts)
        return sentinel.master_for(t.master, decode_responses=True, db=t.db,
                                   retry=Retry(NoBackoff(), 1), health_check_interval=15,
                                   connection_class=_Sentinel, **auth)
    return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in t.nodes],
                        decode_responses=True, retry=Retry(NoBackoff(), 1),
                        max_connections=CLUSTER_MAX_CONNECTIONS, **auth, **timeouts)


class EpochSentinel(Sentinel):
    """redis-py's Sentinel client, except that the master is the one named by the newest
    configuration (highest config-epoch) among all sentinels that answer, not by the first
    sentinel that answers: right after a failover the others still name the old master for
    a second or two (they learn the new one from hello messages), and a resumed old master
    would take writes again."""

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        """(host, port) of the master the newest configuration names."""
        async def ask(sentinel: Any) -> tuple[int, tuple[str, int]] | None:
            try:
                state = (await sentinel.sentinel_masters()).get(service_name)
                # during a failover the leader's MASTERS still shows the old master while
                # GET-MASTER-ADDR-BY-NAME already names the promoted replica
                addr = await sentinel.sentinel_get_master_addr_by_name(service_name)
            except (RedisError, OSError):
                return None
            if not state or not addr or not self.check_master_state(state, service_name):
                return None
            host = addr[0].decode() if isinstance(addr[0], bytes) else str(addr[0])
            return _epoch(state), (host, int(addr[1]))

        answers = [a for a in await asyncio.gather(*(ask(s) for s in self.sentinels)) if a]
        if not answers:
            raise MasterNotFoundError(f"No master found for {service_name!r}")
        return max(answers, key=lambda a: a[0])[1]


def _epoch(state: dict[str, Any]) -> int:
    try:
        return int(state.get("config-epoch", 0))
    except (TypeError, ValueError):
        return 0


def is_cluster(client: Any) -> bool:
    """Whether a client is a RedisCluster (keys route by slot; WAIT goes to a node)."""
    return isinstance(client, RedisCluster)


def _online(info: dict[str, Any]) -> int:
    return sum(1 for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
               and v.get("state") == "online")


async def on_key_node(client: Any, key: str, *args: Any) -> Any:
    """Run a command on the server holding `key` (on a Cluster, the master of its slot, named
    here). redis-py finds the keys of a command whose keys move (XREAD, XREADGROUP) by asking
    the client's default node (COMMAND GETKEYS): with that master paused, every fixture's
    outbox read waited out its timeout, although its own master answered (#34)."""
    if is_cluster(client):
        # a client learns the slot map at its first command: asked for a node before that
        # (the live feed's own blocking client), it knew none, and never would
        await client.initialize()
        return await client.execute_command(*args, target_nodes=client.get_node_from_key(key))
    return await client.execute_command(*args)


async def replica_count(client: Any) -> int:
    """How many replicas are in sync with the master now (the fewest, for a cluster)."""
    if isinstance(client, RedisCluster):
        infos = await client.info("replication", target_nodes=RedisCluster.PRIMARIES)
        return min(_online(i) for i in infos.values())
    return _online(await client.info("replication"))


# Errors after which the master the pool talks to may no longer be the master.
_WRONG_MASTER_WORDS = ("READONLY", "NOREPLICAS", "MASTERDOWN", "FENCED")


def wrong_master(exc: BaseException) -> bool:
    """Whether an error suggests this connection's server is no longer the master (a
    demoted or isolated old master, or a connection that broke in a failover)."""
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OSError,
                        MasterDownError)):
        return True
    return isinstance(exc, RedisError) and str(exc).lstrip("-").startswith(_WRONG_MASTER_WORDS)


async def rediscover(client: Any) -> None:
    """Ask the sentinels which server is master now and drop every connection to any other
    (idle ones at once, busy ones when they are handed back), so none keeps writing to a
    demoted, paused-then-resumed or isolated old master: redis-py only asks again when it
    opens a connection, and keeps a pool's old connections."""
    pool = getattr(client, "connection_pool", None)
    if not isinstance(pool, SentinelConnectionPool):
        return
    try:
        master = await pool.get_master_address()
    except (RedisError, OSError):
        return
    stale = [c for c in list(pool._available_connections)
             if (getattr(c, "host", None), getattr(c, "port", None)) != master]
    for conn in list(pool._in_use_connections):
        if (getattr(conn, "host", None), getattr(conn, "port", None)) != master:
            conn.mark_for_reconnect()  # disconnected when released
    for conn in stale:
        try:
            await conn.disconnect()
        except (RedisError, OSError):
            pass


def sentinels_of(client: Any) -> list[Any]:
    """The Sentinel clients behind a Sentinel-managed client (none for other kinds)."""
    pool = getattr(client, "connection_pool", None)
    if not isinstance(pool, SentinelConnectionPool):
        return []
    return list(pool.sentinel_manager.sentinels)
