"""Failover benchmark: reports during a Sentinel failover, with and without WAIT.

A master, 2 replicas and 3 sentinels on loopback (down-after 1 s). Several tasks send
incident reports through the core as stewards do: each report carries its own dedupe key,
and a steward who is not told "Logged" sends the same report again (same key) until it is.
Mid-burst the master is paused (SIGSTOP 5 s, then SIGCONT) or, separately, killed (SIGKILL).
Afterwards every report answered "Logged INC-n" is checked against the new master.

Prints, per case: acked_lost_<case> (answered Logged, not in the log afterwards),
inc_reused_<case> (one INC number told to two different reports), not_logged_replies_<case>
(answers that were "NOT logged" or "HELD": honest refusals), seconds_unavailable_<case>
(the longest stretch with no report acknowledged). The baseline is the same run with
MATCHDAY_REPLICA_ACKS=0 (no WAIT), measured in the same process.

Usage: python bench/failover.py [--tasks 8] [--seconds 14] [--no-baseline]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import build_core  # noqa: E402
from bot.core.messages import Command  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from tests.ha.topology import start_sentinel  # noqa: E402

INC = re.compile(r"(?:Logged|Already logged as) INC-(\d+)")
# One incident type per steward: reports of different types never merge into one incident,
# whatever order concurrent reports reach the store in.
TYPES = ["missile", "pyro", "disorder", "antisocial", "alcohol", "criminal_damage",
         "persistent_standing", "entry"]


@dataclass
class Tally:
    """What the stewards were told."""

    acked: dict[str, int] = field(default_factory=dict)  # report id -> INC number told
    refusals: int = 0
    ack_times: list[float] = field(default_factory=list)
    reused: int = 0


async def steward(core, clock: VirtualClock, task: int, stop: asyncio.Event,
                  tally: Tally, told: dict[int, str]) -> None:
    """Send reports one after another; resend one until it is acknowledged."""
    i = 0
    while not stop.is_set():
        i += 1
        rid = f"r{task}x{i}"
        while True:
            clock.advance(timedelta(minutes=11))  # nor two of one steward's reports
            cmd = Command(platform="console", chat="steward", user="steward",
                          text=f"/incident {TYPES[task % len(TYPES)]} @seg_ne s3 {rid}",
                          dedupe_key=f"fo:{rid}")
            result = await core.handle(cmd)
            m = INC.search(result.reply.title or result.reply.text) if result else None
            if m and result.reply.ok:
                n = int(m.group(1))
                if told.setdefault(n, rid) != rid:
                    tally.reused += 1
                tally.acked[rid] = n
                tally.ack_times.append(time.monotonic())
                # a moment before the next report, so some pooled connections sit idle when
                # the master stops (those are the ones that would write to it afterwards)
                await asyncio.sleep(random.random() * 0.02)
                break
            tally.refusals += 1
            if stop.is_set() and i > 1:
                return  # the run is over; an unacknowledged report is not counted as acked
            await asyncio.sleep(0.2)  # the steward looks at the phone and taps again


async def run_case(case: str, acks: int | None, tasks: int, seconds: float) -> dict[str, float]:
    """One failover under a burst of reports; the four figures."""
    with tempfile.TemporaryDirectory(prefix=f"failover-{case}-") as tmp:
        topo = start_sentinel(Path(tmp) / "redis", replicas=2, down_after_ms=1000)
        try:
            settings = load_settings(REDIS_URL=topo.url, MATCHDAY_DATA_DIR=tmp)
            store = Store.from_url(topo.url)
            await store.configure_replication(acks, timeout_ms=500)
            clock = VirtualClock(datetime(2026, 12, 2, 18, 0, tzinfo=UTC))
            core = build_core(store, settings, clock, cache_ttl=5.0)
            fx = await ensure_sample_fixture(core)
            tally, told, stop = Tally(), {}, asyncio.Event()
            workers = [asyncio.create_task(steward(core, clock, t, stop, tally, told))
                       for t in range(tasks)]
            t0 = time.monotonic()
            await asyncio.sleep(2)
            master = topo.pid(topo.master_port)
            fault = time.monotonic()
            if case == "pause":
                os.kill(master, signal.SIGSTOP)
                await asyncio.sleep(5)
                os.kill(master, signal.SIGCONT)
            else:
                os.kill(master, signal.SIGKILL)
            await asyncio.sleep(max(0.0, seconds - (time.monotonic() - t0)))
            stop.set()
            await asyncio.wait_for(asyncio.gather(*workers), 60)
            # what the log holds now, on whichever server is master
            lost = 0
            for rid, n in tally.acked.items():
                inc = await store.incident(fx.id, n)
                if inc is None or inc.description != rid:
                    lost += 1
            times = sorted([fault, *tally.ack_times, time.monotonic()])
            after = [t for t in times if t >= fault]
            gap = max(b - a for a, b in zip(after, after[1:], strict=False))
            await store.close()
            return {"acked": len(tally.acked), "acked_lost": lost, "inc_reused": tally.reused,
                    "not_logged_replies": tally.refusals, "seconds_unavailable": round(gap, 2)}
        finally:
            topo.stop()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=len(TYPES))
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=14.0)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    random.seed(args.seed)
    logging.getLogger("bot").setLevel(logging.ERROR)  # one warning per refusal otherwise
    for case in ("pause", "kill"):
        res = await run_case(case, None, args.tasks, args.seconds)
        print(f"reports_acked_{case}: {res['acked']}")
        for k in ("acked_lost", "inc_reused", "not_logged_replies", "seconds_unavailable"):
            print(f"{k}_{case}: {res[k]}")
        if not args.no_baseline:
            base = await run_case(case, 0, args.tasks, args.seconds)
            print(f"baseline_no_wait_acked_{case}: {base['acked']}")
            print(f"baseline_no_wait_acked_lost_{case}: {base['acked_lost']}")
            print(f"baseline_no_wait_inc_reused_{case}: {base['inc_reused']}")
            print(f"baseline_no_wait_seconds_unavailable_{case}: {base['seconds_unavailable']}")
            print(f"ratio_acked_vs_no_wait_{case}: {res['acked'] / max(1, base['acked']):.2f}")


if __name__ == "__main__":
    asyncio.run(main())
