"""The per-steward record for the club (issue 24 §2): `matchday stewards --fixture X --csv`
writes, per rota steward, the fixture, tabard, rota name, post, check-in and stand-down times
and the briefing version they signed off, as stewards.csv under an Ed25519-signed manifest;
nothing beyond the rota's own data (no platform account); a bad season is one line."""

from __future__ import annotations

import csv
import io
import json

from bot.domain.ledger import Event
from bot.evidence.export import file_sha, signed_part
from bot.evidence.signing import signature_ok
from bot.store.stewarding_keys import Stewarding
from tests.support.cli import matchday

ROTA = "steward id,name,post\n311,A. Steward,stb_250_gangway\n312,B. Steward,gate_b_lane_1\n"


async def test_the_club_gets_each_stewards_duty_signed(say, core, store, redis_url,
                                                       tmp_path) -> None:
    fx = (await core.active_fixture()).id  # type: ignore[union-attr]
    await say("/deploy import\n" + ROTA, as_="control")
    assert "tabard 311" in (await say("/tabard 311", as_="steward")).reply.text
    await say("/onpost stb_250_gangway", as_="steward")
    await say("/briefing", as_="steward")
    version, _ = await Stewarding(store.gateway).briefing_acks(fx)
    await say(f"/briefed {version}", as_="steward")
    # the stand-down as /standdown logs it
    await store.log_once(fx, Event("steward.standdown", "2026-12-02T23:10:00+00:00",
                                   "console:steward", "steward", {"who": ["console:steward"]}),
                         [], "test:standdown")

    out = tmp_path / "record"
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}
    p = matchday("stewards", "--fixture", fx, "--csv", "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [(r["tabard"], r["name"], r["post_name"]) for r in rows] == [
        ("311", "A. Steward", "Block 250 gangway"), ("312", "B. Steward", "Gate B search lane 1")]
    a, b = rows
    assert a["checked_in"] and a["stood_down"] == "2026-12-02T23:10:00+00:00"
    assert a["briefing_version"] == version and a["briefing_signed_off"]
    assert b["checked_in"] == b["stood_down"] == b["briefing_version"] == ""  # never came
    assert "console:" not in p.stdout and "2 steward duties" in p.stderr

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["fixture"] == fx and manifest["rows"] == 2
    assert manifest["files"]["stewards.csv"] == file_sha(out / "stewards.csv")
    assert signature_ok(manifest["public_key"], manifest["signature"], signed_part(manifest))
    (out / "stewards.csv").write_text((out / "stewards.csv").read_text().replace("311", "313"))
    assert manifest["files"]["stewards.csv"] != file_sha(out / "stewards.csv")  # edits show

    whole = (await core.active_fixture()).season  # type: ignore[union-attr]
    p = matchday("stewards", "--season", whole, "--out", str(tmp_path / "season"), env=env)
    assert p.returncode == 0 and "2 steward duties of 1 fixture(s)" in p.stdout, p.stderr
    season = matchday("stewards", "--season", "2026", env=env)
    assert season.returncode == 2 and "--season takes YYYY-YY" in season.stderr
    assert "Traceback" not in season.stderr
