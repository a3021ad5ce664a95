"""The shared rate windows with the slot of the bot-wide ones away, on a real 3-master Redis
Cluster (#34, bench/saturday.py --fault pause / kill):

- the slot is asked by one send at a time while away, not by every chat's send: with its
  master paused each ask waits out a timeout, and Telegram sent nothing for 3-5 s while
  every chat's first send waited on it in turn;
- coming back, a replica keeps to its local share of the bot-wide rate for a while beside
  the shared windows: the other replicas' latest local sends are not in the windows, and
  taking the whole room at once beside them broke Telegram's 30/s (1-6 x 429)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from bot.delivery.ratelimit import PACED_LIMITS, SharedRateLimiter, shared_out
from bot.store.gateway import Gateway
from bot.store.windows import Windows
from rigs.topology import Topology, start_cluster
from tests.support.ops_slot import refuse_writes

RETRY_S = 5.0


@dataclass
class Clock:
    """Injected clocks: wall time and monotonic time move together, only when slept."""

    t: float = 1_800_000_000.0

    def wall(self) -> float:
        """Wall time (the shared windows' stamps)."""
        return self.t

    def mono(self) -> float:
        """Monotonic time (the local pacing, the retry deadlines)."""
        return self.t - 1_799_000_000.0

    async def sleep(self, s: float) -> None:
        """A sleep that moves both clocks on at once."""
        self.t += max(s, 0.0)


@dataclass
class Rig:
    topo: Topology
    windows: Windows
    limiter: SharedRateLimiter
    clock: Clock
    bot_master: redis.Redis  # the master of the bot-wide windows' slot
    chats: list[str]  # private chats whose own windows are on other masters


def _attempts(master: redis.Redis) -> int:
    """Writes the master was asked for (run, failing or refused), from its command stats."""
    stats = master.info("commandstats")
    return sum(int(v.get("calls", 0)) + int(v.get("rejected_calls", 0))
               for name, v in stats.items()
               if name.split("_", 1)[1] in ("evalsha", "eval", "exec", "zadd"))


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    topo = start_cluster(tmp_path / "cluster", 3, 0)
    gateway = Gateway.from_url(topo.url)
    clock = Clock()
    windows = Windows(gateway)
    limiter = SharedRateLimiter(windows, PACED_LIMITS, clock=clock.wall, sleep=clock.sleep,
                                monotonic=clock.mono, retry_s=RETRY_S)
    bot_port = topo.master_of(windows.key("telegram", "bot"))
    chats = [c for c in (str(700000000 + k) for k in range(200))
             if topo.master_of(limiter._scopes("telegram", c)[0][0]) != bot_port][:40]
    try:
        await limiter.acquire("telegram", chats[-1])  # connected, the replica counted
        yield Rig(topo, windows, limiter, clock, redis.Redis(port=bot_port), chats)
    finally:
        await gateway.close()
        topo.stop()


async def test_a_write_dead_bot_wide_slot_is_asked_by_one_send_at_a_time(rig: Rig) -> None:
    refuse_writes(rig.bot_master, rig.windows.key("telegram", "bot"))
    before = _attempts(rig.bot_master)
    for chat in rig.chats[:20]:  # twenty chats' cards within the retry interval
        await rig.limiter.acquire("telegram", chat)
        await rig.limiter.answered("telegram", chat)
    assert _attempts(rig.bot_master) - before == 1  # the first found it away, not twenty
    rig.clock.t += RETRY_S
    for chat in rig.chats[20:30]:
        await rig.limiter.acquire("telegram", chat)
    assert _attempts(rig.bot_master) - before == 2  # looked again once


async def test_a_replica_coming_back_keeps_to_its_share_until_the_others_are_back(
        rig: Rig) -> None:
    share = shared_out(PACED_LIMITS["telegram"], rig.limiter.replicas["telegram"])[2].count
    refuse_writes(rig.bot_master, rig.windows.key("telegram", "bot"))
    await rig.limiter.acquire("telegram", rig.chats[0])  # paced here from now on
    rig.bot_master.config_set("min-replicas-to-write", 0)  # the slot takes writes again
    rig.clock.t += RETRY_S

    async def sent_in_one_second(chats: list[str]) -> int:
        start, n = rig.clock.t, 0
        for chat in chats:
            await rig.limiter.acquire("telegram", chat)
            await rig.limiter.answered("telegram", chat)
            if rig.clock.t - start < 1.0:
                n += 1
        return n

    # back in the shared windows (they count it), yet at its share of the rate ...
    start = rig.clock.t
    assert await sent_in_one_second(rig.chats[1:1 + share]) == share
    bot30 = [sc for sc in rig.limiter._scopes("telegram", rig.chats[0])
             if sc[0].endswith(":bot:30/1")]
    assert rig.clock.t == start and await rig.windows.used(bot30, start) == [share]
    assert await sent_in_one_second(rig.chats[1 + share:31]) == 0
    # ... until every other replica has asked again (within RETRY_S) and a second has gone
    rig.clock.t += RETRY_S + 1.0
    assert await sent_in_one_second(rig.chats[:30]) == 30
