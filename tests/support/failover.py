"""A sentinel failover on demand, for the HA tests that pause the old master meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import redis
import redis.asyncio as aioredis

from rigs.topology import Topology


def _master(sentinel_port: int) -> int:
    addr = redis.Redis(port=sentinel_port).sentinel_get_master_addr_by_name("matchday")
    return int(addr[1]) if addr else 0


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait (polling) until `check()` holds; fail naming `what` after `timeout` s."""
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def promote_a_replica(topo: Topology, old: int) -> int:
    """Have the sentinels promote a replica of `old` (the master's port); the new master's
    port, once the other replica follows it."""
    redis.Redis(port=topo.sentinel_ports[0]).execute_command("SENTINEL", "FAILOVER", "matchday")
    await until(lambda: _master(topo.sentinel_ports[0]) != old, "a new master")
    new = _master(topo.sentinel_ports[0])
    await until(lambda: redis.Redis(port=new).info("replication").get(
        "connected_slaves") == 1, "the new master with the other replica")
    return new



class KeyspaceWatch:
    """The keys one server writes, from its keyspace events (a pub/sub connection)."""

    def __init__(self, port: int) -> None:
        self.client = aioredis.Redis(port=port, decode_responses=True)
        self.pubsub = self.client.pubsub()

    async def start(self, pattern: str = "*") -> None:
        """Announce every write from now on; watch the keys matching `pattern`."""
        await self.client.config_set("notify-keyspace-events", "KA")
        await self.pubsub.psubscribe(f"__keyspace@0__:{pattern}", "marker")

    async def written(self) -> set[str]:
        """Keys written since `start`, up to a marker published now."""
        await self.client.publish("marker", "end")
        keys: set[str] = set()
        async with asyncio.timeout(10):
            async for msg in self.pubsub.listen():
                if msg["type"] != "pmessage":
                    continue
                if msg["channel"] == "marker":
                    break
                keys.add(msg["channel"].split(":", 1)[1])
        return keys

    async def close(self) -> None:
        """Close both connections (whatever state the server is in)."""
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()
