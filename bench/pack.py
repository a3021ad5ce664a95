"""Debrief pack benchmark (issue 25 §4): a fixture with 500 incidents (each acknowledged, half
on scene, most closed), arrests, 20 decisions, the inspection, a rota and a roll call, and the
key timings, then `build_pack` timed. Prints `name: value` lines:
- pack_s_500: seconds to build the pack (PDF, CSVs, export, signed manifest), goal <= 30
- pack_pages_500: the PDF's page count
- pack_s_500_per_incident_ms: the same per incident
- timeline_entries_missing: entries of the store's log (all but reminders and position pings,
  bot.evidence.debrief.timeline.NOT_IN_TIMELINE) that the pack's timeline.csv lacks; goal 0
- timeline_entries: rows of timeline.csv, against the log's events (`of`)
Setup is bench/rig.py's (embedded Redis unless REDIS_URL, the sample fixture, virtual clock).
Usage: python bench/pack.py [--incidents N] [--smoke]
"""

from __future__ import annotations

import asyncio
import csv
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli, rig  # noqa: E402
from bot.evidence.debrief.pack_folder import build_pack  # noqa: E402
from bot.evidence.debrief.timeline import in_timeline  # noqa: E402
from bot.evidence.signing import new_key  # noqa: E402

PLACES = ("stb_walkway", "seg_ne", "gate_away", "away_upper", "bms_lower", "ws_concourse")
TYPES = ("missile", "pyro", "disorder", "alcohol", "medical", "antisocial")


async def night(core, n: int) -> None:
    """n incidents with their response, and the rest of a Safety Officer's record."""
    say = 0

    async def run(text: str, user: str) -> None:
        nonlocal say
        say += 1
        r = await core.handle(rig.cmd(say, text, user, tag="pack", reply_via=None))
        assert r is not None and r.reply.ok, (text, r.reply.text if r else None)

    fx = await core.active_fixture()
    core.clock.set(fx.kickoff - timedelta(hours=3))  # inside the inspection's window
    await run("/inspect walkway_netting fail gap at stairway 4", "supervisor")
    await run("/inspect override steward line at the gap", "safety_officer")
    for sid, post in (("14", "stb_250_gangway"), ("15", "stb_256_gangway"),
                      ("21", "gate_b_lane_1")):  # the stewarding section
        await run(f"/deploy {sid} {post} Steward {sid}", "control")
    await run("/rollcall stb", "control")
    await run("/onpost stb_250_gangway", "steward")
    missing = await core.handle(rig.cmd(0, "/missing age=7 desc=red coat seen=gate c at=17:00",
                                        "safety_officer", tag="pack", reply_via=None))
    assert missing is not None and missing.reply.ok, missing.reply.text if missing else None
    await run(f"/found {missing.reply.title.split()[-1]} at the first aid room",
              "safety_officer")
    await run("/phase gates", "control")
    for i in range(n):
        core.clock.advance(timedelta(minutes=11))
        await run(f"/incident {TYPES[i % 6]} @{PLACES[i % 6]} s{1 + i % 5} bench report {i}",
                  "steward")
        inc = i + 2  # INC-1 is the failed netting
        core.clock.advance(timedelta(seconds=40 + i % 90))
        await run(f"/ack {inc}", "control")
        if i % 2:
            core.clock.advance(timedelta(minutes=3))
            await run(f"/onscene {inc}", "supervisor")
        if i % 5:
            core.clock.advance(timedelta(minutes=4))
            await run(f"/resolve {inc}", "control")
        if i % 25 == 0:
            await run(f"/arrest violent_disorder inside away inc={inc}", "police_liaison")
            await run(f"/decision d=Response to INC-{inc} why=bench rationale {i} "
                      f"options=hold; move inc=INC-{inc}", "safety_officer")
    await run("/timing zone_ex_clear", "control")


async def main(n: int) -> None:
    async with rig.bench_core() as (core, _url, _tmp):
        await night(core, n)
        fx = await core.active_fixture()
        assert fx is not None
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            pack = await build_pack(core.store, core.facades, fx, core.grounds[fx.ground],
                                    core.settings.config_dir, core.settings.zone,
                                    Path(out) / "pack", key=new_key())
            took = time.perf_counter() - t
            with (Path(out) / "pack" / "timeline.csv").open(encoding="utf-8") as f:
                line = list(csv.DictReader(f))
        events = await core.store.events(fx.id)
    have = {r["event"] for r in line}
    lacking = sum(1 for e in events if in_timeline(e) and e.id not in have)
    print(f"pack_s_{n}: {took:.2f}")
    print(f"pack_pages_{n}: {pack.pages}")
    print(f"pack_s_{n}_per_incident_ms: {1000 * took / n:.2f}")
    print(f"timeline_entries_missing: {lacking}")
    print(f"timeline_entries: {len(line)} of {len(events)} events")


if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--incidents", type=int, default=500)
    asyncio.run(main(cli.parse(ap, {"incidents": 20}).incidents))
