"""Early-warning benchmark: replay the bundled night (bot/scenarios/west_ham_chelsea.jsonl)
through the real bot on a virtual clock, then feed its log's reports (new incidents and
joined reports) to the rules of config/early_warning.toml. Prints `name: value` lines:
- warnings: how many warnings the night raised, and each one's line
- warning_lead_s: seconds from the warning to the first severity-5 report in its area (the
  zone and its neighbours); goal >= 300
- false_warnings: warnings on the quiet parts (no severity-5 report in their area within 30
  minutes after); goal 0
- quiet_night_warnings: warnings on 200 seeded nights of scattered S1-S3 reports (4 hours,
  60 reports each, random places, none twice in 10 minutes); goal 0
Usage: python bench/early_warning.py [--nights N] [--smoke]
"""

from __future__ import annotations

import asyncio
import random
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli, rig  # noqa: E402
from bot.core.drill import Drill  # noqa: E402
from bot.domain.early_warning import Report, Watch, load_rules  # noqa: E402
from bot.replay import parse_script, replay  # noqa: E402
from bot.runtime import scheduler_for  # noqa: E402
from bot.schedule.early_warning_feed import report_of  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NIGHT = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"
AFTER = timedelta(minutes=30)


async def night_reports() -> tuple[list[Report], object]:
    """The bundled night's reports as its replayed log holds them, and its ground."""
    lines = parse_script(NIGHT).lines
    rig.START = lines[0].at  # the bench's virtual clock starts with the night (never goes back)
    async with rig.bench_core(drill=Drill(live=False)) as (core, _url, _tmp):
        scheduler = scheduler_for(core, core.clock, live=False)
        await scheduler.start()
        try:
            await replay(core, scheduler, core.clock, lines, NIGHT.name, lambda _row: None)
        finally:
            await scheduler.stop()
        [fx_id] = sorted(core.drill.created)
        fx = await core.store.fixture(fx_id)
        reports = [r for e in await core.store.events(fx_id) if (r := report_of(e))]
        return reports, core.grounds[fx.ground]


def quiet_night(rng: random.Random, zones: list[str], start) -> list[Report]:
    """60 scattered low-severity reports over 4 hours: random places, but none twice within
    10 minutes (scattered, not a crowd building in one spot)."""
    times = sorted(rng.uniform(0, 4 * 3600) for _ in range(60))
    last: dict[str, float] = {}
    out = []
    for t in times:
        zone = rng.choice([z for z in zones if t - last.get(z, -1e9) > 600] or zones)
        last[zone] = t
        out.append(Report(start + timedelta(seconds=t), zone, rng.choice((1, 2, 2, 3)),
                          rng.choice(("antisocial", "alcohol", "entry", "medical", "other"))))
    return out


async def main(nights: int) -> None:
    rules = load_rules(ROOT / "config" / "early_warning.toml")
    reports, ground = await night_reports()
    watch = Watch(rules, ground)
    warnings = [(r.at, w) for r in reports for w in watch.feed(r)]
    print(f"reports: {len(reports)}")
    print(f"warnings: {len(warnings)}")
    leads, false = [], 0
    for at, w in warnings:
        print(f"  {at:%H:%M:%S} {w.text}")
        s5 = [r.at for r in reports if r.severity >= 5 and r.zone in w.zones and r.at >= at]
        if s5 and s5[0] - at <= AFTER:
            leads.append((s5[0] - at).total_seconds())
        else:
            false += 1
    print(f"warning_lead_s: {max(leads):.0f}" if leads else "warning_lead_s: none")
    print(f"false_warnings: {false}")
    rng = random.Random(23)
    zones = sorted(ground.zones)
    quiet = 0
    for _ in range(nights):
        w = Watch(rules, ground)
        quiet += sum(len(w.feed(r)) for r in quiet_night(rng, zones, reports[0].at))
    print(f"quiet_night_warnings: {quiet} ({nights} nights)")


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--nights", type=int, default=200, help="seeded quiet nights")
    asyncio.run(main(cli.parse(ap, {"nights": 10}).nights))
