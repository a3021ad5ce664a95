"""The debrief pack built in-process (issue 25 §4): signed and verifiable, response times by
severity from the log, and readable printed on A4 (pages rendered to images; every
character at 8 pt or more)."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bot.evidence.debrief.pack_folder import build_pack
from bot.evidence.signing import new_key, public_hex
from bot.evidence.verify import verify_dir

A4 = (595.3, 841.9)  # points


async def _night(say, clock) -> None:
    await say("/inspect walkway_netting fail gap at stairway 4", as_="supervisor")
    await say("/inspect override steward line at the gap", as_="safety_officer")
    await say("/phase gates", as_="control")
    clock.advance(timedelta(minutes=30))
    await say("/incident missile @seg_ne s3 coins thrown", as_="steward")
    clock.advance(timedelta(minutes=2))
    await say("/ack 2", as_="control")
    clock.advance(timedelta(minutes=3))
    await say("/onscene 2", as_="supervisor")
    clock.advance(timedelta(minutes=15))
    await say("/resolve 2", as_="control")
    await say("/arrest throwing_missiles inside away inc=2 ref=MPS/CU/9", as_="police_liaison")
    await say("/decision d=Close gate C why=Crush risk inc=INC-2", as_="safety_officer")
    await say("/decision d=Close gate C and D why=Queue moved supersedes=D-2",
              as_="safety_officer")
    await say("/timing zone_ex_clear", as_="control")


async def _stewarding(say) -> None:
    """A rota of three posts, a roll call of the east stand with one post checked in, the
    briefing read by one steward, and a lockdown with one "I have it"."""
    for sid, post in (("14", "stb_250_gangway"), ("15", "stb_256_gangway"),
                      ("21", "gate_b_lane_1")):
        await say(f"/deploy {sid} {post} Steward {sid}", as_="control")
    await say("/rollcall stb", as_="control")
    await say("/onpost stb_250_gangway", as_="steward")
    shown = await say("/briefing", as_="steward")
    await say(shown.reply.buttons[0][0].command, as_="steward")
    ask = await say("/lockdown all suspicious item at gate A", as_="safety_officer")
    confirm = ask.reply.buttons[0][0].command
    await say(confirm, as_="safety_officer")
    await say(f"/ihaveit {confirm.split()[-1]}", as_="steward")


async def test_the_pack_is_signed_and_reads_on_a4(say, core, clock, tmp_path: Path):
    await _night(say, clock)
    await _stewarding(say)
    fx = await core.active_fixture()
    key = new_key()
    pack = await build_pack(core.store, core.facades, fx, core.grounds[fx.ground],
                            core.settings.config_dir,
                            core.settings.zone, tmp_path / "pack", key=key)
    result = verify_dir(tmp_path / "pack", key=public_hex(key))
    assert result.ok, result
    with (tmp_path / "pack" / "response_times.csv").open() as f:
        [s3] = [r for r in csv.DictReader(f) if r["severity"] == "3"]
    # INC-2: acknowledged after 2 minutes, on scene after 5, closed after 20
    assert (s3["ack_s_median"], s3["on_scene_s_median"], s3["close_s_median"]) == (
        "120", "300", "1200")

    pdf = pdfium.PdfDocument(tmp_path / "pack" / "pack.pdf")
    assert len(pdf) == pack.pages >= 2
    text = ""
    for page in pdf:
        w, h = page.get_size()
        assert abs(w - A4[0]) < 1 and abs(h - A4[1]) < 1
        image = page.render(scale=150 / 72).to_pil().convert("L")
        assert abs(image.size[0] - 1240) <= 1 and abs(image.size[1] - 1754) <= 1  # 150 dpi
        assert image.getextrema()[0] < 64  # something dark printed on every page
        tp = page.get_textpage()
        sizes = [pdfium_c.FPDFText_GetFontSize(tp.raw, i) for i in range(tp.count_chars())
                 if not pdfium_c.FPDFText_IsGenerated(tp.raw, i)
                 and not chr(pdfium_c.FPDFText_GetUnicode(tp.raw, i)).isspace()]
        assert sizes and min(sizes) >= 8, min(sizes)
        text += tp.get_text_range()
    for needle in ("Debrief pack", "Key timings", "Pre-event inspection", "Decision log",
                   "SUPERSEDED by D-3", "Response times by severity", "Where the incidents were",
                   "Timeline", "Zone Ex clear", "FAILED (INC-1)", "Throwing missiles",
                   "Stewarding", "Fill rate", "Roll calls", "LOCKDOWN", "1 of"):
        assert needle in text, needle
    # the rota's stewards the lockdown could not reach, named to radio (#32)
    assert "not on the bot, to radio: 14 Steward 14 (Block 250 gangway), 15 Steward 15 " \
           "(Block 256 gangway)" in " ".join(text.split())
    assert "No stewarding deployment" not in text
    with (tmp_path / "pack" / "stewarding.csv").open() as f:
        rows = list(csv.DictReader(f))
    by = {(r["section"], r["ref"]): r for r in rows}
    stb = next(r for r in rows if r["section"] == "roll_call")
    # the east stand's roll call asked its posts; one of them checked in
    assert int(stb["planned_or_asked"]) >= 2 and stb["filled_or_answered"] == "1"
    assert int(stb["on_post_or_missing"]) == int(stb["planned_or_asked"]) - 1
    [lock] = [r for r in rows if r["section"] == "procedure"]
    assert (lock["what"], lock["filled_or_answered"]) == ("LOCKDOWN", "1")
    # of the 6 planned: the roster's 3 on the bot, and the rota's 3 with no linked account
    assert (lock["planned_or_asked"], lock["on_post_or_missing"]) == ("6", "5")
    [brief] = [r for r in rows if r["section"] == "briefing"]
    assert (brief["planned_or_asked"], brief["filled_or_answered"]) == ("3", "1")
    filled = sum(int(r["filled_or_answered"]) for r in rows if r["section"] == "deployment")
    assert filled == 3 and ("deployment", "stb") in by
    assert "MPS/CU/9" not in text


async def test_the_safety_officer_builds_the_pack_from_chat(say, core, settings):
    board = (await say("/timing", as_="safety_officer")).reply
    assert board.buttons[-1][0].command == "/pack"
    assert all(b.command != "/pack" for row in (await say("/timing", as_="control")).reply.buttons
               for b in row)
    r = await say("/pack", as_="safety_officer")
    assert r.reply.ok and r.reply.title == "Debrief pack", r.reply.text
    fx = await core.active_fixture()
    folder = settings.data_dir / "packs" / fx.id
    assert str(folder) in r.reply.text and verify_dir(folder).ok
    assert not (await say("/pack", as_="control")).reply.ok


async def test_a_month_of_packs_for_the_sag(say, core, tmp_path: Path):
    import json

    import pytest

    from bot.evidence.debrief.period import build_period, parse_period
    from bot.evidence.export import signed_part
    from bot.evidence.signing import signature_ok

    fx = await core.active_fixture()
    month = f"{fx.kickoff.astimezone(core.settings.zone):%Y-%m}"
    await say("/fixture add Leyton Orient v Barnet 2027-03-06 15:00", as_="admin")
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    key = new_key()
    folder, n = await build_period(core.store, core.facades, parse_period(month, None),
                                   core.grounds,
                                   core.settings.config_dir, core.settings.zone,
                                   tmp_path / "month", key=key)
    assert n == 1  # March's fixture is not this month's
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["month"] == month and list(manifest["fixture_manifests"]) == [
        f"{fx.id}/manifest.json"]
    assert signature_ok(public_hex(key), manifest["signature"], signed_part(manifest))
    assert verify_dir(folder / fx.id, key=public_hex(key)).ok
    with (folder / "period.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert (row["fixture"], row["incidents"], row["severity_4_plus"]) == (fx.id, "1", "1")
    assert len(pdfium.PdfDocument(folder / "period.pdf")) == 1
    for bad in (("2026-13", None), (None, "2026-28"), (None, "26-27")):
        with pytest.raises(ValueError, match="takes"):
            parse_period(*bad)
