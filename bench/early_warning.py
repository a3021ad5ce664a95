"""Early-warning benchmark: nights made from seeds (bench/nights.py), held out from tuning,
and the bundled night replayed through the real bot.

Generated nights (seeds: each makes --per-seed hot and as many quiet nights): the thresholds
of config/early_warning.toml were tuned on seeds 0-99 only; the figures that count are on
seeds 100-199 (`tune_*` lines show the tuning set beside them). Every night's reports and
turnstile readings go through one Watch in time order, the report's crowd-pressure words
matched on its own text as it comes in, with a tick a minute (warnings clear).
- hot_recall: share of hot nights warned at least 300 s before the crush, in its area; goal
  >= 0.95
- lead_s_p50: median seconds from the first warning in the crush's area to the crush (0 for a
  night never warned); goal >= 420
- false_warnings_per_quiet_night: warnings on the quiet nights, per night; goal <= 0.05
- baseline_*: the same nights through a count-only rule in the same process (3 reports in a
  zone and its neighbours in 5 minutes, or 2 of S4 and over; what shipped before #35)
The bundled night (bot/scenarios/west_ham_chelsea.jsonl, replayed on a virtual clock):
- warning_lead_s: seconds from the warning to the first severity-5 report in its area; goal
  >= 300
- false_warnings: warnings with no severity-5 report in their area within 30 minutes; goal 0
--misses prints the tuning seeds' missed hot nights (never the report seeds'): what was
reported in the crush's area before the last moment a warning would have been in time.
Usage: python bench/early_warning.py [--seeds N] [--per-seed K] [--misses] [--smoke]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli, rig  # noqa: E402
from bench.nights import KICKOFF, Night, Said, hot_night, quiet_night  # noqa: E402
from bot.core.drill import Drill  # noqa: E402
from bot.domain.crowd_signals import IngressReading  # noqa: E402
from bot.domain.early_warning import (  # noqa: E402
    Report,
    Rules,
    Watch,
    load_rules,
    pressure_words_in,
)
from bot.domain.grounds import Ground, load_ground  # noqa: E402
from bot.replay import parse_script, replay  # noqa: E402
from bot.runtime import scheduler_for  # noqa: E402
from bot.schedule.early_warning_feed import report_of  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NIGHT = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"
AFTER = timedelta(minutes=30)
LEAD_GOAL_S = 300
TUNE, REPORT = 0, 100  # first seed of each set


async def night_reports() -> tuple[list[Report], Ground, datetime]:
    """The bundled night's reports as its replayed log holds them, its ground and kick-off."""
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
        words = core_rules().pressure_words
        reports = [r for e in await core.store.events(fx_id) if (r := report_of(e, words))]
        return reports, core.grounds[fx.ground], fx.kickoff


def core_rules() -> Rules:
    """The shipped thresholds."""
    return load_rules(ROOT / "config" / "early_warning.toml")


Detector = Callable[[Night], list[tuple[datetime, tuple[str, ...]]]]


def detector(rules: Rules, ground: Ground) -> Detector:
    """The early warning over one night: (when, area) of each warning."""
    def run(night: Night) -> list[tuple[datetime, tuple[str, ...]]]:
        watch, out = Watch(rules, ground, KICKOFF), []
        next_tick: datetime | None = None
        for e in night.ordered():
            if next_tick is None or e.at >= next_tick:
                watch.tick(e.at)
                next_tick = e.at + timedelta(minutes=1)
            if isinstance(e, IngressReading):
                got = watch.ingress(e)
            else:
                got = watch.feed(intake(e, rules))
            out += [(e.at, w.zones) for w in got]
        return out
    return run


def intake(said: Said, rules: Rules) -> Report:
    """The report as the bot takes it in: crowd-pressure words matched on its own text."""
    return replace(said.report, words=pressure_words_in(said.text, rules.pressure_words))


def baseline(ground: Ground) -> Detector:
    """Counts only (what shipped before): 3 reports in a zone and its neighbours within 5
    minutes, or 2 of S4 and over; once per area per 30 minutes; no words, no turnstiles."""
    def run(night: Night) -> list[tuple[datetime, tuple[str, ...]]]:
        recent: list[Report] = []
        seen: set[str] = set()
        quiet: dict[str, datetime] = {}
        out = []
        for e in night.ordered():
            if isinstance(e, IngressReading) or e.report.key in seen:
                continue
            r = e.report
            seen.add(r.key)
            recent = [x for x in recent if (r.at - x.at).total_seconds() <= 300] + [r]
            near = set(ground.nearby(r.zone))
            here = [x for x in recent if x.zone in near]
            hot = len(here) >= 3 or sum(x.severity >= 4 for x in here) >= 2
            if hot and quiet.get(r.zone, r.at) <= r.at:
                out.append((r.at, tuple(sorted(near))))
                for z in near:
                    quiet[z] = r.at + timedelta(minutes=30)
        return out
    return run


def score(run: Detector, hot: Iterable[Night], quiet: Iterable[Night]) -> dict[str, float]:
    """hot_recall, lead_s_p50 and false_warnings_per_quiet_night of a detector."""
    leads = []
    for n in hot:
        assert n.crush_at is not None
        ahead = [(n.crush_at - at).total_seconds() for at, zones in run(n)
                 if n.crush_zone in zones and at < n.crush_at]
        leads.append(max(ahead, default=0.0))
    quiet = list(quiet)
    false = sum(len(run(n)) for n in quiet)
    return {"hot_recall": sum(x >= LEAD_GOAL_S for x in leads) / len(leads),
            "lead_s_p50": statistics.median(leads),
            "false_warnings_per_quiet_night": false / len(quiet)}


def misses(run: Detector, hot: Iterable[Night], ground: Ground) -> None:
    """Each hot night warned too late: its kind, place, build-up, and the reports in the
    crush's area before the moment a warning was still in time."""
    for n in hot:
        assert n.crush_at is not None
        lead = max(((n.crush_at - at).total_seconds() for at, zones in run(n)
                    if n.crush_zone in zones and at < n.crush_at), default=0.0)
        if lead >= LEAD_GOAL_S:
            continue
        due = n.crush_at - timedelta(seconds=LEAD_GOAL_S)
        print(f"missed: seed {n.seed} {n.kind} at {n.crush_zone}, build-up "
              f"{n.build_up_s:.0f} s, lead {lead:.0f} s, turnstiles {'on' if n.ingress else 'off'}")
        area, seen = set(ground.nearby(n.crush_zone)), set()
        for e in n.ordered():
            if isinstance(e, Said) and e.report.zone in area and e.at <= due \
                    and (n.crush_at - e.at).total_seconds() <= n.build_up_s + 60 \
                    and e.report.key not in seen:
                seen.add(e.report.key)
                r = e.report
                print(f"  -{(n.crush_at - r.at).total_seconds():4.0f} s {r.zone} S{r.severity} "
                      f"{r.type}, {r.people} people: {e.text}")


def nights(first: int, seeds: int, per_seed: int, ground: Ground) -> tuple[list[Night],
                                                                        list[Night]]:
    """The hot and quiet nights of seeds first .. first+seeds-1."""
    hot = [hot_night(s, ground, k) for s in range(first, first + seeds) for k in range(per_seed)]
    quiet = [quiet_night(s, ground, k) for s in range(first, first + seeds)
             for k in range(per_seed)]
    return hot, quiet


def show(prefix: str, figures: dict[str, float]) -> None:
    """`name: value` lines."""
    for k, v in figures.items():
        print(f"{prefix}{k}: {v:.3f}" if k != "lead_s_p50" else f"{prefix}{k}: {v:.0f}")


async def main(seeds: int, per_seed: int, show_misses: bool = False) -> None:
    rules = core_rules()
    ground = load_ground(ROOT / "config" / "grounds" / "london_stadium.toml")
    ours, old = detector(rules, ground), baseline(ground)
    tune_hot, tune_quiet = nights(TUNE, seeds, per_seed, ground)
    hot, quiet = nights(REPORT, seeds, per_seed, ground)
    print(f"nights: {len(hot)} hot and {len(quiet)} quiet on seeds {REPORT}-"
          f"{REPORT + seeds - 1} (tuned on seeds {TUNE}-{TUNE + seeds - 1})")
    print(f"hot_nights_without_ingress: {sum(not n.ingress for n in hot)}")
    show("", score(ours, hot, quiet))
    show("baseline_", score(old, hot, quiet))
    show("tune_", score(ours, tune_hot, tune_quiet))
    if show_misses:
        misses(ours, tune_hot, ground)

    reports, ground, kickoff = await night_reports()
    watch = Watch(rules, ground, kickoff)
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


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--seeds", type=int, default=100, help="seeds in each set (tune, report)")
    ap.add_argument("--per-seed", type=int, default=2, help="hot and quiet nights per seed")
    ap.add_argument("--misses", action="store_true",
                    help="print the tuning seeds' missed hot nights")
    args = cli.parse(ap, {"seeds": 5, "per_seed": 1})
    asyncio.run(main(args.seeds, args.per_seed, args.misses))
