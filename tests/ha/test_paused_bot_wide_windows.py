"""Every chat's sends share the bot-wide rate windows (Telegram's 30 a second per bot). On a
Cluster they are kept in two copies on slots of different masters, so with the master of one
paused (SIGSTOP: a frozen VM) sends go on, still counted where every replica sees them (#34).
Kept in one slot, every send of every chat waited out the client's timeouts (two tries of
2 s) while that master was paused: bench/saturday.py --fault pause sent nothing to Telegram
for 4-5 s, and the cards logged just before the fault were the night's latest."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from bot.delivery.ratelimit import Limit, SharedRateLimiter
from bot.store.base import KeySpace, tag_prefix
from bot.store.gateway import Gateway
from bot.store.windows import Windows
from rigs.topology import Topology, start_cluster
from tests.support.failover import until

BOT_WIDE = [("md:{rl:telegram}:bot:30/1", 30, 1.0)]
LIMITS = {"telegram": (Limit(1, 1.0, "chat", from_answer=True),
                       Limit(30, 1.0, "platform", from_answer=True))}


def _seen_failing(topo: Topology, paused: int) -> bool:
    """Whether another master sees the paused one as failing (PFAIL or FAIL)."""
    other = next(p for p in topo.procs if p != paused and p not in topo.replica_ports)
    text = redis.Redis(port=other, decode_responses=True).execute_command("CLUSTER", "NODES")
    text = text if isinstance(text, str) else "\n".join(map(str, text))
    return any(f":{paused}@" in line and "fail" in line.split()[2] for line in text.splitlines())


@pytest.fixture
async def cluster(tmp_path: Path):  # type: ignore[no-untyped-def]
    topo = start_cluster(tmp_path / "cluster", 3, 1)
    gateways: list[Gateway] = []

    async def gateway() -> Gateway:
        g = Gateway.from_url(topo.url)
        await g.configure_replication()
        gateways.append(g)
        return g

    try:
        yield topo, gateway
    finally:
        for g in gateways:
            await g.close()
        topo.stop()


async def test_the_copies_are_on_different_masters(cluster) -> None:  # type: ignore[no-untyped-def]
    topo, gateway = cluster
    windows = Windows(await gateway())
    for tag in ("rl:telegram", "rl:slack", "club007/rl:telegram"):
        first, second = windows.copies_of(tag)
        assert topo.master_of(f"md:{{{first}}}:bot") != topo.master_of(f"md:{{{second}}}:bot")
    assert windows.copies_of("chat:telegram:-100123") == ["chat:telegram:-100123"]
    club = Windows((await gateway()).for_club("club007"))
    assert club.key("telegram", "bot:30/1").startswith(tag_prefix("rl:telegram",
                                                                  KeySpace("club007")))


async def test_sends_go_on_counted_while_one_copys_master_is_paused(cluster) -> None:  # type: ignore[no-untyped-def]
    """Two replicas send to 20 chats on healthy masters: every send goes, counted in the
    copy that answers, before the other masters have even noticed the pause."""
    topo, gateway = cluster
    replicas = [SharedRateLimiter(Windows(await gateway()), LIMITS) for _ in range(2)]
    windows = replicas[0].windows
    paused = topo.master_of(BOT_WIDE[0][0])
    chats = [c for c in (str(300000000 + i) for i in range(200))
             if topo.master_of(windows.key("telegram", f"chat:{c}:1/1")) != paused][:20]

    async def send(limiter: SharedRateLimiter, chat: str) -> None:
        await limiter.acquire("telegram", chat)
        await limiter.answered("telegram", chat)

    os.kill(topo.pid(paused), signal.SIGSTOP)
    try:
        sends = asyncio.gather(*(send(replicas[i % 2], c) for i, c in enumerate(chats)))
        await until(lambda: sends.done() or _seen_failing(topo, paused),
                    "the sends, or the pause noticed")
        assert sends.done(), "sends waited for the paused master of the bot-wide windows"
        await sends
        assert not replicas[0].away and not replicas[1].away  # nothing paced alone
        used = await replicas[1].windows.used(BOT_WIDE, time.time())
        assert used == [20]  # the copy that answered counted both replicas' sends
    finally:
        os.kill(topo.pid(paused), signal.SIGCONT)


async def test_the_limit_holds_across_replicas_and_copies(cluster) -> None:  # type: ignore[no-untyped-def]
    """With one copy's master paused, two replicas together get exactly the bot-wide 30 in
    a second; a replica asking both copies afterwards is refused while either is full, and
    its slot in the other copy is given back."""
    topo, gateway = cluster
    a, b = Windows(await gateway()), Windows(await gateway())
    paused = topo.master_of(BOT_WIDE[0][0])
    now = time.time()
    os.kill(topo.pid(paused), signal.SIGSTOP)
    try:
        waits = [await (a if i % 2 else b).take(BOT_WIDE, now) for i in range(40)]
        assert sum(1 for w in waits if w <= 0) == 30
        assert all(w > 0 for w in waits[30:])
        assert not _seen_failing(topo, paused)  # all of it while the master was paused
    finally:
        os.kill(topo.pid(paused), signal.SIGCONT)
    # the master is back: a new replica asks both copies, the one paused all but empty
    fresh = Windows(await gateway())
    await until(lambda: _answers(topo, BOT_WIDE[0][0]), "the paused copy to answer again")
    before = await _count(fresh, BOT_WIDE[0][0], now + 0.5)
    assert before <= 2  # at most the take each replica had under way when it paused
    assert await fresh.take(BOT_WIDE, now + 0.5) > 0  # the full copy says wait
    assert await _count(fresh, BOT_WIDE[0][0], now + 0.5) == before  # given back there


def _answers(topo: Topology, key: str) -> bool:
    try:
        return bool(redis.Redis(port=topo.master_of(key), socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


async def _count(windows: Windows, key: str, now: float) -> int:
    """What the first copy of a bot-wide window holds (the one that was paused)."""
    return int(await windows.gateway.call(
        lambda r: r.zcount(key, f"({int((now - 1) * 1000)}", "+inf")))
