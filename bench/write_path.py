"""Write-path benchmark: incident reports through core + store vs a raw XADD loop, and how
the read answers (/status, /summary with its chart, /incident <id>) scale from 1k to --big
incidents.

Prints `name: value` lines. Ratios compare runs in the same process on the same server,
so machine noise mostly cancels. Usage: python bench/write_path.py [--reports N] [--big N] [--smoke]
(The raw XADD baseline and MONITOR talk to Redis directly through the store's client: they
measure the server, not the bot.)
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli  # noqa: E402
from bench.rig import STEP, bench_core, beside, cmd, reports  # noqa: E402
from bot.app import build_core  # noqa: E402
from bot.domain.clock import VirtualClock  # noqa: E402
from bot.evidence.summary import summary_figures  # noqa: E402
from bot.sample import ensure_sample_fixture  # noqa: E402
from bot.settings import load_settings  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store.outbox import Outbox  # noqa: E402


async def raw_xadd(store: Store, n: int) -> float:
    """Baseline: the same number of awaited XADDs of a similar event, one at a time."""
    fields = {"kind": "incident.reported", "at": "2026-12-02T21:05:00+00:00",
              "by": "console:steward", "role": "steward", "phase": "second_half",
              "data": '{"id":"INC-1","type":"missile","severity":3,"location":"stb_walkway"}'}
    t = time.perf_counter()
    for _ in range(n):
        await store.gateway.r.xadd("bench:raw", fields)
    return n / (time.perf_counter() - t)


TURNS = 6  # the write-rate comparison alternates baseline and reports this many times
MATCHDAY = timedelta(hours=4, minutes=10)  # gates open to egress: the dense fills' span


async def round_trips(core, store: Store, url: str, n: int, start: int) -> tuple[float, float]:
    """Client-issued commands per report, seen by the server (MONITOR on a connection of its
    own, made from the store's URL with its credentials), and EVALSHA calls per report from
    INFO commandstats."""
    seen: list[str] = []
    mon_store = Store.from_url(url)

    async def watch(ready: asyncio.Event, done: asyncio.Event) -> None:
        async with mon_store.gateway.r.monitor() as m:
            ready.set()
            async for ev in m.listen():
                if ev.get("client_type") != "lua" and "bench-stop" not in ev["command"]:
                    seen.append(ev["command"])
                if "bench-stop" in ev["command"]:
                    done.set()
                    return

    try:
        before = (await store.gateway.r.info("commandstats")).get(
            "cmdstat_evalsha", {}).get("calls", 0)
        ready, done = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(watch(ready, done))
        await beside(task, ready, 10, "MONITOR connected")
        for i in range(start, start + n):
            core.clock.advance(STEP)
            await core.handle(cmd(i))
        await store.gateway.r.get("bench-stop")
        await beside(task, done, 10, "MONITOR saw the stop marker")
        await task
        after = (await store.gateway.r.info("commandstats")).get(
            "cmdstat_evalsha", {}).get("calls", 0)
    finally:
        await mon_store.close()
    return len(seen) / n, (after - before) / n


def label(n: int) -> str:
    """A count as the figures name it: 1k, 100k, or the number itself."""
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


async def read_latency(core, reps: int, say_as: str = "police_commander") -> float:
    fx = await core.active_fixture()
    times = []
    for i in range(reps):
        t = time.perf_counter()
        await core.handle(cmd(10**9 + i, "/status", say_as))
        await summary_figures(core.store, core.facades, fx)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


async def answer_latency(core, texts: list[str], as_: str) -> float:
    """Median seconds for the core to answer each command (the full answer, as sent)."""
    times = []
    for i, text in enumerate(texts):
        t = time.perf_counter()
        r = await core.handle(cmd(2 * 10**9 + i, text, as_))
        times.append(time.perf_counter() - t)
        assert r is not None and r.reply.ok, (text, r.reply.text if r else None)
    return statistics.median(times)


async def paired_latency(cores: list, texts: list[list[str]], as_: str) -> list[float]:
    """Median answer time of each core, their commands taken in turn (so load on the machine
    falls on both alike)."""
    times: list[list[float]] = [[] for _ in cores]
    for i in range(len(texts[0])):
        for j, core in enumerate(cores):
            t = time.perf_counter()
            r = await core.handle(cmd(2 * 10**9 + 2 * i + j, texts[j][i], as_))
            times[j].append(time.perf_counter() - t)
            assert r is not None and r.reply.ok, (texts[j][i], r.reply.text if r else None)
    return [statistics.median(t) for t in times]


async def read_answers(cores: list, counts: list[int], reps: int) -> tuple[list, list]:
    """Median /summary (figures + chart) and /incident <id> (random incidents) latency of
    each core."""
    summary = await paired_latency(cores, [["/summary"] * reps for _ in cores],
                                   "police_commander")
    rngs = [random.Random(n) for n in counts]
    ids = [[f"/incident {rng.randint(1, n)}" for _ in range(reps * 20)]
           for rng, n in zip(rngs, counts, strict=True)]
    timeline = await paired_latency(cores, ids, "control")
    return summary, timeline


async def dense_core(url: str, tmp: str, config_dir: str, count: int):
    """A core on its own database holding one ~4 h matchday of `count` incidents."""
    store = Store.from_url(url)
    await store.reset_for_tests()
    core = build_core(store, load_settings(REDIS_URL=url, MATCHDAY_DATA_DIR=tmp,
                                           MATCHDAY_CONFIG_DIR=config_dir),
                      VirtualClock(datetime(2026, 12, 2, 17, tzinfo=UTC)))
    await ensure_sample_fixture(core)
    await fill(core, count, 0, step=MATCHDAY / count)
    return core


def no_merge_config(tmp: str) -> Path:
    """The project's config with merging off, so a dense fill gives one incident per report
    (every report the same type and place; 100k fit in one matchday, 150 ms apart)."""
    src = Path(__file__).resolve().parent.parent / "config"
    dst = Path(tmp) / "config-no-merge"
    shutil.copytree(src, dst)
    esc = dst / "escalation.toml"
    esc.write_text(esc.read_text().replace("window_s = 600", "window_s = 0"))
    return dst


async def fill(core, upto: int, have: int, batch: int = 64,
               step: timedelta = STEP) -> None:
    """Log incidents until `upto` exist, many in flight at once (setup, not measured)."""
    i = have
    while i < upto:
        tasks = []
        for j in range(i, min(i + batch, upto)):
            core.clock.advance(step)
            tasks.append(asyncio.create_task(core.handle(cmd(5 * 10**8 + j))))
            await asyncio.sleep(0)  # let it read the clock before the next step
        await asyncio.gather(*tasks)
        i += len(tasks)


SMOKE = {"reports": 60, "base": 100, "big": 300, "warm": 20, "reps": 5}


async def main(a) -> None:
    async with bench_core() as (core, url, tmp):
        store = core.store
        # As `matchday run` does: the card for control and command and the reporter's answer
        # go into the durable outbox inside the report's own script.
        core.notifier.outbox = Outbox(store.gateway)
        await reports(core, a.warm, 0)  # warm up (script load, caches)
        await raw_xadd(store, a.warm)
        # Baseline and reports in turns, so a spell of load on this shared machine falls on
        # both alike (one long run of each gave ratios 0.09-0.14 for the same code).
        per, raw_s, core_s = max(1, a.reports // TURNS), 0.0, 0.0
        for turn in range(TURNS):
            raw_s += per / await raw_xadd(store, per)
            core_s += per / await reports(core, per, 1000 + turn * per)
        raw, core_rate = TURNS * per / raw_s, TURNS * per / core_s
        print(f"raw_xadd_per_s: {raw:.0f}")
        print(f"reports_per_s: {core_rate:.0f}")
        print(f"ratio_vs_raw_xadd: {core_rate / raw:.2f}")
        rt, evalsha = await round_trips(core, store, url, a.warm, 10**7)
        print(f"round_trips_per_report: {rt:.2f}")
        print(f"evalsha_per_report: {evalsha:.2f}")
        base, big = a.base, a.big
        await fill(core, base, a.warm + TURNS * per + a.warm)
        small = await read_latency(core, a.reps)
        await fill(core, big, base)
        large = await read_latency(core, a.reps)
        b, k = label(base), label(big)
        print(f"status_summary_ms_at_{b}: {small * 1000:.2f}")
        print(f"status_summary_ms_at_{k}: {large * 1000:.2f}")
        print(f"ratio_status_{k}_vs_{b}: {large / small:.2f}")

        # /summary and /incident <id>: the same ~4 h matchday with `base` and `big` incidents
        # (so the chart has the same bins), in two databases of one server, measured in turn
        config_dir = str(no_merge_config(tmp))
        db0 = url.rsplit("/", 1)[0]
        cores = [await dense_core(f"{db0}/{db}", tmp, config_dir, count)
                 for db, count in ((1, base), (2, big))]
        await read_answers(cores, [base, big], 3)  # warm up (matplotlib import, caches)
        (s_small, s_large), (t_small, t_large) = await read_answers(cores, [base, big],
                                                                    max(3, a.reps * 15 // 100))
        for core in cores:
            await core.store.reset_for_tests()
            await core.store.close()
        print(f"summary_ms_at_{b}: {s_small * 1000:.1f}")
        print(f"summary_ms_at_{k}: {s_large * 1000:.1f}")
        print(f"ratio_summary_{k}_vs_{b}: {s_large / s_small:.2f}")
        print(f"timeline_ms_at_{b}: {t_small * 1000:.2f}")
        print(f"timeline_ms_at_{k}: {t_large * 1000:.2f}")
        print(f"ratio_timeline_{k}_vs_{b}: {t_large / t_small:.2f}")


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--reports", type=int, default=3000)
    ap.add_argument("--base", type=int, default=1000, help="incidents of the small database")
    ap.add_argument("--big", type=int, default=100_000, help="incidents of the big one")
    ap.add_argument("--warm", type=int, default=200, help="warm-up reports (and MONITOR's)")
    ap.add_argument("--reps", type=int, default=100, help="/status samples")
    asyncio.run(main(cli.parse(ap, SMOKE)))
