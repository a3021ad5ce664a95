"""Ingress benchmark: the London Stadium's 128 turnstiles each send a count a second (one
signed batch a second per entry point, over HTTP to the bot's ingress route) for 30 minutes of
virtual time before kick-off, beside a flashpoint of steward reports, into one Redis.

Prints, as `name: value` lines:
- ingress_alert_s: the worst wall-clock seconds from posting the batch that takes a stand past
  an alarm threshold (85%, 95%, full) to that alert reaching control (target <= 5);
- forecast_full_error_min: the median absolute error, in minutes, of each stand's predicted
  time to full (checked each minute, from 6 minutes in until it is full) against the minute it
  really filled (target <= 3);
- reports_per_s_ratio: reports a second with the feed running (paced at a real second per
  round) over reports a second without it, in the same process (target >= 0.9); on a shared
  machine other jobs' load moves it either way by more than the feed does, so also:
- reports_per_cpu_s_ratio: the same with this process's CPU seconds for wall seconds (what
  the feed itself takes from the reports, whatever else the machine runs);
- feed_cpu_share: the share of one core the feed alone takes (a count a second from every
  turnstile over HTTP, the turnstiles' own client in the same process: an upper bound).

Usage: python bench/ingress.py [--minutes 30] [--flash-s 16] [--seed 7] [--smoke]
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import ClientSession, web  # noqa: E402

from bench import cli  # noqa: E402
from bench.rig import bench_core, cmd  # noqa: E402
from bot.domain.clock import iso  # noqa: E402
from bot.domain.ingress_batch import SIGNATURE_HEADER, sign  # noqa: E402
from bot.domain.ingress_plan import IngressPlan  # noqa: E402
from bot.ingress.ingress_desk import IngressDesk  # noqa: E402
from bot.web.ingress_route import PATH, IngressFeed  # noqa: E402

KEY = b"bench-ingress-key"
ZONES = ["stb_walkway", "seg_ne", "bbs_lower", "bms_concourse", "ws_upper", "gate_a"]
TYPES = ["missile", "pyro", "disorder", "medical", "ejection", "crowd"]


@dataclass
class Stand:
    """One stand's simulated arrivals: people in at the start, its turnstiles' pace."""

    zone: str
    capacity: int
    inside: float
    turnstiles: dict[str, str]  # turnstile -> entry point
    cap_per_s: float  # what a turnstile admits at most a second
    demand: float  # people a second wanting in per turnstile at the start (rises)
    full_at: float | None = None  # virtual second it filled
    crossed: dict[int, float] = field(default_factory=dict)  # level -> wall time posted


def stands_of(plan: IngressPlan, rng: random.Random, minutes: int) -> list[Stand]:
    """Each stand starts so that it fills within the run at its turnstiles' pace."""
    out = []
    for s in plan.stands.values():
        ts = {t: e.zone for e in plan.entries_of(s.zone) for t in e.turnstiles}
        cap = plan.per_turnstile_per_min / 60
        fill_min = rng.uniform(0.45, 0.9) * minutes
        start = max(0.0, s.capacity - len(ts) * cap * 60 * fill_min * rng.uniform(0.85, 1.0))
        out.append(Stand(s.zone, s.capacity, start, ts, cap, cap * rng.uniform(0.7, 1.3)))
    return out


async def flashpoint(core, seconds: float, tag: str) -> tuple[int, float, float]:
    """Reports from stewards for `seconds` of wall time: how many, in how many wall seconds
    and in how many of this process's CPU seconds."""
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        text = f"/incident {TYPES[n % 6]} @{ZONES[n % 6]} s{2 + n % 3} flash {tag} {n}"
        r = await core.handle(cmd(n, text, user="steward", tag=tag))
        assert r is not None and r.reply.ok, r.reply.text if r else None
        n += 1
        await asyncio.sleep(0)  # the feed's batches get their turn, as on a busy server
    return n, time.perf_counter() - t0, time.process_time() - c0


class Feed:
    """The turnstiles: a signed batch per entry point per virtual second."""

    def __init__(self, core, http: ClientSession, url: str, stands: list[Stand],
                 rng: random.Random) -> None:
        self.core, self.http, self.url, self.stands, self.rng = core, http, url, stands, rng
        self.second = 0
        self.alerted: dict[tuple[str, int], float] = {}
        self.forecasts: list[tuple[str, float, float]] = []  # stand, at (s), predicted (s)

    async def seed(self) -> None:
        """Who came in before the run, counted at its start (within the feed's time skew;
        the forecast is read only once this has left the rate window)."""
        at = iso(self.core.clock.now() - timedelta(seconds=290))
        for s in self.stands:
            per = int(s.inside) // len(s.turnstiles)
            s.inside = per * len(s.turnstiles)
            banks: dict[str, list[dict[str, object]]] = {}
            for t, entry in s.turnstiles.items():
                banks.setdefault(entry, []).append({"turnstile": t, "count": per, "at": at})
            for entry, rows in banks.items():
                await self.post(f"{entry}-seed", rows)

    async def post(self, batch: str, rows: list[dict[str, object]]) -> None:
        """One signed batch."""
        body = json.dumps({"batch": batch, "counts": rows}).encode()
        async with self.http.post(self.url, data=body,
                                  headers={SIGNATURE_HEADER: sign(KEY, body)}) as r:
            assert r.status == 200, await r.text()

    async def round(self, minutes: int) -> None:
        """One second of counts from every turnstile, posted bank by bank."""
        self.core.clock.advance(timedelta(seconds=1))
        now = self.core.clock.now()
        self.second += 1
        ramp = 1 + 0.4 * self.second / (minutes * 60)
        for s in self.stands:
            banks: dict[str, list[dict[str, object]]] = {}
            crossing: list[int] = []
            for t, entry in s.turnstiles.items():
                want = s.demand * ramp
                n = 0 if s.inside >= s.capacity else \
                    int(self.rng.random() < min(want, s.cap_per_s))
                before = s.inside
                s.inside += n
                for level in (85, 95, 100):
                    if before * 100 < level * s.capacity <= s.inside * 100:
                        crossing.append(level)
                banks.setdefault(entry, []).append({"turnstile": t, "count": n, "at": iso(now)})
            if s.full_at is None and s.inside >= s.capacity:
                s.full_at = self.second
            for entry, rows in banks.items():
                for level in crossing:
                    s.crossed.setdefault(level, time.perf_counter())
                crossing = []
                await self.post(f"{entry}-{self.second}", rows)


async def main(minutes: int, flash_s: float, seed: int) -> None:
    rng = random.Random(seed)
    async with bench_core() as (core, _url, _tmp):
        fx = await core.active_fixture()
        core.clock.set(fx.kickoff - timedelta(minutes=minutes + 15))
        desk = IngressDesk(core, KEY)
        plan = desk.plan_of(fx)
        app = web.Application()
        IngressFeed(desk).add_routes(app)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}{PATH}"
        heard: dict[str, float] = {}  # alert text -> when it reached control

        async def tap(out) -> None:
            if out.audience == "control":
                heard.setdefault(out.reply.text, time.perf_counter())
        core.notifier.taps.append(tap)
        stands = stands_of(plan, rng, minutes)
        try:
            async with ClientSession() as http:
                feed = Feed(core, http, url, stands, rng)
                await feed.seed()
                # the flashpoint alone and beside the feed (paced at a real second per round),
                # alone-beside-beside-alone after a warm-up: the record grows as reports come,
                # so neither side gets the smaller one
                await flashpoint(core, flash_s / 4, "warm")

                async def paced() -> None:
                    while True:
                        t0 = time.perf_counter()
                        await feed.round(minutes)
                        await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - t0)))
                # short legs, finely interleaved: the machine's other load falls on both sides
                sums = {False: [0, 0.0, 0.0], True: [0, 0.0, 0.0]}  # reports, wall s, CPU s
                legs = (False, True, True, False) * 4
                for leg, with_feed in enumerate(legs):
                    pacer = asyncio.create_task(paced()) if with_feed else None
                    got = await flashpoint(core, flash_s / len(legs), f"leg{leg}")
                    if pacer is not None:
                        pacer.cancel()
                        await asyncio.gather(pacer, return_exceptions=True)
                    sums[with_feed] = [a + b for a, b in zip(sums[with_feed], got, strict=True)]
                alone, beside = (sums[w][0] / sums[w][1] for w in (False, True))
                alone_cpu, beside_cpu = (sums[w][0] / sums[w][2] for w in (False, True))
                # the feed alone, paced as beside the reports: this process's CPU per second
                pacer = asyncio.create_task(paced())
                t0, c0 = time.perf_counter(), time.process_time()
                await asyncio.sleep(max(2.0, flash_s / 4))
                feed_share = (time.process_time() - c0) / (time.perf_counter() - t0)
                pacer.cancel()
                await asyncio.gather(pacer, return_exceptions=True)
                # then the rest of the 30 minutes as fast as it goes, the forecast read each minute
                while feed.second < minutes * 60:
                    await feed.round(minutes)
                    if feed.second % 60 == 0 and feed.second >= 360:
                        p = await desk.picture(fx)
                        assert p is not None
                        for st in p.stands:
                            if st.full_at is not None and st.inside < st.capacity:
                                ahead = (st.full_at - core.clock.now()).total_seconds()
                                feed.forecasts.append((st.zone, feed.second,
                                                       feed.second + ahead))
        finally:
            await runner.cleanup()
        seen: dict[tuple[str, int], float] = {}  # (stand, level) -> when control had it
        for ev in await core.store.events(fx.id):
            if ev.kind == "ingress.alert" and ev.data["text"] in heard:
                seen[(ev.data["zone"], int(ev.data["level"]))] = heard[ev.data["text"]]
        delays = [seen[k] - s.crossed[k[1]] for s in stands for k in seen
                  if k[0] == s.zone and k[1] in s.crossed]
        missed = sum(1 for s in stands for lv in s.crossed if (s.zone, lv) not in seen)
        full = {s.zone: s.full_at for s in stands if s.full_at is not None}
        errors = [abs(pred - full[z]) / 60 for z, at, pred in feed.forecasts if z in full
                  and at < full[z]]
        readings = sum(len(s.turnstiles) for s in stands)
        print(f"turnstiles: {readings}")
        print(f"virtual_minutes: {feed.second / 60:.1f}")
        print(f"stands_filled: {len(full)} of {len(stands)}")
        print(f"alerts_measured: {len(delays)} (missed {missed})")
        print(f"ingress_alert_s: {max(delays, default=float('nan')):.2f}")
        print(f"forecast_checks: {len(errors)}")
        median = statistics.median(errors) if errors else float("nan")
        print(f"forecast_full_error_min: {median:.2f}")
        print(f"reports_per_s_alone: {alone:.1f}")
        print(f"reports_per_s_with_feed: {beside:.1f}")
        print(f"reports_per_s_ratio: {beside / alone:.2f}")
        print(f"reports_per_cpu_s_ratio: {beside_cpu / alone_cpu:.2f}")
        print(f"feed_cpu_share: {feed_share:.3f}")
        if missed:
            raise SystemExit(f"{missed} threshold crossings never reached control")


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--minutes", type=int, default=30)
    ap.add_argument("--flash-s", type=float, default=16.0)
    ap.add_argument("--seed", type=int, default=7)
    a = cli.parse(ap, {"minutes": 10, "flash_s": 2.0})
    asyncio.run(main(a.minutes, a.flash_s, a.seed))
