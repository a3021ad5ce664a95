"""The Safety Officer's night, second round (issue 36 items 1-3): a night with a roll call, a
missing child and its "found", two procedures (EVACUATE, ALL CLEAR) with an "I have it", a
superseded decision and a severity-4 still open at ground clear. The pack's timeline,
incident list (with outcomes) and procedure table, read back from its CSVs, hold each; the
pack PDF flags the open S4 and its header gives the recorded kick-off; the post-match report
never calls the open S4 "Acknowledged" and lists the procedures."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path

import pypdfium2 as pdfium

from bot.evidence.debrief.pack_folder import build_pack
from bot.evidence.postmatch import build_report, report_pdf
from bot.evidence.signing import new_key

SO = "safety_officer"
# not entries of the record: repeats and position pings (timeline.NOT_IN_TIMELINE)
NOT_ENTRIES = {"incident.reminder", "steward.position", "incident.live_location"}


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def pdf_text(data: bytes | Path) -> str:
    doc = pdfium.PdfDocument(data)
    return " ".join(" ".join(p.get_textpage().get_text_range() for p in doc).split())


async def _night(say, clock) -> dict[str, str]:
    """The night; the ids the bot gave (missing report, procedures)."""
    ids: dict[str, str] = {}
    for sid, post in (("14", "stb_250_gangway"), ("15", "stb_256_gangway"),
                      ("21", "gate_b_lane_1")):
        await say(f"/deploy {sid} {post} Steward {sid}", as_="control")
    await say("/rollcall all", as_="control")
    await say("/onpost stb_250_gangway", as_="steward")
    await say("/phase gates", as_="control")
    clock.advance(timedelta(minutes=20, seconds=7))
    await say("/incident alcohol @gate_away s2 cans in the queue", as_="steward")  # INC-1
    await say("/ack 1", as_="control")
    clock.advance(timedelta(minutes=4))
    await say("/resolve 1 cans taken", as_="control")
    r = await say("/missing age=7 desc=red coat, blue hat, fair hair seen=gate c at=19:20",
                  as_=SO)
    assert r.reply.ok, r.reply.text
    ids["missing"] = r.reply.title.split()[-1]
    clock.advance(timedelta(minutes=6, seconds=13))
    found = await say(f"/found {ids['missing']} at the first aid room, with mum", as_=SO)
    assert found.reply.ok, found.reply.text
    await say("/phase first_half", as_="control")
    clock.advance(timedelta(minutes=30))
    await say("/incident missile @seg_ne s4 coins thrown", as_="steward")  # INC-2: stays open
    clock.advance(timedelta(seconds=41))
    await say("/ack 2", as_="control")
    await say("/decision d=Hold the away fans 15 min why=Home fans at the walkway", as_=SO)
    clock.advance(timedelta(minutes=2))
    await say("/decision d=Release the away fans via gate F why=Police advice supersedes=D-1",
              as_=SO)
    for word in ("evacuate", "allclear"):
        ask = await say(f"/{word} all" + (" move to the concourse" if word == "evacuate"
                                           else ""), as_=SO)
        confirm = ask.reply.buttons[0][0].command
        done = await say(confirm, as_=SO)
        assert done.reply.ok, done.reply.text
        ids[word] = confirm.split()[-1]
        clock.advance(timedelta(seconds=37))
        if word == "evacuate":
            got = await say(f"/ihaveit {ids[word]}", as_="steward")
            assert got.reply.ok, got.reply.text
            ids["acked_at"] = clock.now().isoformat()
        clock.advance(timedelta(minutes=9))
    await say("/phase full_time", as_="control")
    clock.advance(timedelta(minutes=40))
    await say("/timing ground_clear", as_="control")
    return ids


async def _pack(say, core, clock, tmp_path: Path) -> tuple[dict[str, str], Path]:
    ids = await _night(say, clock)
    fx = await core.active_fixture()
    await build_pack(core.store, core.facades, fx, core.grounds[fx.ground],
                     core.settings.config_dir,
                     core.settings.zone, tmp_path / "pack", key=new_key())
    return ids, tmp_path / "pack"


async def test_1_the_timeline_and_incident_list_hold_the_whole_night(say, core, clock,
                                                                     tmp_path: Path) -> None:
    ids, out = await _pack(say, core, clock, tmp_path)
    fx = await core.active_fixture()
    line = rows(out / "timeline.csv")
    kinds = {(r["kind"], r["ref"]) for r in line}
    # the missing child and its found, the roll call, both procedures, the "I have it",
    # the closure and the superseded decision are all on the timeline
    assert ("missing person", ids["missing"]) in kinds
    assert any(k == "found" and ids["missing"] in t for k, t in
               ((r["kind"], r["text"]) for r in line))
    assert any(k == "roll call" for k, _ in kinds)
    assert ("procedure", ids["evacuate"]) in kinds and ("procedure", ids["allclear"]) in kinds
    assert ("acknowledgement", ids["evacuate"]) in kinds
    assert ("closed", "INC-1") in kinds
    [d1] = [r for r in line if r["ref"] == "D-1"]
    assert "SUPERSEDED by D-2" in d1["text"]
    # every entry of the store's log (but reminders and position pings) is on it, by id
    events = await core.store.events(fx.id)
    have = {r["event"] for r in line}
    assert [e.kind for e in events if e.kind not in NOT_ENTRIES and e.id not in have] == []
    # the incident list says where each ended: the S4 was still open at ground clear
    incidents = {r["id"]: r for r in rows(out / "incidents.csv")}
    assert incidents["INC-1"]["outcome"] == "Closed"
    s4 = incidents["INC-2"]
    assert (s4["severity"], s4["open_at_ground_clear"]) == ("4", "yes")
    assert s4["outcome"] == "STILL OPEN at ground clear, last acknowledged"
    text = pdf_text(out / "pack.pdf")
    assert "STILL OPEN at ground clear" in text and "Incidents and their outcomes" in text


async def test_1_the_report_flags_the_open_s4_and_lists_the_procedures(say, core, clock
                                                                       ) -> None:
    ids = await _night(say, clock)
    fx = await core.active_fixture()
    tz = core.settings.zone
    rep = await build_report(core.store, core.facades, core.facades.web.feed, fx,
                             core.grounds[fx.ground],
                             tz, core.clock.now())
    [row] = [r for r in rep.rows if r.id == "INC-2"]
    assert row.outcome == "STILL OPEN at ground clear" and row.closed == ""
    report = pdf_text(report_pdf(rep, None, tz))
    clear = next(t.at for t in await core.facades.timings.read(fx.id) if t.key == "ground_clear")
    assert f"STILL OPEN at ground clear ({clear.astimezone(tz):%H:%M:%S}): 1" in report
    assert f"EVACUATE {ids['evacuate']}" in report and f"ALL CLEAR {ids['allclear']}" in report
    assert "1 of" in report and "Acknowledged" not in report


async def test_2_each_procedure_says_who_had_it_by_when(say, core, clock,
                                                       tmp_path: Path) -> None:
    ids, out = await _pack(say, core, clock, tmp_path)
    procs = {r["id"]: r for r in rows(out / "procedures.csv")}
    ev = procs[ids["evacuate"]]
    assert (ev["what"], ev["acknowledged"]) == ("EVACUATE", "1")
    # to the second (the night's clock is not on a whole minute)
    assert ev["last_acknowledged_at"] == ids["acked_at"] and ids["acked_at"][17:19] != "00"
    assert ev["at"][17:19] != "00"
    assert procs[ids["allclear"]]["acknowledged"] == "0"
    assert procs[ids["missing"]]["what"] == "MISSING"
    text = pdf_text(out / "pack.pdf")
    tz = core.settings.zone
    acked = datetime.fromisoformat(ids["acked_at"]).astimezone(tz)
    assert f"by {acked:%H:%M:%S}" in text


async def test_3_the_header_gives_the_recorded_kickoff_and_the_map_its_stands(
        say, core, clock, tmp_path: Path) -> None:
    _, out = await _pack(say, core, clock, tmp_path)
    fx = await core.active_fixture()
    text = pdf_text(out / "pack.pdf")
    ko = next(t.at for t in await core.facades.timings.read(fx.id) if t.key == "kick_off")
    tz = core.settings.zone
    assert ko != fx.kickoff
    assert f"kick-off {ko.astimezone(tz):%a %d %b %Y %H:%M:%S} (recorded; planned " \
           f"{fx.kickoff.astimezone(tz):%H:%M})" in text
    assert "WEST STAND" in text and "BMS" in text  # the stands named on the map
