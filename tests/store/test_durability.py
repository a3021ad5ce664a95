"""The store says, as typed facts, whether a crash of its Redis can lose a write it has
answered: append-only file, fsync policy, and the replicas each write WAITs for."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from bot.embedded_redis.supervisor import EmbeddedRedis
from bot.store import Durability, Store
from rigs.net import free_port
from rigs.topology import Topology


async def _facts(url: str, acks: int | None = None) -> Durability:
    store = Store.from_url(url)
    try:
        await store.gateway.configure_replication(acks)
        return await store.gateway.durability()
    finally:
        await store.close()


async def test_a_lone_server_with_appendfsync_always_is_durable(server):
    d = await _facts(server.url)
    assert (d.appendonly, d.appendfsync, d.replicas, d.waited_for) == (True, "always", 0, 0)
    assert d.durable is True


async def test_appendfsync_everysec_or_no_append_only_file_is_not(tmp_path: Path):
    with EmbeddedRedis(tmp_path / "a", appendfsync="everysec") as srv:
        d = await _facts(srv.url)
        assert d.appendfsync == "everysec" and d.durable is False
    with EmbeddedRedis(tmp_path / "b", persistent=False) as srv:
        d = await _facts(srv.url)
        assert d.appendonly is False and d.durable is False


async def test_a_managed_redis_that_refuses_config_cannot_be_checked(server):
    admin = redis.Redis.from_url(server.url)
    admin.execute_command("ACL", "SETUSER", "app", "on", ">apppw", "~*", "&*", "+@all",
                          "-config")
    admin.close()
    port = server.url.rsplit(":", 1)[1]
    d = await _facts(f"redis://app:apppw@127.0.0.1:{port}")
    assert d.config_refused and d.appendonly is True and d.appendfsync is None
    assert d.durable is None  # not known: neither safe nor proven unsafe


async def test_a_replica_that_wait_confirms_makes_any_server_durable(tmp_path: Path):
    topo = Topology(tmp_path)
    try:
        master, replica = free_port(), free_port()
        topo.spawn(master, "repl-diskless-sync-delay", "0")  # appendonly no
        topo.spawn(replica, "replicaof", f"127.0.0.1 {master}")
        deadline = time.monotonic() + 20
        while redis.Redis(port=master).info("replication").get("slave0", {}).get(
                "state") != "online" and time.monotonic() < deadline:
            time.sleep(0.05)  # the replica's first sync; not a timing assertion
        url = f"redis://127.0.0.1:{master}"
        d = await _facts(url)  # auto: every replica in sync is waited for
        assert (d.appendonly, d.replicas, d.waited_for) == (False, 1, 1) and d.durable
        d = await _facts(url, acks=0)  # MATCHDAY_REPLICA_ACKS=0: nobody waits for it
        assert d.replicas == 1 and d.durable is False
    finally:
        topo.stop()
