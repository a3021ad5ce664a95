"""Telegram's bot-wide 30 messages a second, kept by replicas sharing rate windows in a Redis
Cluster while the master of those windows is paused (SIGSTOP, as in bench/saturday.py
--fault pause), without the bot around them: the limiter and pacer alone, sending flat out.

Three replicas (each its own limiter, Redis client and pacer, in one process) send to
thousands of private chats through a 3-master Cluster with a replica per master and
`min-replicas-to-write 1`. Each send takes its slot, waits "on the way" (0-30 ms, or 3 s for
one send in ten in the `held` case: a slow store write between the slot and the call), then
arrives, and is answered 20 ms later. Arrivals are counted as Telegram does: a send is over
the limit when 30 others arrived within the 0.95 s before it (the fake Bot API's window).

Cases, each on a fresh set of windows: `baseline` (no fault), `held` (no fault, 1 send in
10 held 3 s) and `pause` (the windows' master paused for PAUSE_S, PAUSE_AT into the run).
Printed per case: sends a second, `over_limit_<case>` (goal 0) and the longest gap between
arrivals; and the pause's rate against the baseline's.

Usage: python bench/shared_limits.py [--seconds 40] [--pause-at 8] [--pause-s 8] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bot.delivery.pacing import Pacer  # noqa: E402
from bot.delivery.ratelimit import PACED_LIMITS, POST, SharedRateLimiter  # noqa: E402
from bot.store.gateway import Gateway  # noqa: E402
from bot.store.windows import Windows  # noqa: E402
from rigs.topology import Topology, start_cluster  # noqa: E402

REPLICAS = 3
SENDERS = 12  # concurrent sends per replica
WINDOW_S, LIMIT = 0.95, 30  # the fake Bot API's bot-wide window


async def run(topo: Topology, seconds: float, held: float,
              pause: tuple[float, float] | None) -> list[float]:
    """Send flat out for `seconds`; the arrival times."""
    gws = [Gateway.from_url(topo.url) for _ in range(REPLICAS)]
    for g in gws:
        await g.configure_replication()
    pacers = [Pacer(SharedRateLimiter(Windows(g), PACED_LIMITS)) for g in gws]
    windows = pacers[0].limiter.windows
    master = topo.master_of(windows.key("telegram", "bot"))
    arrivals: list[float] = []
    chats = iter(range(10**9))
    stop = time.time() + seconds

    async def sender(pacer: Pacer) -> None:
        while time.time() < stop:
            chat = str(300000000 + next(chats) % 5000)
            await pacer.admit("telegram", chat, None, POST)
            ticket = pacer.ticket(POST, chat)
            await asyncio.sleep(3.0 if random.random() < held else random.uniform(0, 0.03))
            await pacer.slot(ticket, "telegram", chat, POST)
            arrivals.append(time.time())
            await asyncio.sleep(0.02)  # the platform's answer
            await pacer.heard("telegram", chat)

    async def fault(at: float, length: float) -> None:
        await asyncio.sleep(at)
        os.kill(topo.pid(master), signal.SIGSTOP)
        try:
            await asyncio.sleep(length)
        finally:
            os.kill(topo.pid(master), signal.SIGCONT)

    tasks = [sender(p) for p in pacers for _ in range(SENDERS)]
    if pause is not None:
        tasks.append(fault(*pause))
    await asyncio.gather(*tasks)
    for g in gws:
        await g.close()
    return sorted(arrivals)


def figures(case: str, arrivals: list[float], seconds: float) -> float:
    """Print a case's figures; its sends a second."""
    over = sum(1 for i, t in enumerate(arrivals)
               if i >= LIMIT and t - arrivals[i - LIMIT] < WINDOW_S)
    gap = max((b - a for a, b in zip(arrivals, arrivals[1:], strict=False)), default=0.0)
    rate = len(arrivals) / seconds
    print(f"sends_per_s_{case}: {rate:.1f}")
    print(f"over_limit_{case}: {over} (goal 0: a send with {LIMIT} others in the "
          f"{WINDOW_S:g} s before it)")
    print(f"longest_gap_s_{case}: {gap:.2f}")
    return rate


SMOKE = {"seconds": 12.0, "pause_at": 3.0, "pause_s": 4.0}


async def main(a: argparse.Namespace) -> None:
    seconds = a.seconds
    pause = (a.pause_at, a.pause_s)
    with tempfile.TemporaryDirectory(prefix="shared-limits-") as tmp:
        topo = start_cluster(Path(tmp) / "cluster", 3, 1)
        try:
            for port in list(topo.procs):
                redis.Redis(port=port).config_set("min-replicas-to-write", 1)
            rates = {}
            for case, held, fault in (("baseline", 0.0, None), ("held", 0.1, None),
                                      ("pause", 0.0, pause)):
                for port in list(topo.procs):  # fresh windows (replicas follow)
                    try:
                        redis.Redis(port=port).flushall()
                    except redis.ResponseError:
                        pass  # a replica: read-only
                rates[case] = figures(case, await run(topo, seconds, held, fault), seconds)
            print(f"pause: the windows' master stopped {pause[1]:g} s, {pause[0]:g} s in")
            print(f"ratio_sends_pause_vs_baseline: {rates['pause'] / rates['baseline']:.2f}")
        finally:
            topo.stop()


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--seconds", type=float, default=40.0, help="each case's length")
    ap.add_argument("--pause-at", type=float, default=8.0, help="seconds into the pause case")
    ap.add_argument("--pause-s", type=float, default=8.0, help="how long the master stops")
    asyncio.run(main(cli.parse(ap, SMOKE)))
