"""A Telegram group's own rate windows (20 a minute, and the bot's smoothing of 3 in any
9 s) live in the group's slot. With that slot's master paused, its sends are counted under
the platform's tag instead (#34); those windows must start from the sends already made, and
the group's own windows must learn of the sends made meanwhile once they answer again.
Started afresh, either place let a group get 21 messages in a minute: bench/saturday.py
--fault pause had its flashpoint control group refused with a 429 (20 in 57 s, then one more)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import redis

from bot.delivery.ratelimit import SharedRateLimiter
from bot.store.copies import Copies
from bot.store.gateway import Gateway
from bot.store.windows import Windows
from rigs.topology import Topology, start_cluster
from tests.support.failover import until


class Clock:
    """Virtual time for the limiter: waiting moves it on, nothing sleeps."""

    def __init__(self) -> None:
        self.t = time.time()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0.0)


def _most_within(times: list[float], span: float) -> int:
    """The most sends any `span` seconds (closed at its end) held."""
    return max(sum(1 for u in times if t - span < u <= t) for t in times)


def _answers(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


def _standby_of(topo: Topology, master: int) -> int:
    """The port of the replica of a master."""
    return next(p for p in topo.replica_ports
                if redis.Redis(port=p).info("replication").get("master_port") == master)


@pytest.mark.long  # a Cluster and a paused master: started first
async def test_a_groups_minute_holds_across_its_slot_going_away_and_back(tmp_path: Path) -> None:
    topo = start_cluster(tmp_path / "cluster", 3, 1)
    gateway = Gateway.from_url(topo.url)
    try:
        await gateway.configure_replication()
        clock = Clock()
        windows = Windows(gateway)
        windows.copies = Copies(clock=clock.now)  # its retries on the same virtual time
        limiter = SharedRateLimiter(windows, clock=clock.now, monotonic=clock.now,
                                    sleep=clock.sleep)
        bot_wide = {topo.master_of(f"md:{{{tag}}}:x") for tag in windows.copies_of("rl:telegram")}
        group = next(g for g in (str(-1002000000000 - i) for i in range(500))
                     if topo.master_of(windows.key("telegram", f"group:{g}:20/60"))
                     not in bot_wide)
        home = topo.master_of(windows.key("telegram", f"group:{group}:20/60"))
        redis.Redis(port=_standby_of(topo, home)).config_set("cluster-replica-no-failover",
                                                             "yes")
        sent: list[float] = []

        async def send(n: int) -> None:
            for _ in range(n):
                await limiter.acquire("telegram", group)
                sent.append(clock.t)
                await limiter.answered("telegram", group)

        await send(12)  # counted in the group's own slot
        os.kill(topo.pid(home), signal.SIGSTOP)
        try:
            await send(12)  # its slot paused: counted under the platform's tag
            assert limiter.away, "the group's own windows were asked throughout"
        finally:
            os.kill(topo.pid(home), signal.SIGCONT)
        await until(lambda: _answers(home), "the group's master to answer again")
        while limiter.away:  # asked again as sends come (every retry_s of virtual time)
            await send(1)
        await send(12)  # its own windows again
        assert len(sent) >= 36
        assert _most_within(sent, 60.0) <= 20, "Telegram's 20 a minute per group broken"
        assert _most_within(sent, 9.0) <= 3, "the bot's 3 in any 9 s per group broken"
    finally:
        await gateway.close()
        topo.stop()
