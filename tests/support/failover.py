"""A sentinel failover on demand, for the HA tests that pause the old master meanwhile."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import redis

from rigs.topology import Topology


def _master(sentinel_port: int) -> int:
    addr = redis.Redis(port=sentinel_port).sentinel_get_master_addr_by_name("matchday")
    return int(addr[1]) if addr else 0


async def _until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def promote_a_replica(topo: Topology, old: int) -> int:
    """Have the sentinels promote a replica of `old` (the master's port); the new master's
    port, once the other replica follows it."""
    redis.Redis(port=topo.sentinel_ports[0]).execute_command("SENTINEL", "FAILOVER", "matchday")
    await _until(lambda: _master(topo.sentinel_ports[0]) != old, "a new master")
    new = _master(topo.sentinel_ports[0])
    await _until(lambda: redis.Redis(port=new).info("replication").get(
        "connected_slaves") == 1, "the new master with the other replica")
    return new
